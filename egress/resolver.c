#include "resolver.h"

#include "io.h"
#include "rules.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

char *resolver_question(const char *host, const struct ph_ref *refs, size_t n)
{
    json_t *q = json_pack("{s:s, s:[], s:[]}", "host", host, "secrets", "tokens");
    char *line = NULL;

    if (!q)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *list = json_object_get(q, ph_kind_key(refs[i].kind));
        bool seen = false;
        for (size_t j = 0; j < json_array_size(list) && !seen; j++)
            seen = strcmp(json_string_value(json_array_get(list, j)), refs[i].name) == 0;
        if (!seen)
            json_array_append_new(list, json_string(refs[i].name));
    }
    line = json_dumps(q, JSON_COMPACT);
    json_decref(q);
    return line;
}

static int dial_unix(const char *path, int64_t deadline)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -1;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 &&
        (errno != EINPROGRESS || io_wait(fd, POLLOUT, deadline) <= 0)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* One line, up to its newline, into a malloc'd string; NULL when late,
 * closed before it or too long. */
static char *read_line(int fd, int64_t deadline)
{
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);

    while (buf) {
        if (len + 1 == cap) {
            char *grown = cap < RESOLVER_ANSWER_MAX ? realloc(buf, cap * 2) : NULL;
            if (!grown)
                break;
            buf = grown;
            cap *= 2;
        }
        ssize_t r = recv(fd, buf + len, cap - 1 - len, 0);
        if (r > 0) {
            char *nl = memchr(buf + len, '\n', (size_t)r);
            len += (size_t)r;
            if (nl) {
                *nl = '\0';
                return buf;
            }
        } else if (r == 0 || (errno != EAGAIN && errno != EINTR) ||
                   io_wait(fd, POLLIN, deadline) <= 0) {
            break;
        }
    }
    free(buf);
    return NULL;
}

static json_t *exchange(int fd, const char *question, int64_t deadline, char *err, size_t errlen)
{
    char *line;
    json_t *ans;

    if (io_write_all(fd, question, strlen(question), deadline) != 0 ||
        io_write_all(fd, "\n", 1, deadline) != 0) {
        snprintf(err, errlen, "resolver: cannot send the question");
        return NULL;
    }
    if (!(line = read_line(fd, deadline))) {
        snprintf(err, errlen, "resolver: no answer within %d ms", RESOLVER_TIMEOUT_MS);
        return NULL;
    }
    ans = json_loads(line, 0, NULL);
    free(line);
    if (!json_is_object(ans) || json_object_get(ans, "error")) {
        snprintf(err, errlen, "resolver: %s", ans ? "refused" : "malformed answer");
        json_decref(ans);
        return NULL;
    }
    return ans;
}

json_t *resolver_send(const char *path, const char *line, char *err, size_t errlen)
{
    int64_t deadline = io_now_ms() + RESOLVER_TIMEOUT_MS;
    json_t *ans;
    int fd;

    if (!path[0]) {
        snprintf(err, errlen, "no resolver configured");
        return NULL;
    }
    if ((fd = dial_unix(path, deadline)) < 0) {
        snprintf(err, errlen, "resolver: cannot connect");
        return NULL;
    }
    ans = exchange(fd, line, deadline, err, errlen);
    close(fd);
    return ans;
}

json_t *resolver_ask(const char *path, const char *host, const struct ph_ref *refs, size_t n,
                     char *err, size_t errlen)
{
    char *question = resolver_question(host, refs, n);
    json_t *ans;

    if (!question) {
        snprintf(err, errlen, "resolver: out of memory");
        return NULL;
    }
    ans = resolver_send(path, question, err, errlen);
    free(question);
    return ans;
}

const char *resolver_value(json_t *answer, enum ph_kind kind, const char *name)
{
    json_t *v = json_object_get(json_object_get(answer, ph_kind_key(kind)), name);
    const char *s = json_string_value(v);

    if (!s || json_string_length(v) != strlen(s) || !rules_value_ok(s, strlen(s)))
        return NULL;
    return s;
}
