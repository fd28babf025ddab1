/* Unit tests of templates' pure parts (docs/templates.md): step decoding,
 * layer keys (their exact bytes, so that a change of the key breaks every
 * worker's cache on purpose, not by accident), COPY's destination against
 * WORKDIR, the build state's label round trip, ENV's replacement, a registry
 * reference split into host, repository and tag, the tail of an output, and
 * the errors and digest of dockerd's pull and push streams. */
#include "build_push.h"
#include "build_steps.h"
#include "template_images.h"
#include "check.h"
#include "docker_exec.h"
#include "image_pull.h"
#include "registry_auth.h"

#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void unit_build(int *total_passed, int *total_failed);

CHECK_COUNTERS;

static json_t *step(const char *text)
{
    return json_loads(text, 0, NULL);
}

static void test_decode(void)
{
    struct build_step s;
    char err[128];
    json_t *j = step("{\"type\":\"COPY\",\"args\":[\"a\",\"/b\",\"user\",\"0755\"],"
                     "\"filesHash\":\"abc\",\"force\":true}");

    CHECK(build_step_decode(j, &s, err, sizeof(err)) == 0 && s.kind == STEP_COPY && s.force &&
          strcmp(s.files_hash, "abc") == 0 && json_array_size(s.args) == 4);
    json_decref(j);
    j = step("{\"type\":\"COPY\",\"args\":[\"a\",\"/b\"]}"); /* no filesHash */
    CHECK(build_step_decode(j, &s, err, sizeof(err)) == -1);
    json_decref(j);
    j = step("{\"type\":\"ENV\",\"args\":[\"K\"]}"); /* odd */
    CHECK(build_step_decode(j, &s, err, sizeof(err)) == -1);
    json_decref(j);
    j = step("{\"type\":\"RUN\",\"args\":[1]}");
    CHECK(build_step_decode(j, &s, err, sizeof(err)) == -1);
    json_decref(j);
    j = step("{\"type\":\"FROM\",\"args\":[\"x\"]}");
    CHECK(build_step_decode(j, &s, err, sizeof(err)) == -1 && strstr(err, "FROM"));
    json_decref(j);
    j = step("{\"type\":\"USER\",\"args\":[\"user\"]}");
    CHECK(build_step_decode(j, &s, err, sizeof(err)) == 0 && s.kind == STEP_USER && !s.force &&
          strcmp(build_step_name(s.kind), "USER") == 0);
    json_decref(j);
}

