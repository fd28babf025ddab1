/*
 * Only the asking connection thread waits: envd serves every connection on
 * its own thread and no gate lock is held while a question is open, so the
 * sandbox's other requests go on. The flock is taken on a descriptor of this
 * question's own, so it also keeps two threads of one envd apart.
 */
#include "gate_ask.h"
#include "envd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <termios.h>
#include <unistd.h>

#define ANSWER_MAX 256

static const char prompt[] = "allow [o]nce, for the [s]ession, [a]lways, or [d]eny? ";

/* Takes the lock before the deadline. -1 on timeout or error. */
static int lock_until(int fd, long long deadline)
{
    while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        if (errno != EWOULDBLOCK || envd_now_ms() >= deadline)
            return -1;
        usleep(20 * 1000);
    }
    return 0;
}

static int say(int fd, const char *s)
{
    size_t n = strlen(s);
    return write(fd, s, n) == (ssize_t)n ? 0 : -1;
}

static enum gate_reply parse_answer(const char *line)
{
    if (strcmp(line, "o") == 0)
        return GR_ONCE;
    if (strcmp(line, "s") == 0)
        return GR_SESSION;
    if (strcmp(line, "a") == 0)
        return GR_ALWAYS;
    if (strcmp(line, "d") == 0)
        return GR_DENY;
    return GR_TIMEOUT; /* not an answer: ask again */
}

/* Reads one line (without its end) before the deadline. 1 a line, 0 timeout, -1 error. */
static int read_line(int fd, char *line, size_t sz, long long deadline)
{
    size_t len = 0;

    for (;;) {
        long long left = deadline - envd_now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        char c;
        if (left <= 0)
            return 0;
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r;
        ssize_t n = read(fd, &c, 1);
        if (n <= 0)
            return -1;
        if (c == '\n' || c == '\r') {
            line[len] = '\0';
            return 1;
        }
        if (len + 1 < sz)
            line[len++] = c;
    }
}

static enum gate_reply converse(int tty, const char *question, long long deadline)
{
    char line[ANSWER_MAX];

    /* Keys typed before the question must not answer it. */
    tcflush(tty, TCIFLUSH);
    if (say(tty, "\n") < 0 || say(tty, question) < 0 || say(tty, "\n") < 0)
        return GR_DENY;
    for (;;) {
        if (say(tty, prompt) < 0)
            return GR_DENY;
        int r = read_line(tty, line, sizeof(line), deadline);
        if (r == 0) {
            say(tty, "\nno answer in time: denied\n");
            return GR_TIMEOUT;
        }
        if (r < 0)
            return GR_DENY;
        enum gate_reply reply = parse_answer(line);
        if (reply != GR_TIMEOUT)
            return reply;
    }
}

enum gate_reply gate_ask(const char *tty, const char *lock_file, int timeout_s,
                         const char *question)
{
    long long deadline = envd_now_ms() + (long long)timeout_s * 1000;
    int lock = open(lock_file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    enum gate_reply reply = GR_TIMEOUT;
    int fd;

    if (lock < 0) {
        envd_log("gate: cannot open %s: %s", lock_file, strerror(errno));
        return GR_DENY;
    }
    if (lock_until(lock, deadline) == 0) {
        fd = open(tty, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
            envd_log("gate: cannot open the terminal %s: %s", tty, strerror(errno));
            reply = GR_DENY;
        } else {
            reply = converse(fd, question, deadline);
            close(fd);
        }
    }
    close(lock); /* releases the flock */
    return reply;
}
