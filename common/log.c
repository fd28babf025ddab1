#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Ids are at most 64 characters; longer values are cut, never refused. */
#define LOG_VALUE_MAX 72

static const char *log_name = "corral";
static __thread char thread_ctx[LOG_NFIELDS][LOG_VALUE_MAX];
static char process_ctx[LOG_NFIELDS][LOG_VALUE_MAX];
static pthread_mutex_t process_lock = PTHREAD_MUTEX_INITIALIZER;

void log_set_name(const char *name)
{
    log_name = name;
}

static void copy_value(char *dst, const char *value)
{
    snprintf(dst, LOG_VALUE_MAX, "%s", value ? value : "");
}

void log_ctx_set(enum log_field f, const char *value)
{
    copy_value(thread_ctx[f], value);
}

void log_ctx_clear(void)
{
    memset(thread_ctx, 0, sizeof(thread_ctx));
}

void log_ctx_set_process(enum log_field f, const char *value)
{
    pthread_mutex_lock(&process_lock);
    copy_value(process_ctx[f], value);
    pthread_mutex_unlock(&process_lock);
}

/* One write per line so that lines from threads and processes sharing the
 * file (opened O_APPEND) do not interleave. */
static void write_line(const char *line, size_t len)
{
    while (len > 0) {
        ssize_t n = write(STDERR_FILENO, line, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        line += n;
        len -= (size_t)n;
    }
}

void log_vmsg(const char *level, const char *fmt, va_list ap)
{
    char msg[1024], line[4096];
    char process[LOG_NFIELDS][LOG_VALUE_MAX];
    struct log_line l = {.level = level, .service = log_name, .pid = (int)getpid(), .msg = msg};

    vsnprintf(msg, sizeof(msg), fmt, ap);
    clock_gettime(CLOCK_REALTIME, &l.when);
    pthread_mutex_lock(&process_lock);
    memcpy(process, process_ctx, sizeof(process));
    pthread_mutex_unlock(&process_lock);
    for (int f = 0; f < LOG_NFIELDS; f++)
        l.fields[f] = thread_ctx[f][0] ? thread_ctx[f] : process[f];
    write_line(line, log_format(line, sizeof(line), &l));
}

void log_msg(const char *level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_vmsg(level, fmt, ap);
    va_end(ap);
}

void log_about(const char *level, const struct log_about *a, const char *fmt, ...)
{
    const char *given[LOG_NFIELDS] = {[LOG_WORKSPACE] = a->workspace,
                                      [LOG_SANDBOX] = a->sandbox,
                                      [LOG_WORKER] = a->worker,
                                      [LOG_TIER] = a->tier};
    char saved[LOG_NFIELDS][LOG_VALUE_MAX];
    va_list ap;

    memcpy(saved, thread_ctx, sizeof(saved));
    for (int f = 0; f < LOG_NFIELDS; f++)
        if (given[f])
            copy_value(thread_ctx[f], given[f]);
    va_start(ap, fmt);
    log_vmsg(level, fmt, ap);
    va_end(ap);
    memcpy(thread_ctx, saved, sizeof(saved));
}
