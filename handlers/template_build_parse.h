/* template_build_parse.h: the body of E2B's POST /v2/templates/{id}/builds/{bid}
 * (TemplateBuildStartV2) and of POST /v3/templates, checked before anything
 * is made (docs/templates.md). Pure. */
#ifndef CORRAL_TEMPLATE_BUILD_PARSE_H
#define CORRAL_TEMPLATE_BUILD_PARSE_H

#include <jansson.h>
#include <stddef.h>

#define TEMPLATE_STEPS_MAX 200

struct template_build_req {
    char from_template[129]; /* "" when from_image */
    char from_image[256];
    int force;
    json_t *steps; /* the checked steps, a new reference (caller decrefs) */
    char start_cmd[1024], ready_cmd[1024];
    char user[33], workdir[256]; /* the last USER and WORKDIR ("user", "/home/user") */
    size_t n_copy;               /* COPY steps: each names a filesHash */
    /* fromImage named a template in Corral's registry (a Dockerfile's FROM):
     * from_template is its id, registry_ws its workspace (the caller's only:
     * the handler checks). */
    int from_registry;
    char registry_ws[17];
};

/* 0, or -1 with err naming the field. registry: Corral's own registry
 * (host:port), which fromImage may not name. */
int template_build_parse(json_t *body, const char *registry, struct template_build_req *out,
                         char *err, size_t errlen);

struct template_name_req {
    char name[129], tag[64]; /* tag "default" when none is given */
    json_t *tags;            /* further tags (a new reference) */
    long cpu, memory_mb;     /* 0: not given */
};

/* POST /v3/templates's TemplateBuildRequestV3 (name, or the deprecated alias;
 * "name:tag"; tags; cpuCount; memoryMB). 0, or -1 with err. */
int template_name_parse(json_t *body, struct template_name_req *out, char *err, size_t errlen);

/* 1 when s is a template name ([a-z0-9][a-z0-9._-]{0,127}) or a tag
 * ([A-Za-z0-9][A-Za-z0-9._-]{0,62}). */
int template_name_ok(const char *s);
int template_tag_ok(const char *s);

/* 1 when s is a 64-hex files hash. */
int template_hash_ok(const char *s);

#endif
