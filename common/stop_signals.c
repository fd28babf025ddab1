#include "stop_signals.h"

#include <signal.h>
#include <string.h>

int stop_signals_install(void (*on_stop)(int), int restart)
{
    struct sigaction sa, ignore;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sa.sa_flags = restart ? SA_RESTART : 0;
    sigemptyset(&sa.sa_mask);
    ignore = sa;
    ignore.sa_handler = SIG_IGN;
    if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0 ||
        sigaction(SIGPIPE, &ignore, NULL) != 0)
        return -1;
    return 0;
}
