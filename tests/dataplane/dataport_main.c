/* dataport_main: runs workerd's data port alone, for the data-plane tests.
 *
 *   dataport_main LISTEN KEYFILE MAPFILE
 *
 * Both files are read at every request, so a test can write them after its
 * worker's handshake and its creates: KEYFILE holds the worker key (the
 * handshake's data_key), MAPFILE lines "SANDBOX=IP" (the sandboxes this
 * "worker" runs and where); "SANDBOX=IP slow" answers after 300 ms, as a
 * dockerd under load would. Every lookup appends the sandbox's id to
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

static int resolve(void *ud, const char *sandbox_id, char *ip_out, size_t len)
{
    const struct files *f = ud;
    FILE *fp = fopen(f->mapfile, "r");
    size_t idl = strlen(sandbox_id);
    char line[256];
    int rc = -1;

    if (!fp)
        return -1;
    note_lookup(f, sandbox_id);
    while (rc != 0 && fgets(line, sizeof(line), fp)) {
        char *eq = strchr(line, '='), *slow;
        line[strcspn(line, "\r\n")] = '\0';
        if (!eq || (size_t)(eq - line) != idl || strncmp(line, sandbox_id, idl) != 0)
            continue;
        if ((slow = strstr(eq, " slow")) != NULL) {
            *slow = '\0';
            usleep(300 * 1000);
        }
        if (snprintf(ip_out, len, "%s", eq + 1) < (int)len)
            rc = 0;
    }
    fclose(fp);
    return rc;
}

int main(int argc, char **argv)
{
    static struct files f;
    struct dataport_hooks hooks = {.ud = &f, .worker_key = worker_key, .resolve = resolve};

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
