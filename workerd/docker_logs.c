#include "docker_logs.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void docker_demux(const char *in, size_t len, char *out, size_t outlen)
{
    size_t o = 0, i = 0;

    while (i + 8 <= len && o + 1 < outlen) {
        const unsigned char *h = (const unsigned char *)in + i;
        size_t n = ((size_t)h[4] << 24) | ((size_t)h[5] << 16) | ((size_t)h[6] << 8) | h[7];
        i += 8;
        if (n > len - i)
            n = len - i;
        if (n > outlen - 1 - o)
            n = outlen - 1 - o;
        memcpy(out + o, in + i, n);
        o += n;
        i += n;
    }
    out[o] = '\0';
}

int docker_log_line(const char *line, long long *ns, const char **text)
{
    struct tm tm;
    int y, mo, d, h, mi, s, used = 0;
    long long frac = 0;
    const char *p;

    if (sscanf(line, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &used) != 6 ||
        used != 19)
        return -1;
    p = line + used;
    if (*p == '.') {
        int digits = 0;
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            if (digits < 9)
                frac = frac * 10 + (*p - '0');
        for (; digits < 9; digits++)
            frac *= 10;
    }
    if (p[0] != 'Z' || (p[1] != ' ' && p[1] != '\0'))
        return -1;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d;
    tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = s;
    *ns = (long long)timegm(&tm) * 1000000000LL + frac;
    *text = p[1] ? p + 2 : p + 1;
    return 0;
}
