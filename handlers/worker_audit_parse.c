/* The body of POST /v1/worker/audit (worker_audit_parse.h). */
#include "worker_audit_parse.h"
#include "body_array.h"
#include "token.h"

#include <stdio.h>
#include <string.h>

static int one_of(const char *s, const char *const *set)
{
    for (; s && *set; set++)
        if (strcmp(s, *set) == 0)
            return 1;
    return 0;
}

static const char *str(const json_t *o, const char *k, size_t max)
{
    const char *s = json_string_value(json_object_get(o, k));

    return s && *s && strlen(s) <= max ? s : NULL;
}

/* One line of the contract's format. 0, or -1 with err. */
static int decision_parse(const char *text, struct gate_decision *d, char *err, size_t errlen)
{
    static const char *const ops[] = {"read", "write", "list", "stat", "remove",
                                      "move", "watch", "exec", NULL};
    static const char *const branches[] = {"hardlock", "policy", "worktree", "permanent",
                                           "session",  "ask",    NULL};
    static const char *const answers[] = {"allow", "deny", NULL};
    static const char *const bys[] = {"gate", "person", "timeout", NULL};
    json_t *o = strlen(text) <= WORKER_AUDIT_MAX_LINE ? json_loads(text, 0, NULL) : NULL;
    const char *op = str(o, "op", 16), *what = str(o, "path", 4096);
    const char *answer = str(o, "answer", 8);

    d->sbid = str(o, "sandbox", 32);
    if (!what)
        what = str(o, "command", 4096);
    if (!json_is_object(o) || !str(o, "time", 40) || !d->sbid || !token_is_id(d->sbid) ||
        !one_of(op, ops) || !what || !one_of(str(o, "branch", 16), branches) ||
        !one_of(answer, answers) || !one_of(str(o, "by", 8), bys)) {
        snprintf(err, errlen,
                 "must be a gate decision {time, sandbox, op, path or command, branch, answer, "
                 "by}");
        json_decref(o);
        return -1;
    }
    d->allowed = strcmp(answer, "allow") == 0;
    d->fields =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "time", str(o, "time", 40), "sandbox",
                  d->sbid, "op", op, strcmp(op, "exec") == 0 ? "command" : "path", what, "branch",
                  str(o, "branch", 16), "answer", answer, "by", str(o, "by", 8));
    /* From here on the checked copy's, not the parsed line's (freed below). */
    d->sbid = json_string_value(json_object_get(d->fields, "sandbox"));
    json_decref(o);
    if (!d->fields)
        snprintf(err, errlen, "out of memory");
    return d->fields ? 0 : -1;
}

static int line_parse(const json_t *line, size_t i, void *elem, void *ctx, char *err, size_t errlen)
{
    const char *text = json_string_value(line);
    char why[160];

    (void)ctx;
    if (!text) {
        snprintf(err, errlen, "lines[%zu]: must be a string", i);
        return -1;
    }
    if (decision_parse(text, elem, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "lines[%zu]: %s", i, why);
        return -1;
    }
    return 0;
}

static void decision_free(void *elem)
{
    json_decref(((struct gate_decision *)elem)->fields);
}

static const struct body_array_item line_how = {
    .size = sizeof(struct gate_decision), .parse = line_parse, .free = decision_free};

int worker_audit_body_parse(const json_t *body, struct worker_audit_body *out, char *err,
                            size_t errlen)
{
    enum body_array_status st;
    void *v;

    st = body_array_parse(json_object_get(body, "lines"), WORKER_AUDIT_MAX_LINES, &line_how, &v,
                          &out->n, err, errlen);
    out->v = v; /* NULL but when parsed */
    return body_array_answer(st, "lines", WORKER_AUDIT_MAX_LINES, " audit lines", err, errlen);
}

void worker_audit_body_free(struct worker_audit_body *b)
{
    body_array_free(b->v, b->n, &line_how);
    b->v = NULL;
    b->n = 0;
}
