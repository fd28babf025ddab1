/* filesystem.EntryInfo in proto3 JSON, and user metadata kept in xattrs. */
#ifndef ENVD_ENTRY_H
#define ENVD_ENTRY_H

#include <jansson.h>
#include <sys/stat.h>

#define ENTRY_XATTR_PREFIX "user.e2b."

/* EntryInfo for path (not following a final symlink). NULL with errno set. */
json_t *entry_info(const char *path);
/* The same from an lstat result already at hand. */
json_t *entry_info_from_stat(const char *path, const struct stat *st);

/* The metadata map of path (user.e2b.* xattrs, prefix stripped); empty object if none. */
json_t *entry_metadata(const char *path);

/* Replaces the user.e2b.* xattrs of path with meta (keys already lowercased). -1 + errno. */
int entry_set_metadata(const char *path, json_t *meta);

#endif
