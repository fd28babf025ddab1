#include "build_run.h"

#include "layer_cache.h"
#include "sandbox_body.h"

#include "secret.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COPY_CALL_MS 300000L
#define COMMIT_CALL_MS 300000L

/* Docker's COPY, from the files extracted in $1: a directory's contents
 * into dest; a file into dest/ when dest ends in '/' or is a directory, else
 * to dest; symlinks kept (cp -a). What it made then gets the owner ($4:$4)
 * and mode ($5) asked for, symlinks' modes aside. The temp dir goes. Its
 * arguments come as positional parameters, never spliced into the text. */
static const char copy_script[] =
    "set -e; t=$1; src=${2#/}; dest=$3; owner=$4; mode=$5; trap 'rm -rf \"$t\"' EXIT\n"
    "s=$t/$src; [ -e \"$s\" ] || [ -L \"$s\" ] || { echo \"COPY: $2: not in the uploaded "
    "files\" >&2; exit 1; }\n"
    "if [ -d \"$s\" ] && [ ! -L \"$s\" ]; then\n"
    "  made=; [ -d \"$dest\" ] || { mkdir -p \"$dest\"; made=$dest; }\n"
    "  cd \"$s\"; set --\n"
    "  for f in * .[!.]* ..?*; do if [ -e \"$f\" ] || [ -L \"$f\" ]; then set -- \"$@\" "
    "\"${dest%/}/$f\"; fi; done\n"
    "  cp -a . \"$dest/\"; cd /; [ -z \"$made\" ] || set -- \"$@\" \"$made\"\n"
    "else\n"
    "  case $dest in */) d=$dest ;; *) if [ -d \"$dest\" ]; then d=$dest/; else d=; fi ;; esac\n"
    "  if [ -n \"$d\" ]; then mkdir -p \"$d\"; out=${d%/}/${s##*/}; else mkdir -p \"$(dirname "
    "\"$dest\")\"; out=$dest; fi\n"
    "  cp -a \"$s\" \"$out\"; set -- \"$out\"\n"
    "fi\n"
    "[ -z \"$owner\" ] || [ $# -eq 0 ] || chown -hR \"$owner:$owner\" \"$@\"\n"
    "[ -z \"$mode\" ] || [ $# -eq 0 ] || find \"$@\" ! -type l -exec chmod \"$mode\" {} +\n";

static const char *arg(const struct build_step *s, size_t i)
{
    const char *v = json_string_value(json_array_get(s->args, i));

    return v ? v : "";
}

/* An exec of argv as root (or as user) in st's WORKDIR with st's ENVs. */
static int exec_as(const struct build_io *io, const char *user, const struct build_state *st,
                   json_t *argv, char *reason, size_t len)
{
    struct exec_spec es = {.user = user, .workdir = st->workdir, .env = st->env, .cmd = argv};
    char tail[EXEC_TAIL_MAX + 1], err[256];
    int code = 0, rc = docker_exec_run(io->d, io->ctr, &es, io->step_timeout_ms, io->line, io->ud,
                                       &code, tail, err, sizeof(err));

    json_decref(argv);
    if (rc == 1 || rc < 0)
        snprintf(reason, len, "%s", err);
    else if (rc == 2)
        snprintf(reason, len, "over the step timeout (%ld s)", io->step_timeout_ms / 1000);
    else if (code != 0) {
        snprintf(reason, len, "exit code %d: %s", code, tail);
        rc = 1;
    }
    return rc;
}

