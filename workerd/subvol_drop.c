/* subvol_drop.c: see subvol_drop.h.
 *
 * Where dockerd keeps a container's subvolumes is its own business, read
 * from its data root: image/btrfs/layerdb/mounts/<container id>/{mount-id,
 * init-id} name them under btrfs/subvolumes/. Both files are checked to hold
 * what dockerd writes there (a layer id, 64 hex digits, "-init" for the
 * other); anything else, or a data root not at hand (dockerd on another
 * host, workerd in a container), leaves removals to dockerd. */
#include "subvol_drop.h"

#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/btrfs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define LAYER_HEX 64

static char subvols[PATH_MAX], mounts[PATH_MAX];
static int on;
static _Thread_local int dropped;

int subvol_drop_on(void)
{
    return on;
}

static int is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void subvol_drop_init(struct docker *d, int enabled)
{
    char err[256];
    const char *driver, *root;
    long status = 0;
    json_t *info = NULL;

    on = 0;
    if (!enabled) {
        log_info("container removal: dockerd's own (fast_remove = 0)");
        return;
    }
    if (docker_call(d, "GET", "/info", NULL, DOCKER_TIMEOUT_MS, &status, &info, err, sizeof(err)) !=
            0 ||
        status != 200) {
        json_decref(info);
        log_info("container removal: dockerd's own (its /info did not answer)");
        return;
    }
    driver = json_string_value(json_object_get(info, "Driver"));
    root = json_string_value(json_object_get(info, "DockerRootDir"));
    if (driver && root && strcmp(driver, "btrfs") == 0 && *root == '/') {
        snprintf(subvols, sizeof(subvols), "%s/btrfs/subvolumes", root);
        snprintf(mounts, sizeof(mounts), "%s/image/btrfs/layerdb/mounts", root);
        on = is_dir(subvols) && is_dir(mounts);
    }
    log_info("container removal: %s",
             on ? "btrfs subvolumes dropped ahead of dockerd's walk"
                : "dockerd's own (not btrfs, or its data root is elsewhere)");
    json_decref(info);
}

static int hex_only(const char *s, size_t n)
{
    return strspn(s, "0123456789abcdef") == n;
}

/* The layer id in mounts/<id>/<file>, checked: 0, or -1. */
static int layer_of(const char *id, const char *file, const char *suffix, char *out, size_t len)
{
    char path[PATH_MAX + 128];
    size_t n, want = LAYER_HEX + strlen(suffix);
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s/%s", mounts, id, file);
    f = fopen(path, "re");
    if (!f)
        return -1;
    n = fread(out, 1, len - 1, f);
    fclose(f);
    out[n] = '\0';
    if (n != want || !hex_only(out, LAYER_HEX) || strcmp(out + LAYER_HEX, suffix) != 0)
        return -1;
    return 0;
}

/* Destroys subvolume name under dir and makes an empty one in its place.
 * A destroy refused (a subvolume the sandbox nested inside, say) leaves it
 * whole to dockerd. 1 swapped, 0 left, -1 destroyed but not replaced. */
static int swap_empty(int dir, const char *name)
{
    struct btrfs_ioctl_vol_args args;

    memset(&args, 0, sizeof(args));
    snprintf(args.name, sizeof(args.name), "%s", name);
    if (ioctl(dir, BTRFS_IOC_SNAP_DESTROY, &args) != 0)
        return 0;
    if (ioctl(dir, BTRFS_IOC_SUBVOL_CREATE, &args) != 0) {
        log_err("subvolume %s destroyed but not replaced (%s): dockerd cannot remove its "
                "container",
                name, strerror(errno));
        return -1;
    }
    return 1;
}

int subvol_drop(const char *id)
{
    char layer[LAYER_HEX + 8], init[LAYER_HEX + 8];
    int dir, rc;

    if (!on || !id || strlen(id) != LAYER_HEX || !hex_only(id, LAYER_HEX) ||
        layer_of(id, "mount-id", "", layer, sizeof(layer)) != 0 ||
        layer_of(id, "init-id", "-init", init, sizeof(init)) != 0)
        return 0;
    dir = open(subvols, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return 0;
    rc = swap_empty(dir, layer) == 1 && swap_empty(dir, init) == 1;
    close(dir);
    dropped += rc;
    return rc;
}

int subvol_drop_taken(void)
{
    int n = dropped;

    dropped = 0;
    return n;
}
