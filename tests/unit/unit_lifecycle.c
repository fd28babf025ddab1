/* unit_lifecycle.c: the pure parts of issue 11's lifecycle (decisions
 * 0044, 0048, 0049): how snapshot and volume ids, volume names and mount
 * paths are spelled, and a create body's on_timeout, auto_resume and
 * volume_mounts as the native parser takes them. */
#include "check.h"
#include "sandbox_spec_parse.h"
#include "snapshot_store.h"
#include "volume_names.h"

#include <jansson.h>
#include <string.h>

void unit_lifecycle(int *total_passed, int *total_failed);

static int passed, failed;

static void test_names(void)
{
    char out[96];

    CHECK(snapshot_id_ok("snap-0123456789abcdef0123"));
    CHECK(!snapshot_id_ok("snap-0123456789abcdef012"));   /* 19 hex */
    CHECK(!snapshot_id_ok("snap-0123456789abcdef01234")); /* 21 */
    CHECK(!snapshot_id_ok("snap-0123456789ABCDEF0123"));  /* upper case */
    CHECK(!snapshot_id_ok("base") && !snapshot_id_ok(NULL) && !snapshot_id_ok(""));
    snapshot_image("snap-0123456789abcdef0123", out, sizeof(out));
    CHECK(!strcmp(out, "corral-snap:snap-0123456789abcdef0123"));
    CHECK(volume_id_ok("vol-0123456789abcdef0123") && !volume_id_ok("vol-x") &&
          !volume_id_ok("snap-0123456789abcdef0123"));
    volume_docker_name("vol-0123456789abcdef0123", out, sizeof(out));
    CHECK(!strcmp(out, "corral-vol-0123456789abcdef0123") && volume_docker_name_ok(out));
    CHECK(!volume_docker_name_ok("corral-vol-../etc") && !volume_docker_name_ok("vol-1"));
    CHECK(volume_name_ok("data") && volume_name_ok("A.b_c-1") && volume_name_ok("0x"));
    CHECK(!volume_name_ok("") && !volume_name_ok("-x") && !volume_name_ok(".x") &&
          !volume_name_ok("a/b") && !volume_name_ok("a b") && !volume_name_ok(NULL));
    CHECK(volume_name_ok(
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")); /* 64 */
    CHECK(!volume_name_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}

static void test_paths(void)
{
    static const char *const good[] = {"/data",  "/home/user/work", "/mnt/a.b",
                                       "/procx", "/devices",        NULL};
    static const char *const bad[] = {
        "/",        "data",          "/data/", "//data",  "/a//b",   "/a/./b", "/a/../b",
        "/a/..",    "/a/.",          "/proc",  "/proc/x", "/sys/fs", "/dev",   "/dev/shm",
        "/.corral", "/.corral/envd", "/a:b",   "/a,b",    "/a\nb",   "",       NULL};

    for (int i = 0; good[i]; i++)
        CHECK(volume_path_ok(good[i]));
    for (int i = 0; bad[i]; i++)
        CHECK(!volume_path_ok(bad[i]));
    CHECK(!volume_path_ok(NULL));
}

/* The parser's answer to body: 0 taken, or the field it refused. */
static int refused_field(const char *body, struct sandbox_spec *s)
{
    json_t *j = json_loads(body, 0, NULL);
    struct spec_error e;
    int rv = sandbox_spec_parse_coded(j, s, &e);

    json_decref(j);
    return rv == 0 ? 0 : (int)e.field;
}

static void test_spec(void)
{
    struct sandbox_spec s;

    CHECK(refused_field("{\"on_timeout\":\"pause\",\"auto_resume\":true}", &s) == 0);
    CHECK(s.pause_on_timeout && s.auto_resume);
    sandbox_spec_free(&s);
    CHECK(refused_field("{\"on_timeout\":\"kill\"}", &s) == 0 && !s.pause_on_timeout);
    sandbox_spec_free(&s);
    CHECK(refused_field("{\"on_timeout\":\"sleep\"}", &s) == SPEC_FIELD_ON_TIMEOUT);
    CHECK(refused_field("{\"auto_resume\":true}", &s) == SPEC_FIELD_AUTO_RESUME);
    CHECK(refused_field("{\"on_timeout\":\"pause\",\"auto_resume\":1}", &s) ==
          SPEC_FIELD_AUTO_RESUME);
    /* keep_memory (decision 0074): false only for a pause on timeout that
     * traffic does not resume; true (the default) anywhere. */
    CHECK(refused_field("{}", &s) == 0 && s.keep_memory);
    sandbox_spec_free(&s);
    CHECK(refused_field("{\"on_timeout\":\"pause\",\"keep_memory\":false}", &s) == 0 &&
          !s.keep_memory && s.pause_on_timeout);
    sandbox_spec_free(&s);
    CHECK(refused_field("{\"keep_memory\":true}", &s) == 0 && s.keep_memory);
    sandbox_spec_free(&s);
    CHECK(refused_field("{\"keep_memory\":false}", &s) == SPEC_FIELD_KEEP_MEMORY);
    CHECK(refused_field("{\"on_timeout\":\"kill\",\"keep_memory\":false}", &s) ==
          SPEC_FIELD_KEEP_MEMORY);
    CHECK(refused_field("{\"on_timeout\":\"pause\",\"auto_resume\":true,\"keep_memory\":false}",
                        &s) == SPEC_FIELD_KEEP_MEMORY);
    CHECK(refused_field("{\"on_timeout\":\"pause\",\"keep_memory\":0}", &s) ==
          SPEC_FIELD_KEEP_MEMORY);
    CHECK(refused_field("{\"volume_mounts\":[{\"name\":\"d\",\"path\":\"/data\"},"
                        "{\"name\":\"e\",\"path\":\"/e\"}]}",
                        &s) == 0);
    CHECK(s.mounts_json && strstr(s.mounts_json, "\"/data\"") && strstr(s.mounts_json, "\"/e\""));
    sandbox_spec_free(&s);
    CHECK(refused_field("{\"volume_mounts\":[]}", &s) == 0 && s.mounts_json == NULL);
    sandbox_spec_free(&s);
    CHECK(refused_field("{\"volume_mounts\":[{\"name\":\"d\",\"path\":\"/x\"},"
                        "{\"name\":\"e\",\"path\":\"/x\"}]}",
                        &s) == SPEC_FIELD_VOLUME_MOUNTS); /* one path twice */
    CHECK(refused_field("{\"volume_mounts\":[{\"name\":\"d\",\"path\":\"/proc\"}]}", &s) ==
          SPEC_FIELD_VOLUME_MOUNTS);
    CHECK(refused_field("{\"volume_mounts\":[{\"name\":\"d\",\"path\":\"/x\",\"ro\":1}]}", &s) ==
          SPEC_FIELD_VOLUME_MOUNTS);
    CHECK(refused_field("{\"volume_mounts\":[{\"name\":\"../d\",\"path\":\"/x\"}]}", &s) ==
          SPEC_FIELD_VOLUME_MOUNTS);
    CHECK(refused_field("{\"volume_mounts\":{\"name\":\"d\"}}", &s) == SPEC_FIELD_VOLUME_MOUNTS);
    CHECK(refused_field(
              "{\"volume_mounts\":[{\"name\":\"a\",\"path\":\"/1\"},{\"name\":\"a\",\"path\":"
              "\"/2\"},{\"name\":\"a\",\"path\":\"/3\"},{\"name\":\"a\",\"path\":\"/4\"},"
              "{\"name\":\"a\",\"path\":\"/5\"},{\"name\":\"a\",\"path\":\"/6\"},{\"name\":"
              "\"a\",\"path\":\"/7\"},{\"name\":\"a\",\"path\":\"/8\"},{\"name\":\"a\","
              "\"path\":\"/9\"}]}",
              &s) == SPEC_FIELD_VOLUME_MOUNTS); /* 9 mounts */
}

void unit_lifecycle(int *total_passed, int *total_failed)
{
    test_names();
    test_paths();
    test_spec();
    *total_passed += passed;
    *total_failed += failed;
}
