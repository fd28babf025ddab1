/* registry-sign: prints a registry token signed by common/registry_token.c,
 * for tests/registry/run.sh (the registry itself judges it).
 *
 *   registry-sign -k KEY -r REPO [-p] [-s SUBJECT] [-a SERVICE] [-i ISSUER]
 *                 [-n SECONDS] [-t TTL]
 *   registry-sign -k KEY -K        prints the key's kid instead
 *
 * -p: pull and push (else pull); -n: iat/nbf shifted by SECONDS from now
 * (negative: in the past); -t: lifetime (300). KEY is read as corral-api
 * reads corral.conf's registry_key (owner-only); never printed. */
#include "registry_token.h"
#include "secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int usage(void)
{
    fprintf(stderr, "usage: registry-sign -k KEY (-K | -r REPO [-p] [-s SUBJECT] [-a SERVICE] "
                    "[-i ISSUER] [-n SECONDS] [-t TTL])\n");
    return 2;
}

/* The key file's text into pem; 0, or -1 having said why (never its text). */
static int read_key(const char *path, char *pem, size_t len)
{
    char err[512];

    if (secret_read_file(path, pem, len, err, sizeof(err)) == 0)
        return 0;
    fprintf(stderr, "registry-sign: %s\n", err);
    return -1;
}

int main(int argc, char **argv)
{
    static char pem[4096], out[REGISTRY_TOKEN_MAX];
    const char *key = NULL;
    struct registry_grant g = {.issuer = "corral",
                               .service = "corral-registry",
                               .subject = "test-worker",
                               .actions = "pull",
                               .ttl_s = REGISTRY_TOKEN_TTL_S};
    int opt, kid_only = 0;
    long shift = 0;

    while ((opt = getopt(argc, argv, "k:Kr:ps:a:i:n:t:")) != -1) {
        switch (opt) {
        case 'k':
            key = optarg;
            break;
        case 'K':
            kid_only = 1;
            break;
        case 'r':
            g.repo = optarg;
            break;
        case 'p':
            g.actions = "pull,push";
            break;
        case 's':
            g.subject = optarg;
            break;
        case 'a':
            g.service = optarg;
            break;
        case 'i':
            g.issuer = optarg;
            break;
        case 'n':
            shift = strtol(optarg, NULL, 10);
            break;
        case 't':
            g.ttl_s = strtol(optarg, NULL, 10);
            break;
        default:
            return usage();
        }
    }
    if (!key || (!kid_only && !g.repo) || read_key(key, pem, sizeof(pem)) != 0)
        return key ? 1 : usage();
    g.now = (long long)time(NULL) + shift;
    if (kid_only ? registry_key_id(pem, out) != 0
                 : registry_token_sign(pem, &g, out, sizeof(out)) != 0) {
        fprintf(stderr, "registry-sign: %s is not an EC P-256 private key, or signing failed\n",
                key);
        return 1;
    }
    puts(out);
    return 0;
}
