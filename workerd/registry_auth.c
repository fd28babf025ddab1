#include "registry_auth.h"

#include "control.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_TIMEOUT_MS 15000

int registry_ref_split(const char *ref, char *host, size_t hostlen, char *repo, size_t repolen,
                       char *tag, size_t taglen)
{
    const char *slash = ref ? strchr(ref, '/') : NULL, *at, *colon;
    size_t hn;

    /* A registry host has a '.' or a ':' or is localhost (Docker's rule). */
    if (!slash || slash == ref)
        return -1;
    hn = (size_t)(slash - ref);
    if (!memchr(ref, '.', hn) && !memchr(ref, ':', hn) && strncmp(ref, "localhost/", 10) != 0)
        return -1;
    if (hn >= hostlen)
        return -1;
    snprintf(host, hostlen, "%.*s", (int)hn, ref);
    at = strchr(slash, '@');
    colon = at ? at : strrchr(slash, ':');
    if (!colon || colon[1] == '\0' || (size_t)(colon - slash - 1) >= repolen ||
        strlen(colon + 1) >= taglen)
        return -1;
    snprintf(repo, repolen, "%.*s", (int)(colon - slash - 1), slash + 1);
    snprintf(tag, taglen, "%s", colon + 1);
    return repo[0] ? 0 : -1;
}

/* base64url (with padding, as dockerd decodes X-Registry-Auth) of s. */
static int b64url(const char *s, char *out, size_t len)
{
    size_t n = strlen(s);

    if (4 * ((n + 2) / 3) + 1 > len)
        return -1;
    EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)s, (int)n);
    for (char *p = out; *p; p++)
        *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
    return 0;
}

/* The token of the control plane's answer into header; 0, or 1. */
static int header_of(json_t *ans, char *header, size_t len)
{
    const char *token = json_string_value(json_object_get(ans, "token"));
    json_t *auth;
    char *text;
    int rc = 1;

    if (!token || !*token || strlen(token) >= REGISTRY_TOKEN_MAX)
        return 1;
    auth = json_pack("{s:s}", "registrytoken", token);
    text = auth ? json_dumps(auth, JSON_COMPACT) : NULL;
    json_decref(auth);
    if (text && len > 18) {
        memcpy(header, "X-Registry-Auth: ", 18);
        rc = b64url(text, header + 17, len - 17) == 0 ? 0 : 1;
    }
    if (text) {
        explicit_bzero(text, strlen(text));
        free(text);
    }
    return rc;
}

int registry_auth_header(const struct worker_conf *c, const struct worker_identity *id,
                         const char *repo, int push, char *header, size_t len, char *err,
                         size_t errlen)
{
    struct control ctl;
    json_t *body = json_pack("{s:s, s:b}", "repository", repo, "push", push), *ans = NULL;
    long status = 0;
    int rc;

    if (!body || control_init(&ctl, c) != 0) {
        json_decref(body);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    rc = control_post(&ctl, "/v1/worker/registry-token", body, id, TOKEN_TIMEOUT_MS, &status, &ans,
                      err, errlen);
    control_close(&ctl);
    json_decref(body);
    if (rc == 0 && status == 503 && push) {
        snprintf(err, errlen, "registry token for %s: pushes are held (garbage collection)", repo);
        rc = 2;
    } else if (rc == 0 && status != 200) {
        snprintf(err, errlen, "registry token for %s: the control plane answered %ld", repo,
                 status);
        rc = 1;
    } else if (rc == 0 && header_of(ans, header, len) != 0) {
        snprintf(err, errlen, "registry token for %s: no usable token in the answer", repo);
        rc = 1;
    }
    if (ans) {
        /* jansson keeps the token's bytes: overwrite before freeing. */
        json_t *t = json_object_get(ans, "token");
        if (json_is_string(t))
            explicit_bzero((char *)json_string_value(t), json_string_length(t));
        json_decref(ans);
    }
    return rc;
}
