#include "rcluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static unsigned crc16(const char *p, size_t len)
{
    unsigned crc = 0;

    for (size_t i = 0; i < len; i++) {
        crc ^= (unsigned)(unsigned char)p[i] << 8;
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
    return crc;
}

unsigned rcluster_keyslot(const char *key, size_t len)
{
    const char *open = memchr(key, '{', len);

    if (open) {
        size_t rest = len - (size_t)(open - key) - 1;
        const char *close = memchr(open + 1, '}', rest);
        if (close && close > open + 1)
            return crc16(open + 1, (size_t)(close - open - 1)) % RCLUSTER_SLOTS;
    }
    return crc16(key, len) % RCLUSTER_SLOTS;
}

/* Reads "<c><digits>\r\n" at *p: the number, or -1. */
static long resp_number(const char **p, const char *end, char c)
{
    char *stop;
    long v;

    if (*p >= end || **p != c)
        return -1;
    v = strtol(*p + 1, &stop, 10);
    if (stop == *p + 1 || stop + 2 > end || stop[0] != '\r' || stop[1] != '\n' || v < 0)
        return -1;
    *p = stop + 2;
    return v;
}

/* The n argument strings of a RESP command, up to max of them: the count
 * read, or -1 when the bytes are not a command. */
static int resp_args(const char *cmd, size_t cmdlen, const char **arg, size_t *len, int max)
{
    const char *p = cmd, *end = cmd + cmdlen;
    long n = resp_number(&p, end, '*');
    int i;

    if (n < 1)
        return -1;
    for (i = 0; i < n && i < max; i++) {
        long l = resp_number(&p, end, '$');
        if (l < 0 || end - p < l + 2)
            return -1;
        arg[i] = p;
        len[i] = (size_t)l;
        p += l + 2;
    }
    return i;
}

static int is(const char *arg, size_t len, const char *word)
{
    return strlen(word) == len && strncasecmp(arg, word, len) == 0;
}

static int keyless(const char *name, size_t len)
{
    static const char *const none[] = {"PING", "TIME",   "ROLE",    "INFO",   "WAIT",
                                       "AUTH", "SCRIPT", "CLUSTER", "ASKING", NULL};

    for (const char *const *w = none; *w; w++)
        if (is(name, len, *w))
            return 1;
    return 0;
}

int rcluster_command_key(const char *cmd, size_t cmdlen, const char **key, size_t *keylen)
{
    const char *arg[24];
    size_t len[24];
    int n = resp_args(cmd, cmdlen, arg, len, 24), k = 1;

    if (n < 2 || keyless(arg[0], len[0]))
        return -1;
    if (is(arg[0], len[0], "EVAL") || is(arg[0], len[0], "EVALSHA")) {
        if (n < 4 || is(arg[2], len[2], "0"))
            return -1;
        k = 3;
    } else if (is(arg[0], len[0], "XREAD") || is(arg[0], len[0], "XREADGROUP")) {
        for (k = 1; k < n && !is(arg[k], len[k], "STREAMS"); k++)
            ;
        if (++k >= n)
            return -1;
    }
    *key = arg[k];
    *keylen = len[k];
    return 0;
}

int rcluster_redirect(const char *err, int *ask, int *slot, char *host, size_t hostlen, int *port)
{
    char kind[8], addr[96], *colon;

    if (sscanf(err, "%7s %d %95s", kind, slot, addr) != 3 || *slot < 0 || *slot >= RCLUSTER_SLOTS)
        return -1;
    if (strcmp(kind, "MOVED") != 0 && strcmp(kind, "ASK") != 0)
        return -1;
    colon = strrchr(addr, ':');
    if (!colon || colon == addr || (size_t)(colon - addr) >= hostlen)
        return -1;
    *port = atoi(colon + 1);
    if (*port <= 0 || *port > 65535)
        return -1;
    snprintf(host, hostlen, "%.*s", (int)(colon - addr), addr);
    *ask = strcmp(kind, "ASK") == 0;
    return 0;
}

int rcluster_node_index(struct rcluster *cl, const char *host, int port)
{
    for (int i = 0; i < cl->n; i++)
        if (cl->node[i].port == port && strcmp(cl->node[i].host, host) == 0)
            return i;
    if (cl->n == RCLUSTER_NODES || strlen(host) >= sizeof(cl->node[0].host))
        return -1;
    snprintf(cl->node[cl->n].host, sizeof(cl->node[0].host), "%s", host);
    cl->node[cl->n].port = port;
    cl->node[cl->n].ctx = NULL;
    return cl->n++;
}