static void hex_sha(const char *text, char *out)
{
    unsigned char md[SHA256_DIGEST_LENGTH];

    SHA256((const unsigned char *)text, strlen(text), md);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void test_keys(void)
{
    char k1[65], k2[65], k1f[65], want[65];
    json_t *a = step("{\"type\":\"RUN\",\"args\":[\"echo hi\",\"\"],\"force\":false}");
    json_t *af = step("{\"force\":true,\"args\":[\"echo hi\",\"\"],\"type\":\"RUN\"}");
    json_t *c = step("{\"type\":\"COPY\",\"args\":[\"a\",\"b\"],\"filesHash\":\"h1\"}");
    json_t *c2 = step("{\"type\":\"COPY\",\"args\":[\"a\",\"b\"],\"filesHash\":\"h2\"}");

    CHECK(build_layer_key("sha256:base", a, k1) == 0);
    hex_sha("sha256:base{\"args\":[\"echo hi\",\"\"],\"type\":\"RUN\"}", want);
    CHECK(strcmp(k1, want) == 0);
    /* force and key order are not part of the key */
    CHECK(build_layer_key("sha256:base", af, k1f) == 0 && strcmp(k1, k1f) == 0);
    /* chained: the parent is part of it */
    CHECK(build_layer_key(k1, c, k2) == 0);
    hex_sha("", want);
    {
        char text[256];
        snprintf(text, sizeof(text),
                 "%s{\"args\":[\"a\",\"b\"],\"filesHash\":\"h1\",\"type\":\"COPY\"}", k1);
        hex_sha(text, want);
    }
    CHECK(strcmp(k2, want) == 0);
    /* the files' hash is */
    CHECK(build_layer_key(k1, c2, k1f) == 0 && strcmp(k1f, k2) != 0);
    CHECK(build_layer_key("sha256:other", a, k1f) == 0 && strcmp(k1f, k1) != 0);
    json_decref(a);
    json_decref(af);
    json_decref(c);
    json_decref(c2);
}

static void test_copy_dest(void)
{
    char out[64];

    CHECK(build_copy_dest("/app", "/etc/x", out, sizeof(out)) == 0 && strcmp(out, "/etc/x") == 0);
    CHECK(build_copy_dest("/app", "sub/", out, sizeof(out)) == 0 && strcmp(out, "/app/sub/") == 0);
    CHECK(build_copy_dest("/app/", "f.txt", out, sizeof(out)) == 0 &&
          strcmp(out, "/app/f.txt") == 0);
    CHECK(build_copy_dest("/app", ".", out, sizeof(out)) == 0 && strcmp(out, "/app/") == 0);
    CHECK(build_copy_dest("/", "x/", out, sizeof(out)) == 0 && strcmp(out, "/x/") == 0);
    CHECK(build_copy_dest("/app", "", out, sizeof(out)) == -1);
    CHECK(build_copy_dest("/app", "a-name-far-too-long-for-the-buffer-it-is-given-here-at-all", out,
                          16) == -1);
}

static void test_state(void)
{
    struct build_state st, back;
    json_t *args = json_pack("[s,s,s,s]", "A", "1", "B", "x=y");
    json_t *again = json_pack("[s,s]", "A", "2");
    json_t *bad = json_pack("[s,s]", "A=B", "2");
    char *text;

    build_state_init(&st, "", "");
    CHECK(strcmp(st.workdir, "/") == 0 && strcmp(st.user, "root") == 0);
    CHECK(build_state_env(&st, args) == 0 && build_state_env(&st, again) == 0);
    CHECK(json_array_size(st.env) == 2 &&
          strcmp(json_string_value(json_array_get(st.env, 0)), "A=2") == 0 &&
          strcmp(json_string_value(json_array_get(st.env, 1)), "B=x=y") == 0);
    CHECK(build_state_env(&st, bad) == -1);
    snprintf(st.workdir, sizeof(st.workdir), "/app");
    snprintf(st.user, sizeof(st.user), "user");
    text = build_state_encode(&st);
    CHECK(text && build_state_decode(text, &back) == 0 && strcmp(back.workdir, "/app") == 0 &&
          strcmp(back.user, "user") == 0 && json_equal(back.env, st.env));
    build_state_free(&back);
    CHECK(build_state_decode("{\"env\":[1]}", &back) == -1 && strcmp(back.user, "root") == 0);
    build_state_free(&back);
    free(text);
    build_state_free(&st);
    json_decref(args);
    json_decref(again);
    json_decref(bad);
}

static void test_ref_split(void)
{
    char host[64], repo[128], tag[96];

    CHECK(registry_ref_split("127.0.0.1:5000/corral/w0123456789abcdef/tpl-1@sha256:ab", host,
                             sizeof(host), repo, sizeof(repo), tag, sizeof(tag)) == 0 &&
          strcmp(host, "127.0.0.1:5000") == 0 &&
          strcmp(repo, "corral/w0123456789abcdef/tpl-1") == 0 && strcmp(tag, "sha256:ab") == 0);
    CHECK(registry_ref_split("reg.example:5000/corral/fleet/tpl-2:bld-9", host, sizeof(host), repo,
                             sizeof(repo), tag, sizeof(tag)) == 0 &&
          strcmp(repo, "corral/fleet/tpl-2") == 0 && strcmp(tag, "bld-9") == 0);
    CHECK(registry_ref_split("corral/base", host, sizeof(host), repo, sizeof(repo), tag,
                             sizeof(tag)) == -1);
    CHECK(registry_ref_split("127.0.0.1:5000/corral/x", host, sizeof(host), repo, sizeof(repo), tag,
                             sizeof(tag)) == -1); /* neither tag nor digest */
    CHECK(registry_ref_split("python:3.12", host, sizeof(host), repo, sizeof(repo), tag,
                             sizeof(tag)) == -1);
}

/* A deleted template's names: its repository's tags and digests, no other. */
static void test_template_refs(void)
{
    const char *repo = "127.0.0.1:5000/corral/w0123456789abcdef/tpl-1";

    CHECK(template_ref_of("127.0.0.1:5000/corral/w0123456789abcdef/tpl-1:bld-2", repo));
    CHECK(template_ref_of("127.0.0.1:5000/corral/w0123456789abcdef/tpl-1@sha256:ab", repo));
    CHECK(!template_ref_of("127.0.0.1:5000/corral/w0123456789abcdef/tpl-10:bld-2", repo));
    CHECK(!template_ref_of("127.0.0.1:5000/corral/w0123456789abcdef/tpl-1", repo));
    CHECK(!template_ref_of("corral/base:latest", repo));
    CHECK(!template_ref_of("anything:tag", ""));
}

static void test_tail(void)
{
    char big[1000], tail[EXEC_TAIL_MAX + 1];

    exec_tail("one\ntwo\n\n", 9, tail, sizeof(tail));
    CHECK(strcmp(tail, "one\ntwo") == 0);
    memset(big, 'a', sizeof(big));
    snprintf(big + 800, sizeof(big) - 800, "\nlast line");
    exec_tail(big, strlen(big), tail, sizeof(tail));
    CHECK(strcmp(tail, "last line") == 0);
    memset(big, 'b', sizeof(big));
    exec_tail(big, sizeof(big), tail, sizeof(tail));
    CHECK(strlen(tail) == EXEC_TAIL_MAX);
}

static void test_streams(void)
{
    const char pull[] = "{\"status\":\"Pulling\"}\n{\"error\":\"manifest unknown\","
                        "\"errorDetail\":{\"message\":\"manifest unknown\"}}\n";
    const char push[] = "{\"status\":\"Pushed\"}\n{\"progressDetail\":{},\"aux\":{\"Tag\":\"b\","
                        "\"Digest\":\"sha256:0123\",\"Size\":5}}\n";
    char err[128], digest[DIGEST_MAX];

    CHECK(image_stream_error(pull, strlen(pull), err, sizeof(err)) == 1 &&
          strcmp(err, "manifest unknown") == 0);
    CHECK(image_stream_error(push, strlen(push), err, sizeof(err)) == 0);
    CHECK(build_push_digest(push, strlen(push), digest) == 0 && strcmp(digest, "sha256:0123") == 0);
    CHECK(build_push_digest(pull, strlen(pull), digest) == -1);
}

void unit_build(int *total_passed, int *total_failed)
{
    test_decode();
    test_keys();
    test_copy_dest();
    test_state();
    test_ref_split();
    test_template_refs();
    test_tail();
    test_streams();
    *total_passed += passed;
    *total_failed += failed;
}