static int step_copy(const struct build_io *io, const struct build_step *s,
                     const struct build_state *st, char *reason, size_t len)
{
    char tmp[64], dest[BUILD_PATH_MAX], path[256], err[256], rnd[17];
    char *tar = NULL;
    size_t n = 0;
    long status = 0;
    int rc;

    if (build_copy_dest(st->workdir, arg(s, 1), dest, sizeof(dest)) != 0) {
        snprintf(reason, len, "COPY: bad destination");
        return 1;
    }
    if (secret_random_hex(rnd, 8) != 0)
        snprintf(rnd, sizeof(rnd), "%lx", (unsigned long)random());
    snprintf(tmp, sizeof(tmp), "/tmp/.corral-copy-%s", rnd);
    rc = io->fetch(io->ud, s->files_hash, &tar, &n, reason, len);
    if (rc == 0)
        rc = exec_as(io, "0", st, json_pack("[s,s,s]", "mkdir", "-p", tmp), reason, len);
    if (rc == 0) {
        snprintf(path, sizeof(path), "/containers/%s/archive?path=%s", io->ctr, tmp);
        rc = docker_put_bytes(io->d, path, tar, n, "application/x-tar", COPY_CALL_MS, &status, err,
                              sizeof(err));
        if (rc == 0 && status != 200) {
            snprintf(reason, len, "COPY: the files were refused (dockerd answered %ld)", status);
            rc = 1;
        } else if (rc != 0) {
            snprintf(reason, len, "%s", err);
        }
    }
    free(tar);
    if (rc != 0)
        return rc;
    return exec_as(io, "0", st,
                   json_pack("[s,s,s,s,s,s,s,s,s]", "/bin/sh", "-c", copy_script, "copy", tmp,
                             arg(s, 0), dest, arg(s, 2), arg(s, 3)),
                   reason, len);
}

static int step_workdir(const struct build_io *io, const struct build_step *s,
                        struct build_state *st, char *reason, size_t len)
{
    char dir[BUILD_PATH_MAX];
    int rc;

    if (build_copy_dest(st->workdir, arg(s, 0), dir, sizeof(dir)) != 0) {
        snprintf(reason, len, "WORKDIR: bad directory");
        return 1;
    }
    /* Made from "/": the current WORKDIR may not exist. */
    struct build_state root = {.env = st->env, .workdir = "/", .user = "0"};
    rc = exec_as(io, "0", &root, json_pack("[s,s,s]", "mkdir", "-p", dir), reason, len);
    if (rc == 0)
        snprintf(st->workdir, sizeof(st->workdir), "%s", dir);
    return rc;
}

int build_step_run(const struct build_io *io, const struct build_step *s, struct build_state *st,
                   char *reason, size_t len)
{
    switch (s->kind) {
    case STEP_RUN:
        return exec_as(io, *arg(s, 1) ? arg(s, 1) : st->user, st,
                       json_pack("[s,s,s]", "/bin/sh", "-c", arg(s, 0)), reason, len);
    case STEP_COPY:
        return step_copy(io, s, st, reason, len);
    case STEP_ENV:
        if (build_state_env(st, s->args) == 0)
            return 0;
        snprintf(reason, len, "ENV: bad name");
        return 1;
    case STEP_WORKDIR:
        return step_workdir(io, s, st, reason, len);
    case STEP_USER:
        snprintf(st->user, sizeof(st->user), "%s", arg(s, 0));
        return 0;
    }
    return 1;
}

/* The committed image's config: blanked variables, then the template's. */
static json_t *commit_config(const char *key, const struct build_state *st)
{
    json_t *env = json_array();
    char *state = build_state_encode(st);
    json_t *cfg;

    sandbox_env_blanked(env);
    json_array_extend(env, st->env);
    cfg = json_pack("{s:o, s:s, s:s, s:{s:s, s:s}}", "Env", env, "WorkingDir", st->workdir, "User",
                    st->user, "Labels", LAYER_LABEL, key, LAYER_STATE_LABEL, state ? state : "{}");
    free(state);
    return cfg;
}

int build_commit(const struct build_io *io, const char *key, const struct build_state *st,
                 char *image, char *err, size_t errlen)
{
    char path[512];
    long status = 0;
    json_t *cfg = commit_config(key, st), *ans = NULL;
    int rc;

    snprintf(path, sizeof(path), "/commit?container=%s&repo=%s&tag=%.32s&pause=true", io->ctr,
             LAYER_REPO, key);
    rc = docker_call(io->d, "POST", path, cfg, COMMIT_CALL_MS, &status, &ans, err, errlen);
    json_decref(cfg);
    if (rc != 0)
        return -1;
    if (status != 201 || !json_string_value(json_object_get(ans, "Id"))) {
        snprintf(err, errlen, "commit: %.200s", docker_errmsg(ans, status));
        json_decref(ans);
        return 1;
    }
    snprintf(image, LAYER_KEY_MAX, "%s", json_string_value(json_object_get(ans, "Id")));
    json_decref(ans);
    return 0;
}
