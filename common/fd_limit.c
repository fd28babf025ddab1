#include "fd_limit.h"

#include "log.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

void fd_limit_raise(const char *who)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            log_warn("%s: cannot raise the open files limit: %s", who, strerror(errno));
    }
}
