/* dataport_main: runs workerd's data port alone, for the data-plane tests.
 *
 *   dataport_main LISTEN KEYFILE MAPFILE
 *
 * Both files are read at every request, so a test can write them after its
 * worker's handshake and its creates: KEYFILE holds the worker key (the
 * handshake's data_key), MAPFILE lines "SANDBOX=IP" (the sandboxes this
 * "worker" runs and where); "SANDBOX=IP slow" answers after 300 ms, as a
 * dockerd under load would; "SANDBOX=IP cached" is answered inside the event
 * loop (resolve_cached), as workerd's cache answers for a running sandbox,
 * so that its requests meet the loop's other events in the order workerd's
 * do. Every lookup appends the sandbox's id to
 * MAPFILE.lookups. Runs until killed. */
#include "dataport.h"
#include "log.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct files {
    const char *keyfile, *mapfile;
};

static int worker_key(void *ud, char *out, size_t len)
{
    const struct files *f = ud;
    FILE *fp = fopen(f->keyfile, "r");
    size_t n;

    if (!fp)
        return -1;
    n = fread(out, 1, len - 1, fp);
    fclose(fp);
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' '))
        n--;
    out[n] = '\0';
    return n > 0 ? 0 : -1;
}

static void note_lookup(const struct files *f, const char *sandbox_id)
{
    char path[4096];
    FILE *fp;

    if (snprintf(path, sizeof(path), "%s.lookups", f->mapfile) >= (int)sizeof(path))
        return;
    fp = fopen(path, "a");
    if (!fp)
        return;
    fprintf(fp, "%s\n", sandbox_id);
    fclose(fp);
}

/* sandbox_id's line of MAPFILE: its address into ip_out and its mark ("slow",
 * "cached" or "") into mark. 0, or -1. */
static int map_find(const struct files *f, const char *sandbox_id, char *ip_out, size_t len,
                    char *mark, size_t mark_len)
{
    FILE *fp = fopen(f->mapfile, "r");
    size_t idl = strlen(sandbox_id);
    char line[256];
    int rc = -1;

    if (!fp)
        return -1;
    while (rc != 0 && fgets(line, sizeof(line), fp)) {
        char *eq = strchr(line, '='), *sp;
        line[strcspn(line, "\r\n")] = '\0';
        if (!eq || (size_t)(eq - line) != idl || strncmp(line, sandbox_id, idl) != 0)
            continue;
        sp = strchr(eq, ' ');
        snprintf(mark, mark_len, "%s", sp ? sp + 1 : "");
        if (sp)
            *sp = '\0';
        if (snprintf(ip_out, len, "%s", eq + 1) < (int)len)
            rc = 0;
    }
    fclose(fp);
    return rc;
}

static int resolve(void *ud, const char *sandbox_id, char *ip_out, size_t len)
{
    char mark[16];
    int rc;

    note_lookup(ud, sandbox_id);
    rc = map_find(ud, sandbox_id, ip_out, len, mark, sizeof(mark));
    if (rc == 0 && strcmp(mark, "slow") == 0)
        usleep(300 * 1000);
    return rc;
}

static int resolve_cached(void *ud, const char *sandbox_id, char *ip_out, size_t len)
{
    char mark[16];

    if (map_find(ud, sandbox_id, ip_out, len, mark, sizeof(mark)) != 0)
        return -1;
    return strcmp(mark, "cached") == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    static struct files f;
    struct dataport_hooks hooks = {
        .ud = &f, .worker_key = worker_key, .resolve = resolve, .resolve_cached = resolve_cached};

    if (argc != 4) {
        fprintf(stderr, "usage: %s LISTEN KEYFILE MAPFILE\n", argv[0]);
        return 2;
    }
    log_set_name("dataport");
    signal(SIGPIPE, SIG_IGN);
    f.keyfile = argv[2];
    f.mapfile = argv[3];
    if (dataport_start(argv[1], &hooks) != 0)
        return 1;
    for (;;)
        pause();
}
