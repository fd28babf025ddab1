/* Unit tests of the metrics thread's pure parts (decision 0047): Docker's log
 * stream de-framing, a timestamped log line, stats JSON to a sample, the CPU
 * percentage from two readings, a sandbox's cpu count, a log line made safe
 * for JSON, and the running sandboxes the thread samples. */
#include "check.h"
#include "docker_logs.h"
#include "sandbox_sample.h"
#include "sbtable.h"
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void unit_telemetry(int *total_passed, int *total_failed);

static int passed, failed;

static size_t frame(char *out, int stream, const char *payload)
{
    size_t n = strlen(payload);

    out[0] = (char)stream, out[1] = out[2] = out[3] = 0;
    out[4] = (char)(n >> 24), out[5] = (char)(n >> 16), out[6] = (char)(n >> 8), out[7] = (char)n;
    memcpy(out + 8, payload, n);
    return n + 8;
}

static void test_demux(void)
{
    char in[256], out[256], small[8];
    size_t len = frame(in, 1, "2026-12-01T10:00:00Z a\n");

    len += frame(in + len, 2, "2026-12-01T10:00:01Z b\n");
    docker_demux(in, len, out, sizeof(out));
    CHECK(strcmp(out, "2026-12-01T10:00:00Z a\n2026-12-01T10:00:01Z b\n") == 0);
    docker_demux(in, len - 5, out, sizeof(out)); /* the last frame cut short */
    CHECK(strcmp(out, "2026-12-01T10:00:00Z a\n2026-12-01T10:00:0") == 0);
    docker_demux(in, len, small, sizeof(small)); /* bounded by the output */
    CHECK(strcmp(small, "2026-12") == 0);
    docker_demux(in, 5, out, sizeof(out)); /* not even a header */
    CHECK(out[0] == '\0');
}

static void test_log_line(void)
{
    long long ns = 0;
    const char *text = NULL;

    CHECK(docker_log_line("2026-12-01T10:00:00.123456789Z hello world", &ns, &text) == 0);
    CHECK(ns == 1796119200123456789LL && strcmp(text, "hello world") == 0);
    CHECK(docker_log_line("2026-12-01T10:00:00.5Z x", &ns, &text) == 0);
    CHECK(ns == 1796119200500000000LL && strcmp(text, "x") == 0);
    CHECK(docker_log_line("2026-12-01T10:00:00Z", &ns, &text) == 0 && text[0] == '\0');
    CHECK(docker_log_line("1970-01-01T00:00:01.000000001Z y", &ns, &text) == 0 && ns == 1000000001);
    CHECK(docker_log_line("no time here", &ns, &text) == -1);
    CHECK(docker_log_line("2026-12-01T10:00:00+02:00 x", &ns, &text) == -1);
    CHECK(docker_log_line("2026-12-01T10:00:00.1Zx", &ns, &text) == -1);
}

static void test_stats(void)
{
    struct stats_sample s;
    json_t *v2 = json_loads("{\"cpu_stats\":{\"cpu_usage\":{\"total_usage\":5000000000},"
                            "\"online_cpus\":2},\"memory_stats\":{\"usage\":300,\"limit\":1000,"
                            "\"stats\":{\"inactive_file\":100,\"file\":120}}}",
                            0, NULL);
    json_t *v1 = json_loads("{\"cpu_stats\":{\"cpu_usage\":{\"total_usage\":7}},"
                            "\"memory_stats\":{\"usage\":300,\"limit\":1000,"
                            "\"stats\":{\"total_inactive_file\":50,\"cache\":60}}}",
                            0, NULL);
    json_t *stopped = json_loads("{\"cpu_stats\":{},\"memory_stats\":{}}", 0, NULL);

    CHECK(stats_parse(v2, &s) == 0 && s.cpu_ns == 5000000000LL && s.online_cpus == 2);
    CHECK(s.mem_used == 200 && s.mem_total == 1000 && s.mem_cache == 120);
    CHECK(stats_parse(v1, &s) == 0 && s.cpu_ns == 7 && s.mem_used == 250 && s.mem_cache == 60);
    CHECK(stats_parse(stopped, &s) == -1);
    json_decref(v2);
    json_decref(v1);
    json_decref(stopped);
}

static void test_cpu(void)
{
    const long long sec = 1000000000LL;

    CHECK(stats_cpu_pct(0, sec, sec, 2) == 50.0);        /* one of two cpus busy */
    CHECK(stats_cpu_pct(sec, 3 * sec, sec, 2) == 100.0); /* both */
    CHECK(stats_cpu_pct(0, 10 * sec, sec, 2) == 100.0);  /* capped */
    CHECK(stats_cpu_pct(5, 5, sec, 1) == 0.0);           /* idle */
    CHECK(stats_cpu_pct(9, 5, sec, 1) == 0.0);           /* counter went back: a restart */
    CHECK(stats_cpu_pct(0, sec, 0, 1) == 0.0);
    CHECK(stats_cpu_count(1500000000LL, 8) == 2);
    CHECK(stats_cpu_count(1000000000LL, 8) == 1);
    CHECK(stats_cpu_count(0, 8) == 8 && stats_cpu_count(0, 0) == 1);
}

static void test_line_json(void)
{
    char big[3000], bad[] = "ok \xff\xfe end";
    json_t *j;

    memset(big, 'a', sizeof(big));
    big[SAMPLE_LINE_MAX - 1] = (char)0xc3; /* é across the cut */
    big[SAMPLE_LINE_MAX] = (char)0xa9;
    j = sample_line_json(big, sizeof(big));
    CHECK(j && json_string_length(j) == SAMPLE_LINE_MAX - 1);
    json_decref(j);
    j = sample_line_json(bad, strlen(bad));
    CHECK(j && strcmp(json_string_value(j), "ok ?? end") == 0);
    json_decref(j);
}

static void test_running_ids(void)
{
    struct sbtable t;
    struct ctr_state a = {.sbid = "aaaa", .state = SB_RUNNING},
                     b = {.sbid = "bbbb", .state = SB_EXITED, .reason = "exit code 0"},
                     c = {.sbid = "cccc", .state = SB_RUNNING};
    char ids[4][CTR_ID_MAX];

    sbtable_init(&t);
    sbtable_put(&t, &a);
    sbtable_put(&t, &b);
    sbtable_put(&t, &c);
    CHECK(sbtable_running_ids(&t, ids, 4) == 2 && strcmp(ids[0], "aaaa") == 0 &&
          strcmp(ids[1], "cccc") == 0);
    CHECK(sbtable_running_ids(&t, ids, 1) == 1);
    sbtable_free(&t);
}

void unit_telemetry(int *total_passed, int *total_failed)
{
    test_demux();
    test_log_line();
    test_stats();
    test_cpu();
    test_line_json();
    test_running_ids();
    *total_passed += passed;
    *total_failed += failed;
}
