#include "egress_trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUNDLE_MAX (8 * 1024 * 1024)
#define CA_MAX (64 * 1024)

char *egress_trust_text(const char *bundle, size_t len, const char *ca, size_t *outlen)
{
    size_t blen = strlen(EGRESS_CA_BEGIN), elen = strlen(EGRESS_CA_END);
    size_t calen = ca ? strlen(ca) : 0, keep = len, after = 0;
    const char *b = bundle ? memmem(bundle, len, EGRESS_CA_BEGIN, blen) : NULL;
    const char *e = b ? memmem(b, len - (size_t)(b - bundle), EGRESS_CA_END, elen) : NULL;
    char *out = malloc(len + blen + calen + elen + 2), *p;

    if (!out)
        return NULL;
    if (b) {
        keep = (size_t)(b - bundle);
        after = e ? len - (size_t)(e + elen - bundle) : 0;
    }
    p = out;
    memcpy(p, bundle ? bundle : "", keep);
    p += keep;
    if (after)
        memcpy(p, e + elen, after), p += after;
    if (ca) {
        if (p > out && p[-1] != '\n')
            *p++ = '\n';
        memcpy(p, EGRESS_CA_BEGIN, blen), p += blen;
        memcpy(p, ca, calen), p += calen;
        if (calen && ca[calen - 1] != '\n')
            *p++ = '\n';
        memcpy(p, EGRESS_CA_END, elen), p += elen;
    }
    *outlen = (size_t)(p - out);
    return out;
}

/* The whole file (NUL-terminated, malloc'd) or NULL; its length in *len. */
static char *slurp(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "r");
    char *buf;

    *len = 0;
    if (!f)
        return NULL;
    buf = malloc(max + 1);
    if (buf) {
        *len = fread(buf, 1, max, f);
        buf[*len] = '\0';
    }
    fclose(f);
    return buf;
}

static int put(const char *text, size_t len)
{
    const char *tmp = EGRESS_CA_BUNDLE ".corral-tmp";
    int fd, ok;

    mkdir("/etc/ssl", 0755);
    mkdir("/etc/ssl/certs", 0755);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    ok = write(fd, text, len) == (ssize_t)len;
    ok = close(fd) == 0 && ok && rename(tmp, EGRESS_CA_BUNDLE) == 0;
    if (!ok)
        unlink(tmp);
    return ok ? 0 : -1;
}

int egress_trust_apply(void)
{
    const char *want = getenv("NODE_EXTRA_CA_CERTS");
    size_t blen, clen, olen;
    char *bundle = slurp(EGRESS_CA_BUNDLE, BUNDLE_MAX, &blen), *ca = NULL, *out;
    int rc = 0;

    /* The CA counts only while the proxy variables say there is a proxy. */
    if (want && strcmp(want, EGRESS_CA_FILE) == 0)
        ca = slurp(EGRESS_CA_FILE, CA_MAX, &clen);
    if (!ca && (!bundle || !memmem(bundle, blen, EGRESS_CA_BEGIN, strlen(EGRESS_CA_BEGIN)))) {
        free(bundle);
        return 0;
    }
    out = egress_trust_text(bundle, blen, ca, &olen);
    if (!out ||
        (olen != blen || memcmp(out, bundle ? bundle : "", blen) != 0 ? put(out, olen) : 0) != 0)
        rc = -1;
    free(out);
    free(ca);
    free(bundle);
    return rc;
}
