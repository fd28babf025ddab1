#include "stderr_capture.h"

#include <stdlib.h>
#include <unistd.h>

#define CAPTURE_MAX 16384

char *stderr_capture(void (*fn)(void *), void *arg)
{
    int fds[2], saved = dup(STDERR_FILENO);
    char *buf = malloc(CAPTURE_MAX);
    size_t used = 0;
    ssize_t n;

    if (saved < 0 || !buf || pipe(fds) != 0) {
        free(buf);
        if (saved >= 0)
            close(saved);
        return NULL;
    }
    /* The lines under test are far below the pipe's buffer: no reader thread. */
    dup2(fds[1], STDERR_FILENO);
    close(fds[1]);
    fn(arg);
    dup2(saved, STDERR_FILENO);
    close(saved);
    while (used < CAPTURE_MAX - 1 && (n = read(fds[0], buf + used, CAPTURE_MAX - 1 - used)) > 0)
        used += (size_t)n;
    close(fds[0]);
    buf[used] = '\0';
    return buf;
}
