/* docker_logs.h: a container's log as the Engine API's /logs answers it
 * (pure). A container without a TTY (every sandbox and probe) sends frames:
 * an 8-byte header (stream, 0, 0, 0, big-endian length) then the bytes. */
#ifndef WORKERD_DOCKER_LOGS_H
#define WORKERD_DOCKER_LOGS_H

#include <stddef.h>

/* The payloads of in's frames, concatenated and NUL-terminated into out (cut
 * at outlen - 1). A frame cut short by the end of in keeps what came. */
void docker_demux(const char *in, size_t len, char *out, size_t outlen);

/* One line of a `timestamps=1` log: "2026-12-01T10:00:00.123456789Z text".
 * 0 with *ns (since the epoch) and *text pointing into line, -1 when it does
 * not start with such a time. */
int docker_log_line(const char *line, long long *ns, const char **text);

#endif
