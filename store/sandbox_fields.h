/* sandbox_fields.h: the sandbox record's Redis hash, field by field. One
 * table (sandbox_fields.c) names every field of struct sandbox_record, where
 * it lives in the struct and how its value is spelled; the store decodes a
 * hash (sandbox_record_fill) and encodes a create's record (sandbox_insert)
 * through it, and nothing else spells a field. */
#ifndef CORRAL_SANDBOX_FIELDS_H
#define CORRAL_SANDBOX_FIELDS_H

#include "sandbox_store.h"

#include <stddef.h>

/* The one field read on its own (sandbox_worker_is). */
#define SANDBOX_FIELD_WORKER "worker"

enum sandbox_field_kind {
    SANDBOX_FIELD_TEXT,         /* const char *: absent or "" keeps the default */
    SANDBOX_FIELD_TEXT_OR_NULL, /* const char *: NULL when absent, "" kept; not written if NULL */
    SANDBOX_FIELD_STATE,        /* enum sandbox_state, by its word (sandbox_codec.h) */
    SANDBOX_FIELD_REAL,         /* double, written "%.3f" */
    SANDBOX_FIELD_LONG,         /* long */
    SANDBOX_FIELD_MILLIS,       /* long long, ms since the epoch */
    SANDBOX_FIELD_FLAG,         /* int 1 or 0, written as the words yes or no */
    SANDBOX_FIELD_TRISTATE,     /* int 1, 0 or -1 (not given), written yes, no or "" */
};

struct sandbox_field {
    const char *name;
    size_t offset; /* in struct sandbox_record */
    enum sandbox_field_kind kind;
    const char *yes, *no; /* FLAG and TRISTATE: the words for 1 and 0 */
    int on_create;        /* written by a create, in the table's order */
};

extern const struct sandbox_field sandbox_fields[];
extern const size_t sandbox_nfields;

#define SANDBOX_FIELDS_MAX 40

/* A record as field/value pairs: fv[0..2n); numbers are spelled into num. */
struct sandbox_encoded {
    int n;
    const char *fv[2 * SANDBOX_FIELDS_MAX];
    char num[SANDBOX_FIELDS_MAX][32];
};

/* Which fields sandbox_record_encode writes. */
enum sandbox_encode_set {
    SANDBOX_ENCODE_CREATE, /* what a create writes (sandbox_insert) */
    SANDBOX_ENCODE_ALL,    /* every field the record holds */
};

/* r's fields as pairs; out's pointers point into r's strings and into out. */
void sandbox_record_encode(const struct sandbox_record *r, enum sandbox_encode_set set,
                           struct sandbox_encoded *out);

#endif
