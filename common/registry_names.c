/* registry_names.c: a template's repository, spelled once. */
#include "registry_names.h"

#include <stdio.h>
#include <string.h>

static int ws_ok(const char *ws)
{
    size_t n = strlen(ws);

    if (n == 0)
        return 1;
    if (n != 16)
        return 0;
    return strspn(ws, "0123456789abcdef") == n;
}

/* The registry's path components allow more; Corral's ids use only these. */
static int tpl_ok(const char *tpl, size_t n)
{
    if (n == 0 || n > 48 || tpl[0] == '-' || tpl[n - 1] == '-')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789-", tpl[i]))
            return 0;
    return 1;
}

int registry_repo(const char *ws, const char *tpl, char *out, size_t len)
{
    int n;

    if (!ws || !tpl || !ws_ok(ws) || !tpl_ok(tpl, strlen(tpl)))
        return -1;
    if (*ws)
        n = snprintf(out, len, "corral/w%s/%s", ws, tpl);
    else
        n = snprintf(out, len, "corral/" REGISTRY_FLEET "/%s", tpl);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int registry_repo_parse(const char *repo, char ws[17], char tpl[49])
{
    const char *p, *slash;
    size_t n;

    if (!repo || strncmp(repo, "corral/", 7) != 0)
        return -1;
    p = repo + 7;
    slash = strchr(p, '/');
    if (!slash)
        return -1;
    n = (size_t)(slash - p);
    if (n == strlen(REGISTRY_FLEET) && strncmp(p, REGISTRY_FLEET, n) == 0)
        ws[0] = '\0';
    else if (n == 17 && p[0] == 'w') {
        memcpy(ws, p + 1, 16);
        ws[16] = '\0';
        if (!ws_ok(ws))
            return -1;
    } else
        return -1;
    if (!tpl_ok(slash + 1, strlen(slash + 1)))
        return -1;
    snprintf(tpl, 49, "%s", slash + 1);
    return 0;
}
