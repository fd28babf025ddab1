/* volume_req.h: a volume file API request as the worker reads it (decision
 * 0071): E2B's spec/openapi-volumecontent.yml operations, the request line
 * and query parsed and checked, the path normalised. Pure:
 * tests/workerd/unit_volume.c. */
#ifndef WORKERD_VOLUME_REQ_H
#define WORKERD_VOLUME_REQ_H

#include <stddef.h>

#define VOLUME_PATH_MAX 4096
#define VOLUME_DEPTH_MAX 64         /* a listing's levels */
#define VOLUME_UGID_MAX 2147483646L /* uid and gid; 2^32-1 would mean "unchanged" to chown */
/* The permission bits only: no setuid, setgid or sticky bit is made through
 * the API (a setuid file in a volume would run as its owner in a sandbox). */
#define VOLUME_MODE_MAX 0777L

enum volume_op {
    VOP_STAT,     /* GET .../path */
    VOP_SET_META, /* PATCH .../path {uid, gid, mode} */
    VOP_REMOVE,   /* DELETE .../path */
    VOP_LIST,     /* GET .../dir?depth= */
    VOP_MKDIR,    /* POST .../dir?uid=&gid=&mode=&force= */
    VOP_READ,     /* GET .../file */
    VOP_WRITE,    /* PUT .../file?uid=&gid=&mode=&force=, the file's bytes */
};

struct volume_req {
    enum volume_op op;
    char volume_id[32];         /* the URL's {volumeID} */
    char path[VOLUME_PATH_MAX]; /* normalised: "" the volume's root, else "a/b" */
    long depth;                 /* VOP_LIST, 1 by default */
    long uid, gid, mode;        /* -1: not given */
    int force;
};

/* Parses the request line of head ("<METHOD> /volumecontent/<id>/<path|dir|
 * file>?<query> HTTP/1.1\r\n..."). 0, or an HTTP status with why: 400 a bad
 * query (each parameter named: an unknown one, one given twice, a missing
 * path, '..' in it, a number out of range), 404 no such operation, 405 a
 * method the operation does not take. */
int volume_req_parse(const char *head, size_t len, struct volume_req *out, char *why,
                     size_t whylen);

/* Normalises a path of the volume: '/'-separated, relative or absolute (both
 * from the volume's root), empty and "." parts dropped, ".." refused. out
 * ("a/b", "" for the root) has at most len-1 bytes. 0, or -1 with why. */
int volume_path_normalise(const char *in, char *out, size_t len, const char **why);

/* PATCH's body {uid, gid, mode} (each optional, nothing else) into r's. 0,
 * or -1 with why (a 400). */
int volume_meta_parse(const char *body, size_t len, struct volume_req *r, char *why, size_t whylen);

#endif
