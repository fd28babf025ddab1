/* agent_conf.c: the keys of -mode agent (decision 0054), and what they
 * default to. Kept apart from worker_conf.c: none of them means anything to a
 * Docker worker, and none of the Docker keys to an agent. */
#include "agent.h"

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int copy(char *dst, size_t len, const char *value, char *err, size_t errlen)
{
    if (strlen(value) >= len) {
        snprintf(err, errlen, "value longer than %zu characters", len - 1);
        return -1;
    }
    snprintf(dst, len, "%s", value);
    return 0;
}

static int one_of(char *dst, size_t len, const char *value, const char *a, const char *b, char *err,
                  size_t errlen)
{
    if (strcmp(value, a) != 0 && (!b || strcmp(value, b) != 0)) {
        snprintf(err, errlen, "expected %s%s%s", a, b ? " or " : "", b ? b : "");
        return -1;
    }
    return copy(dst, len, value, err, errlen);
}

static int set_mode(struct agent_conf *a, const char *value, char *err, size_t errlen)
{
    if (strcmp(value, "docker") != 0 && strcmp(value, "agent") != 0) {
        snprintf(err, errlen, "expected docker or agent");
        return -1;
    }
    a->on = strcmp(value, "agent") == 0;
    return 0;
}

/* expose_ports = 3000 8080 (blanks or commas between): the only ports of
 * this machine, besides envd's, the data port connects to (decision 0062).
 * Given again, the list is replaced, as any key's value is; a bad list
 * changes nothing. */
static int set_expose(struct agent_conf *a, const char *value, char *err, size_t errlen)
{
    char buf[WCONF_STR * 2], *save = NULL;
    unsigned short ports[WCONF_MAX_EXPOSE];
    int n = 0;
    long port;

    if (strlen(value) >= sizeof(buf)) {
        snprintf(err, errlen, "value longer than %zu characters", sizeof(buf) - 1);
        return -1;
    }
    snprintf(buf, sizeof(buf), "%s", value);
    for (char *w = strtok_r(buf, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save)) {
        if (config_parse_int(w, 1, 65535, &port) != 0) {
            snprintf(err, errlen, "expected port numbers in [1, 65535], not \"%.32s\"", w);
            return -1;
        }
        if (n == WCONF_MAX_EXPOSE) {
            snprintf(err, errlen, "at most %d ports", WCONF_MAX_EXPOSE);
            return -1;
        }
        ports[n++] = (unsigned short)port;
    }
    memcpy(a->expose, ports, (size_t)n * sizeof(ports[0]));
    a->n_expose = n;
    return 0;
}

static int set_yes_no(int *out, const char *value, char *err, size_t errlen)
{
    if (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0) {
        snprintf(err, errlen, "expected yes or no");
        return -1;
    }
    *out = strcmp(value, "yes") == 0;
    return 0;
}

int agent_port_exposed(const struct agent_conf *a, unsigned port)
{
    if (port == ENVD_PORT)
        return 1;
    for (int i = 0; i < a->n_expose; i++)
        if (a->expose[i] == port)
            return 1;
    return 0;
}

int agent_conf_set(struct agent_conf *a, const char *key, const char *value, char *err,
                   size_t errlen)
{
    if (strcmp(key, "mode") == 0)
        return set_mode(a, value, err, errlen);
    if (strcmp(key, "template") == 0)
        return copy(a->tmpl, sizeof(a->tmpl), value, err, errlen);
    if (strcmp(key, "work_tree") == 0)
        return copy(a->work_tree, sizeof(a->work_tree), value, err, errlen);
    if (strcmp(key, "gate_dir") == 0)
        return copy(a->gate_dir, sizeof(a->gate_dir), value, err, errlen);
    if (strcmp(key, "policy") == 0)
        return copy(a->policy, sizeof(a->policy), value, err, errlen);
    if (strcmp(key, "permission_mode") == 0)
        return one_of(a->permission_mode, sizeof(a->permission_mode), value, "prompt", "strict",
                      err, errlen);
    if (strcmp(key, "os_sandbox") == 0)
        return one_of(a->os_sandbox, sizeof(a->os_sandbox), value, "bwrap", NULL, err, errlen);
    if (strcmp(key, "expose_ports") == 0)
        return set_expose(a, value, err, errlen);
    if (strcmp(key, "allow_public_traffic") == 0)
        return set_yes_no(&a->public_traffic, value, err, errlen);
    if (strcmp(key, "ask_timeout") == 0) {
        if (config_parse_int(value, 1, 3600, &a->ask_timeout_s) != 0) {
            snprintf(err, errlen, "expected seconds in [1, 3600]");
            return -1;
        }
        return 0;
    }
    return 1;
}

/* A directory given relative is taken from where workerd was started, and
 * kept absolute: envd is told it, and the gate compares canonical paths. */
static int absolute_dir(const char *key, char *dir, size_t len, char *err, size_t errlen)
{
    char real[4096];

    if (!realpath(dir, real)) {
        snprintf(err, errlen, "%s %s: %s", key, dir, strerror(errno));
        return -1;
    }
    if (strlen(real) >= len) {
        snprintf(err, errlen, "%s %s: path too long", key, dir);
        return -1;
    }
    snprintf(dir, len, "%s", real);
    return 0;
}

int agent_conf_finish(struct worker_conf *c, char *err, size_t errlen)
{
    struct agent_conf *a = &c->agent;
    const char *home = getenv("HOME");

    if (!a->tmpl[0])
        snprintf(a->tmpl, sizeof(a->tmpl), "base");
    if (!a->work_tree[0])
        snprintf(a->work_tree, sizeof(a->work_tree), ".");
    if (absolute_dir("work_tree", a->work_tree, sizeof(a->work_tree), err, errlen) != 0)
        return -1;
    if (!a->gate_dir[0])
        snprintf(a->gate_dir, sizeof(a->gate_dir), "%.200s/.corral-gate",
                 home && home[0] == '/' ? home : c->state_dir);
    if (mkdir(a->gate_dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "gate_dir %s: %s", a->gate_dir, strerror(errno));
        return -1;
    }
    if (absolute_dir("gate_dir", a->gate_dir, sizeof(a->gate_dir), err, errlen) != 0)
        return -1;
    if (a->policy[0] && access(a->policy, R_OK) != 0) {
        snprintf(err, errlen, "policy %s: %s", a->policy, strerror(errno));
        return -1;
    }
    /* The one template: an agent has no images, only this machine. */
    c->n_templates = 1;
    snprintf(c->templates[0].name, sizeof(c->templates[0].name), "%s", a->tmpl);
    snprintf(c->templates[0].image, sizeof(c->templates[0].image), "(this machine)");
    return 0;
}
