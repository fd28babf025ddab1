#include "netguard.h"

#include "sbnet.h"

#include <arpa/inet.h>
#include <nftables/libnftables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Destinations no sandbox may reach directly, whatever its policy. */
#define BLOCKED4                                                                                   \
    "0.0.0.0/8, 10.0.0.0/8, 100.64.0.0/10, 127.0.0.0/8, 169.254.0.0/16, 172.16.0.0/12, "           \
    "192.0.0.0/24, 192.168.0.0/16, 198.18.0.0/15, 224.0.0.0/3"
#define BLOCKED6 "::/127, ::ffff:0:0/96, 64:ff9b::/96, 2002::/16, fc00::/7, fe80::/10, ff00::/8"

static int is_v4(const char *s)
{
    struct in_addr a;
    return inet_pton(AF_INET, s, &a) == 1;
}

static int is_v6(const char *s)
{
    struct in6_addr a;
    return inet_pton(AF_INET6, s, &a) == 1;
}

static void add_server(struct netguard_dns *out, const char *s)
{
    if (is_v4(s) && strncmp(s, "127.", 4) != 0 && out->n4 < NETGUARD_MAX_DNS)
        snprintf(out->v4[out->n4++], sizeof(out->v4[0]), "%s", s);
    else if (is_v6(s) && strcmp(s, "::1") != 0 && out->n6 < NETGUARD_MAX_DNS)
        snprintf(out->v6[out->n6++], sizeof(out->v6[0]), "%s", s);
}

void netguard_parse_resolv(const char *text, struct netguard_dns *out)
{
    char line[256], addr[64];

    while (text && *text) {
        size_t n = strcspn(text, "\n");
        snprintf(line, sizeof(line), "%.*s", (int)(n < 255 ? n : 255), text);
        text += n + (text[n] == '\n');
        if (sscanf(line, " nameserver %63s", addr) == 1)
            add_server(out, addr);
    }
}

int netguard_parse_list(const char *list, struct netguard_dns *out, char *err, size_t errlen)
{
    char item[64];

    while (list && *list) {
        size_t n = strcspn(list, ", ");
        if (n > 0) {
            snprintf(item, sizeof(item), "%.*s", (int)(n < 63 ? n : 63), list);
            if (n > 63 || (!is_v4(item) && !is_v6(item))) {
                snprintf(err, errlen, "%.64s: not an IP address", item);
                return -1;
            }
            add_server(out, item);
        }
        list += n + (list[n] != '\0');
    }
    return 0;
}

/* "set dns4 { type ipv4_addr; elements = { a, b } }" or without elements;
 * flags (may be "") before them. */
