/* Unit tests of store/worker_store.c's slot value, "ws cpu mem since": the
 * empty workspace (a leading space) round-trips, and what is not a slot value
 * is refused rather than half read. */
#include "check.h"
#include "worker_store.h"

#include <stdio.h>
#include <string.h>

void unit_worker_slot(int *total_passed, int *total_failed);

static int passed, failed;

static int round_trips(const char *ws, double cpu, long mem, long long since)
{
    struct worker_slot in = {.cpu = cpu, .mem = mem, .since_ms = since}, out;
    char text[160];

    snprintf(in.ws, sizeof(in.ws), "%s", ws);
    return worker_slot_encode(&in, text, sizeof(text)) == 0 &&
           worker_slot_decode(text, &out) == 0 && strcmp(out.ws, ws) == 0 && out.cpu == cpu &&
           out.mem == mem && out.since_ms == since;
}

static void test_round_trip(void)
{
    struct worker_slot s = {.cpu = 1, .mem = 1};
    char small[8];

    CHECK(round_trips("0a1b2c3d", 0.5, 512, 1764570000123LL));
    CHECK(round_trips("", 2, 1024, 1));
    CHECK(round_trips("ffffffffffffffffffffffffffffffff", 0.125, 0, 0));
    CHECK(worker_slot_encode(&s, small, sizeof(small)) == -1);
    CHECK(worker_slot_decode(" 0.500 512 99", &s) == 0 && s.ws[0] == '\0' && s.mem == 512 &&
          s.since_ms == 99);
}

static void test_malformed(void)
{
    static const char *const bad[] = {"",
                                      "ws",
                                      "ws 1 2",
                                      "ws 1 2 x",
                                      "ws x 2 3",
                                      "ws 1 2 3 ",
                                      "ws  1 2 3",
                                      "ws 1 2 3 4",
                                      NULL,
                                      "ws 1.5 2.5 3",
                                      "0123456789abcdef0123456789abcdef0 1 2 3"};
    struct worker_slot s;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&s, 0x55, sizeof(s));
        CHECK(worker_slot_decode(bad[i], &s) == -1 && s.ws[0] == '\0' && s.since_ms == 0);
    }
}

void unit_worker_slot(int *total_passed, int *total_failed)
{
    test_round_trip();
    test_malformed();
    *total_passed += passed;
    *total_failed += failed;
}
