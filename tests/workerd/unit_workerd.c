/* Unit tests of workerd's pure functions: backoff, the gVisor probe's verdict,
 * sandbox ids, configuration. Prints "N passed, N failed". */
#include "check.h"
#include "containers.h"
#include "probe.h"
#include "worker.h"
#include "worker_conf.h"

#include <stdio.h>
#include <string.h>

CHECK_COUNTERS;

static void test_backoff(void)
{
    struct backoff b;
    long prev_cap = 0;

    backoff_init(&b, 100, 1000);
    for (int i = 0; i < 10; i++) {
        long cap = b.cur_ms, d = backoff_next(&b);
        CHECK(d >= cap / 2 && d <= cap); /* jitter within the current step */
        CHECK(b.cur_ms <= 1000);         /* capped */
        prev_cap = cap;
    }
    CHECK(prev_cap == 1000);
    backoff_reset(&b);
    CHECK(b.cur_ms == 100);
}

static void test_probe(void)
{
    const char *host = "6.1.0-28-amd64";

    CHECK(probe_output_is_gvisor("Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016\n"
                                 "[   0.000000] Starting gVisor...\n",
                                 host));
    CHECK(!probe_output_is_gvisor("Linux version 6.1.0-28-amd64 (debian-kernel@...) gVisor", host));
    CHECK(!probe_output_is_gvisor("Linux version 4.4.0 no guest marker", host));
    CHECK(!probe_output_is_gvisor("", host) && !probe_output_is_gvisor(NULL, host));
}

static void test_ids(void)
{
    CHECK(containers_id_ok("0123456789abcdef0123"));
    CHECK(!containers_id_ok("") && !containers_id_ok("../x") && !containers_id_ok("a b"));
}

static void test_conf(void)
{
    struct worker_conf c;
    char err[256];

    wconf_defaults(&c);
    CHECK(wconf_set(&c, "slots", "8", err, sizeof(err)) == 0 && c.slots == 8);
    CHECK(wconf_set(&c, "slots", "zero", err, sizeof(err)) != 0 && err[0] != '\0');
    CHECK(wconf_set(&c, "no_such_key", "1", err, sizeof(err)) != 0);
    CHECK(wconf_set(&c, "template.base", "corral/base", err, sizeof(err)) == 0);
    CHECK(wconf_template(&c, "base") != NULL && wconf_template(&c, "other") == NULL);
    wconf_free(&c);
}

int main(void)
{
    test_backoff();
    test_probe();
    test_ids();
    test_conf();
    return CHECK_SUMMARY();
}
