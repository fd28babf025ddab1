/* Unit tests of common/rcluster.c: key slots (checked against Redis's own
 * CLUSTER KEYSLOT), the key a command is routed by, and MOVED/ASK replies
 * (decision 0059). */
#include "check.h"
#include "rcluster.h"

#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void unit_rcluster(int *total_passed, int *total_failed);

static int passed, failed;

static unsigned slot(const char *key)
{
    return rcluster_keyslot(key, strlen(key));
}

static void test_slots(void)
{
    CHECK(slot("somekey") == 11058 && slot("foo") == 12182);
    CHECK(slot("{user1000}.following") == 3443 && slot("{user1000}.followers") == 3443);
    CHECK(slot("foo{}{bar}") == 8363);    /* an empty tag: the whole key */
    CHECK(slot("foo{{bar}}zap") == 4015); /* the tag is "{bar" */
    CHECK(slot("foo{bar}{zap}") == 5061); /* the first tag only */
    /* the slot of Corral's keys is their workspace tag's (store/keys.h) */
    CHECK(slot("acct:{ws:0a1b}:sbs") == 9963 && slot("acct:{ws:0a1b}:sb:1") == 9963);
    CHECK(slot("") < RCLUSTER_SLOTS && slot("{") == rcluster_keyslot("{", 1));
}

/* The key hiredis's formatting of argv is routed by, or "" for none. */
static void key_of(int argc, const char **argv, char *out, size_t outlen)
{
    char *buf = NULL;
    long long len = redisFormatCommandArgv(&buf, argc, argv, NULL);
    const char *k;
    size_t klen;

    out[0] = '\0';
    if (len > 0 && rcluster_command_key(buf, (size_t)len, &k, &klen) == 0 && klen < outlen) {
        memcpy(out, k, klen);
        out[klen] = '\0';
    }
    redisFreeCommand(buf);
}

static void test_command_keys(void)
{
    char k[64];
    const char *get[] = {"HGETALL", "acct:{ws:a}:sb:1"};
    const char *eval[] = {"EVALSHA", "abc", "2", "acct:{ws:b}:x", "acct:{ws:b}:y", "arg"};
    const char *eval0[] = {"EVAL", "return 1", "0", "arg"};
    const char *xrg[] = {"XREADGROUP", "GROUP", "g", "c", "BLOCK", "100", "STREAMS", "s:{w}", ">"};
    const char *ping[] = {"PING"};
    const char *wait[] = {"WAIT", "1", "250"};

    key_of(2, get, k, sizeof(k));
    CHECK(strcmp(k, "acct:{ws:a}:sb:1") == 0);
    key_of(6, eval, k, sizeof(k));
    CHECK(strcmp(k, "acct:{ws:b}:x") == 0);
    key_of(4, eval0, k, sizeof(k));
    CHECK(k[0] == '\0');
    key_of(9, xrg, k, sizeof(k));
    CHECK(strcmp(k, "s:{w}") == 0);
    key_of(1, ping, k, sizeof(k));
    CHECK(k[0] == '\0');
    key_of(3, wait, k, sizeof(k));
    CHECK(k[0] == '\0');
    /* bytes that are not a whole command route nowhere */
    const char *key;
    size_t klen;
    CHECK(rcluster_command_key("*2\r\n$3\r\nGET\r\n$9\r\nabc", 23, &key, &klen) != 0);
    CHECK(rcluster_command_key("GET abc\r\n", 9, &key, &klen) != 0);
    CHECK(rcluster_command_key("*-1\r\n", 5, &key, &klen) != 0);
}

static void test_redirects(void)
{
    char host[64];
    int ask, s, port;

    CHECK(rcluster_redirect("MOVED 3999 127.0.0.1:6381", &ask, &s, host, sizeof(host), &port) ==
              0 &&
          !ask && s == 3999 && strcmp(host, "127.0.0.1") == 0 && port == 6381);
    CHECK(rcluster_redirect("ASK 12 10.0.0.2:7000", &ask, &s, host, sizeof(host), &port) == 0 &&
          ask && s == 12 && port == 7000);
    CHECK(rcluster_redirect("MOVED 1 ::1:6380", &ask, &s, host, sizeof(host), &port) == 0 &&
          strcmp(host, "::1") == 0 && port == 6380);
    CHECK(rcluster_redirect("ERR wrong", &ask, &s, host, sizeof(host), &port) != 0);
    CHECK(rcluster_redirect("MOVED 16384 h:1", &ask, &s, host, sizeof(host), &port) != 0);
    CHECK(rcluster_redirect("MOVED 1 h:0", &ask, &s, host, sizeof(host), &port) != 0);
    CHECK(rcluster_redirect("MOVED 1 nocolon", &ask, &s, host, sizeof(host), &port) != 0);
    CHECK(rcluster_redirect("MOVED 1 :6379", &ask, &s, host, sizeof(host), &port) != 0);
}

static void test_nodes(void)
{
    static struct rcluster cl;
    char h[16];

    CHECK(rcluster_node_index(&cl, "a", 1) == 0 && rcluster_node_index(&cl, "b", 1) == 1);
    CHECK(rcluster_node_index(&cl, "a", 1) == 0 && cl.n == 2);
    for (int i = 2; i < RCLUSTER_NODES; i++) {
        snprintf(h, sizeof(h), "n%d", i);
        CHECK(rcluster_node_index(&cl, h, 1) == i);
    }
    CHECK(rcluster_node_index(&cl, "full", 1) == -1);
}

void unit_rcluster(int *total_passed, int *total_failed)
{
    test_slots();
    test_command_keys();
    test_redirects();
    test_nodes();
    *total_passed += passed;
    *total_failed += failed;
}
