#include "tar_one.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ustar header's fields, at their offsets (POSIX.1-1988). */
#define T_NAME 0
#define T_MODE 100
#define T_UID 108
#define T_GID 116
#define T_SIZE 124
#define T_MTIME 136
#define T_CHKSUM 148
#define T_TYPE 156
#define T_MAGIC 257
#define T_VERSION 263

int tar_one(const char *name, const void *data, size_t len, char **out, size_t *outlen)
{
    size_t nlen = strlen(name), padded = (len + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
    unsigned sum = 0;
    char *t;

    if (nlen == 0 || nlen > 99 || strchr(name, '/') || len > 077777777777ULL)
        return -1;
    *outlen = TAR_BLOCK + padded + 2 * TAR_BLOCK;
    if (!(t = calloc(1, *outlen)))
        return -1;
    memcpy(t + T_NAME, name, nlen);
    snprintf(t + T_MODE, 8, "%07o", 0644);
    snprintf(t + T_UID, 8, "%07o", 0);
    snprintf(t + T_GID, 8, "%07o", 0);
    snprintf(t + T_SIZE, 12, "%011llo", (unsigned long long)len);
    snprintf(t + T_MTIME, 12, "%011o", 0);
    t[T_TYPE] = '0';
    memcpy(t + T_MAGIC, "ustar", 6);
    memcpy(t + T_VERSION, "00", 2);
    /* The checksum counts its own field as eight spaces. */
    memset(t + T_CHKSUM, ' ', 8);
    for (int i = 0; i < TAR_BLOCK; i++)
        sum += (unsigned char)t[i];
    snprintf(t + T_CHKSUM, 8, "%06o", sum);
    t[T_CHKSUM + 7] = ' ';
    if (len)
        memcpy(t + TAR_BLOCK, data, len);
    *out = t;
    return 0;
}