static void addr_set(FILE *f, const char *name, const char *type, const char *flags,
                     const char (*addrs)[64], int n)
{
    fprintf(f, "  set %s { type %s;%s", name, type, flags);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%s", i == 0 ? " elements = { " : ", ", addrs[i]);
    fprintf(f, "%s }\n", n > 0 ? " }" : "");
}

/* Routed traffic from a sandbox bridge: a packet whose destination's route
 * leaves by another interface than the one it came in on. Bridged traffic
 * (a sandbox and its proxy on their own bridge) is seen by this hook too when
 * br_netfilter is loaded (Docker loads it); its destination is on its bridge. */
#define ROUTED "fib daddr . iif oif missing"
#define BRIDGED "fib daddr . iif oif exists"

/* LANs merge where they overlap (two interfaces of one network). */
#define LAN_FLAGS " flags interval; auto-merge;"

char *netguard_ruleset(const struct netguard_dns *dns, const struct netguard_lan *lan)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    const char *o = SBNET_IF_OPEN "*", *in = SBNET_IF_INTERNAL "*";

    if (!f)
        return NULL;
    /* Create-then-delete makes the replacement one atomic transaction. */
    fprintf(f, "table inet " NETGUARD_TABLE "\ndelete table inet " NETGUARD_TABLE "\n");
    fprintf(f, "table inet " NETGUARD_TABLE " {\n");
    fprintf(f, "  set blocked4 { type ipv4_addr; flags interval; elements = { " BLOCKED4 " } }\n");
    fprintf(f, "  set blocked6 { type ipv6_addr; flags interval; elements = { " BLOCKED6 " } }\n");
    addr_set(f, "dns4", "ipv4_addr", "", dns->v4, dns->n4);
    addr_set(f, "dns6", "ipv6_addr", "", dns->v6, dns->n6);
    addr_set(f, "lan4", "ipv4_addr", LAN_FLAGS, lan->v4, lan->n4);
    addr_set(f, "lan6", "ipv6_addr", LAN_FLAGS, lan->v6, lan->n6);
    fprintf(
        f,
        "  chain sandbox_forward {\n    type filter hook forward priority -10; policy accept;\n");
    /* Two sandbox networks never talk, whatever their kind: nothing routed
     * from one sandbox bridge to another. Then an internal bridge's own
     * bridged traffic only. */
    fprintf(f, "    iifname { \"%s\", \"%s\" } oifname { \"%s\", \"%s\" } " ROUTED " drop\n", o, in,
            o, in);
    fprintf(f, "    iifname \"%s\" oifname \"%s\" " BRIDGED " accept\n", in, in);
    fprintf(f, "    iifname \"%s\" drop\n    oifname \"%s\" drop\n", in, in);
    fprintf(f, "    oifname \"%s\" ct state established,related accept\n", o);
    fprintf(f, "    oifname \"%s\" drop\n", o);
    fprintf(f, "    iifname \"%s\" ip daddr @dns4 meta l4proto { tcp, udp } th dport 53 accept\n",
            o);
    fprintf(f, "    iifname \"%s\" ip6 daddr @dns6 meta l4proto { tcp, udp } th dport 53 accept\n",
            o);
    fprintf(f, "    iifname \"%s\" ip daddr @blocked4 drop\n", o);
    fprintf(f, "    iifname \"%s\" ip daddr @lan4 drop\n", o);
    fprintf(f, "    iifname \"%s\" ip6 daddr @lan6 drop\n", o);
    fprintf(f, "    iifname \"%s\" ip6 daddr @blocked6 drop\n  }\n", o);
    fprintf(f,
            "  chain sandbox_input {\n    type filter hook input priority -10; policy accept;\n");
    fprintf(f, "    iifname \"%s\" ct state established,related accept\n", o);
    fprintf(f, "    iifname \"%s\" ct state established,related accept\n", in);
    fprintf(f, "    iifname \"%s\" drop\n    iifname \"%s\" drop\n  }\n", o, in);
    /* Sandboxes leave with the host's address whether or not dockerd
     * manages iptables (0023: it need not). */
    fprintf(f,
            "  chain sandbox_nat {\n    type nat hook postrouting priority 110; policy accept;\n");
    fprintf(f, "    iifname \"%s\" oifname != \"%s\" masquerade\n  }\n}\n", o, o);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Runs one nft script; out (may be NULL) gets what nft printed. */
static int nft_run(const char *script, char **out, char *err, size_t errlen)
{
    struct nft_ctx *ctx = nft_ctx_new(NFT_CTX_DEFAULT);
    int rc;

    if (!ctx) {
        snprintf(err, errlen, "nftables: cannot create a context");
        return -1;
    }
    nft_ctx_buffer_output(ctx);
    nft_ctx_buffer_error(ctx);
    rc = nft_run_cmd_from_buffer(ctx, script);
    if (rc != 0)
        snprintf(err, errlen, "nftables: %.400s", nft_ctx_get_error_buffer(ctx));
    else if (out)
        *out = strdup(nft_ctx_get_output_buffer(ctx));
    nft_ctx_free(ctx);
    return rc == 0 ? 0 : -1;
}

int netguard_install(const struct netguard_dns *dns, const struct netguard_lan *lan, char *err,
                     size_t errlen)
{
    char *script = netguard_ruleset(dns, lan);
    int rc;

    if (!script) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    rc = nft_run(script, NULL, err, errlen);
    free(script);
    return rc == 0 ? netguard_check(err, errlen) : -1;
}

int netguard_check(char *err, size_t errlen)
{
    static const char *const must[] = {"hook forward",
                                       "hook input",
                                       "@blocked4",
                                       "@blocked6",
                                       "@lan4",
                                       BRIDGED,
                                       ROUTED,
                                       "iifname \"" SBNET_IF_OPEN "*\" drop",
                                       "iifname \"" SBNET_IF_INTERNAL "*\" drop"};
    char *out = NULL;

    if (nft_run("list table inet " NETGUARD_TABLE, &out, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++)
        if (!out || !strstr(out, must[i])) {
            snprintf(err, errlen, "table inet %s lacks %s", NETGUARD_TABLE, must[i]);
            free(out);
            return -1;
        }
    free(out);
    return 0;
}
