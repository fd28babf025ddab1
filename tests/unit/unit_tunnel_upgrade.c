/* Unit tests of tunneld/upgrade.c: the request nginx hands corral-tunneld,
 * as an attacker would shape it (decision 0087). */
#include "check.h"
#include "upgrade.h"

#include <stdio.h>
#include <string.h>

void unit_tunnel_upgrade(int *total_passed, int *total_failed);

CHECK_COUNTERS;

#define W "0123456789abcdef0123456789abcdef"
#define P "fedcba9876543210fedcba9876543210"
#define LINE "GET /v1/worker/tunnel HTTP/1.1\r\n"
#define UP "Upgrade: corral-tunnel/1\r\n"

static int parses(const char *head, struct upgrade_req *r)
{
    char why[160] = "";
    int st = upgrade_parse(head, strlen(head), r, why, sizeof(why));

    if (st != 0)
        fprintf(stderr, "  refused \"%s\": %s\n", head, why);
    return st == 0;
}

static int refused(const char *head, const char *want)
{
    struct upgrade_req r;
    char why[160] = "";
    int st = upgrade_parse(head, strlen(head), &r, why, sizeof(why));

    return st == 400 && strstr(why, want) != NULL;
}

static void test_good(void)
{
    struct upgrade_req r;

    CHECK(parses(LINE "Host: x\r\n" UP "Connection: upgrade\r\nX-Corral-Tunnel-Worker: " W
                      "\r\nX-Corral-Tunnel-Pool: " P "\r\n\r\n",
                 &r));
    CHECK(strcmp(r.worker, W) == 0 && strcmp(r.pool, P) == 0);
    /* the shared fleet's pool is "fleet" (nginx drops an empty header); header
     * names in any case; an empty pool is refused */
    CHECK(parses(LINE "upgrade: CORRAL-TUNNEL/1\r\nx-corral-tunnel-worker: " W
                      "\r\nx-corral-tunnel-pool: fleet\r\n\r\n",
                 &r));
    CHECK(strcmp(r.worker, W) == 0 && r.pool[0] == '\0');
    CHECK(refused(LINE UP "X-Corral-Tunnel-Worker: " W "\r\nX-Corral-Tunnel-Pool:\r\n\r\n",
                  "malformed or repeated"));
    /* ids as corral-api makes them: 16 hex digits */
    CHECK(parses(LINE UP "X-Corral-Tunnel-Worker: 24c6d6eb9dd8e91c\r\nX-Corral-Tunnel-Pool: "
                         "0a1b2c3d4e5f6a7b\r\n\r\n",
                 &r));
    CHECK(strcmp(r.worker, "24c6d6eb9dd8e91c") == 0 && strcmp(r.pool, "0a1b2c3d4e5f6a7b") == 0);
}

static void test_refused(void)
{
    CHECK(refused("POST /v1/worker/tunnel HTTP/1.1\r\n" UP "\r\n", "not GET"));
    CHECK(refused("GET /v1/worker/tunnel/../x HTTP/1.1\r\n\r\n", "not GET"));
    CHECK(refused(LINE UP "X-Corral-Tunnel-Worker: " W "\r\nX-Corral-Tunnel-Pool: " P "\r\n",
                  "not GET")); /* no blank line: not a whole head */
    /* nginx sets the worker from its auth_request: without it, nothing */
    CHECK(refused(LINE UP "X-Corral-Tunnel-Pool: " P "\r\n\r\n", "are required"));
    CHECK(refused(LINE "X-Corral-Tunnel-Worker: " W "\r\nX-Corral-Tunnel-Pool: " P "\r\n\r\n",
                  "are required"));
    CHECK(refused(LINE "Upgrade: websocket\r\nX-Corral-Tunnel-Worker: " W
                       "\r\nX-Corral-Tunnel-Pool: " P "\r\n\r\n",
                  "malformed or repeated"));
    /* a second worker header (a forged one beside nginx's) is refused, not chosen */
    CHECK(refused(LINE UP "X-Corral-Tunnel-Worker: " W "\r\nX-Corral-Tunnel-Worker: " P
                          "\r\nX-Corral-Tunnel-Pool: " P "\r\n\r\n",
                  "malformed or repeated"));
    CHECK(refused(LINE UP "X-Corral-Tunnel-Worker: ../../etc\r\nX-Corral-Tunnel-Pool: " P
                          "\r\n\r\n",
                  "malformed or repeated"));
    CHECK(refused(LINE UP "X-Corral-Tunnel-Worker: " W "\r\nX-Corral-Tunnel-Pool: " P "0\r\n\r\n",
                  "malformed or repeated"));
    {
        char head[] =
            LINE UP "X-Corral-Tunnel-Worker: " W "\r\nX-Corral-Tunnel-Pool: " P "\r\n\r\n";
        struct upgrade_req r;
        char why[160];

        head[40] = '\0'; /* a NUL inside the head */
        CHECK(upgrade_parse(head, sizeof(head) - 1, &r, why, sizeof(why)) == 400);
    }
    CHECK(!upgrade_head_done("GET", 3) && upgrade_head_done("x\r\n\r\n", 5));
}

void unit_tunnel_upgrade(int *total_passed, int *total_failed)
{
    test_good();
    test_refused();
    *total_passed += passed;
    *total_failed += failed;
}
