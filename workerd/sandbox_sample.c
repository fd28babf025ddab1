#include "sandbox_sample.h"

#include "clock.h"
#include "docker_logs.h"
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Sizing the writable layer walks its files: once a minute is enough for a
 * number that moves slowly, and keeps the sampling cheap (decision 0047). */
#define DISK_EVERY_MS 60000
#define CALL_TIMEOUT_MS 5000

static long long mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static json_t *get_json(struct docker *d, const char *path)
{
    json_t *ans = NULL;
    long status = 0;
    char err[256];

    if (docker_call(d, "GET", path, NULL, CALL_TIMEOUT_MS, &status, &ans, err, sizeof(err)) != 0)
        return NULL;
    if (status != 200) {
        json_decref(ans);
        return NULL;
    }
    return ans;
}

/* cpu count, disk limit and the writable layer's size, every DISK_EVERY_MS. */
static void inspect(struct docker *d, const char *name, struct sample_state *s)
{
    char path[256];
    long long now = clock_now_ms();
    json_t *c, *hc;
    const char *disk_mb;

    if (s->disk_at_ms && now - s->disk_at_ms < DISK_EVERY_MS)
        return;
    snprintf(path, sizeof(path), "/containers/%s/json?size=1", name);
    c = get_json(d, path);
    if (!c)
        return;
    hc = json_object_get(c, "HostConfig");
    s->cpu_count = stats_cpu_count(json_integer_value(json_object_get(hc, "NanoCpus")), 0);
    disk_mb = json_string_value(
        json_object_get(json_object_get(json_object_get(c, "Config"), "Labels"), "corral.disk_mb"));
    s->disk_total = disk_mb ? atoll(disk_mb) * 1024 * 1024 : 0;
    s->disk_used = json_integer_value(json_object_get(c, "SizeRw"));
    s->disk_at_ms = now;
    json_decref(c);
}

static json_t *metric(struct docker *d, const char *name, struct sample_state *s)
{
    char path[256];
    struct stats_sample st;
    json_t *ans, *m = NULL;
    long long at;

    snprintf(path, sizeof(path), "/containers/%s/stats?stream=false&one-shot=true", name);
    ans = get_json(d, path);
    at = mono_ns();
    if (!ans || stats_parse(ans, &st) != 0) {
        json_decref(ans);
        return NULL;
    }
    json_decref(ans);
    if (s->cpu_count <= 0)
        s->cpu_count = stats_cpu_count(0, st.online_cpus);
    if (s->prev_at_ns)
        m = json_pack("{s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:I}", "ts_ms",
                      (json_int_t)clock_now_ms(), "cpu_count", (json_int_t)s->cpu_count,
                      "cpu_used_pct",
                      stats_cpu_pct(s->prev_cpu_ns, st.cpu_ns, at - s->prev_at_ns, s->cpu_count),
                      "mem_used", (json_int_t)st.mem_used, "mem_total", (json_int_t)st.mem_total,
                      "mem_cache", (json_int_t)st.mem_cache, "disk_used", (json_int_t)s->disk_used,
                      "disk_total", (json_int_t)s->disk_total);
    s->prev_cpu_ns = st.cpu_ns;
    s->prev_at_ns = at;
    return m;
}

json_t *sample_line_json(const char *text, size_t len)
{
    char buf[SAMPLE_LINE_MAX];
    json_t *j;

    if (len > SAMPLE_LINE_MAX)
        len = SAMPLE_LINE_MAX;
    /* A cut inside a UTF-8 sequence leaves at most 3 bytes of it. */
    for (size_t cut = 0; cut < 4 && cut < len; cut++)
        if ((j = json_stringn(text, len - cut)))
            return j;
    memcpy(buf, text, len);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)buf[i] >= 0x80 || buf[i] == '\0')
            buf[i] = '?';
    return json_stringn(buf, len);
}

/* The lines of the demuxed log text newer than s->log_ns, within *budget. */
static json_t *lines_of(char *text, struct sample_state *s, size_t *budget)
{
    json_t *out = json_array();
    char *save = NULL;

    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        long long ns;
        const char *msg;
        size_t len;
        if (docker_log_line(l, &ns, &msg) != 0 || ns <= s->log_ns)
            continue;
        len = strlen(msg);
        if (json_array_size(out) >= SAMPLE_LINES_MAX || len + 64 > *budget)
            break;
        *budget -= len + 64;
        json_array_append_new(out, json_pack("{s:I, s:o}", "ts_ns", (json_int_t)ns, "line",
                                             sample_line_json(msg, len)));
        s->log_next_ns = ns;
    }
    return out;
}

static json_t *new_lines(struct docker *d, const char *name, struct sample_state *s, size_t *budget)
{
    char path[320], err[256], *raw = NULL, *text;
    size_t len = 0;
    long status = 0;
    json_t *out = NULL;

    /* Nothing of this push is counted as sent unless read below. */
    s->log_next_ns = s->log_ns;
    /* since is inclusive, to the second's fraction: lines at log_ns come
     * again and are skipped. tail bounds a burst. */
    snprintf(path, sizeof(path),
             "/containers/%s/logs?stdout=1&stderr=1&timestamps=1&tail=%d&since=%lld.%09lld", name,
             SAMPLE_LINES_MAX, s->log_ns / 1000000000LL, s->log_ns % 1000000000LL);
    if (docker_call_raw(d, "GET", path, CALL_TIMEOUT_MS, &status, &raw, &len, err, sizeof(err)) !=
        0)
        return NULL;
    text = status == 200 ? malloc(len + 1) : NULL;
    if (text) {
        docker_demux(raw, len, text, len + 1);
        out = lines_of(text, s, budget);
    }
    free(text);
    free(raw);
    return out;
}

json_t *sample_sandbox(struct docker *d, const char *wid, struct sample_state *s, size_t *budget)
{
    char name[160];
    json_t *m, *logs;

    containers_name(name, sizeof(name), s->sbid, wid);
    inspect(d, name, s);
    m = metric(d, name, s);
    logs = new_lines(d, name, s, budget);
    if (!m && json_array_size(logs) == 0) {
        json_decref(logs);
        return NULL;
    }
    return json_pack("{s:s, s:o*, s:o}", "id", s->sbid, "metric", m, "logs",
                     logs ? logs : json_array());
}
