/* Unit tests of warm pools' pure parts (decision 0082): workerd.conf's
 * warm_pool (warm_conf.c), and which sandbox a listed container is
 * (containers_sbid_of): a warm one not claimed is nobody's, a claimed one is
 * the sandbox its name says whatever its labels. */
#include "check.h"
#include "containers.h"
#include "warm_conf.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

void unit_warm(int *total_passed, int *total_failed);

static int passed, failed;

struct conf_row {
    const char *in;
    int rc, n;
    const char *first; /* "tmpl:runtime=size" of out[0] */
    const char *fault;
};

static const struct conf_row conf_rows[] = {
    {"", 0, 0, NULL, NULL},
    {"base=2", 0, 1, "base:runc=2", NULL},
    {"  base:runsc=1, py=3\tnode=16", 0, 3, "base:runsc=1", NULL},
    {"base=0", 0, 0, NULL, NULL}, /* a size of 0 keeps none */
    {"base:runc=1 base=2", -1, 0, NULL, "listed twice"},
    {"base=17", -1, 0, NULL, "0 to 16"},
    {"base=-1", -1, 0, NULL, "0 to 16"},
    {"base=+1", -1, 0, NULL, "0 to 16"},
    {"base=2x", -1, 0, NULL, "0 to 16"},
    {"base=", -1, 0, NULL, "template[:runtime]=N"},
    {"base", -1, 0, NULL, "template[:runtime]=N"},
    {"=2", -1, 0, NULL, "names no template"},
    {"ba/se=2", -1, 0, NULL, "names no template"},
    {"base:=2", -1, 0, NULL, "names no template"},
    {"a=1 b=1 c=1 d=1 e=1 f=1 g=1 h=1 i=1", -1, 0, NULL, "more than 8"},
};

static void conf_row(const struct conf_row *r)
{
    struct warm_kind k[WARM_KINDS_MAX];
    char err[160] = "", got[160] = "";
    int n = -1, rc = warm_conf_parse(r->in, k, &n, err, sizeof(err));

    CHECK(rc == r->rc);
    if (rc == 0) {
        CHECK(n == r->n);
        if (n > 0)
            snprintf(got, sizeof(got), "%s:%s=%d", k[0].tmpl, k[0].runtime, k[0].size);
        CHECK(!r->first || strcmp(got, r->first) == 0);
    } else {
        CHECK(strstr(err, r->fault) != NULL);
    }
    if (rc != r->rc || (rc != 0 && !strstr(err, r->fault)))
        fprintf(stderr, "  warm_pool '%s': rc %d '%s'\n", r->in, rc, err);
}

static int sbid_is(const char *role, const char *label, const char *name, const char *want)
{
    json_t *labels = json_pack("{s:s?, s:s?}", "corral.role", role, "corral.sandbox", label);
    char buf[CTR_ID_MAX];
    const char *got = containers_sbid_of(labels, name, "w1a2", buf, sizeof(buf));
    int ok = want ? got && strcmp(got, want) == 0 : got == NULL;

    json_decref(labels);
    return ok;
}

static void sbid_rows(void)
{
    /* a cold sandbox: its label, whatever the name */
    CHECK(sbid_is("sandbox", "abc123", "/corral-abc123-w1a2", "abc123"));
    CHECK(sbid_is(NULL, "abc123", NULL, "abc123"));
    /* warm: the name is the truth */
    CHECK(sbid_is("warm", "warm_00ff", "/corral-warm_00ff-w1a2", NULL));
    CHECK(sbid_is("warm", "warm_00ff", "corral-warm_00ff-w1a2", NULL));
    CHECK(
        sbid_is("warm", "warm_00ff", "/corral-0123456789abcdef0123-w1a2", "0123456789abcdef0123"));
    CHECK(sbid_is("warm", "warm_00ff", "corral-0123456789abcdef0123-w1a2", "0123456789abcdef0123"));
    /* another worker's name, or none that parses: nobody's */
    CHECK(sbid_is("warm", "warm_00ff", "/corral-0123-w9", NULL));
    CHECK(sbid_is("warm", "warm_00ff", "/corral--w1a2", NULL));
    CHECK(sbid_is("warm", "warm_00ff", "/other-0123-w1a2", NULL));
    CHECK(sbid_is("warm", "warm_00ff", "/corral-a/b-w1a2", NULL));
    CHECK(sbid_is("warm", "warm_00ff", NULL, NULL));
}

void unit_warm(int *total_passed, int *total_failed)
{
    for (size_t i = 0; i < sizeof(conf_rows) / sizeof(conf_rows[0]); i++)
        conf_row(&conf_rows[i]);
    sbid_rows();
    *total_passed += passed;
    *total_failed += failed;
}
