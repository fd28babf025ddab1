/* states.c: the one table of each set of states and its wire names. */
#include "states.h"

#include <stddef.h>
#include <string.h>

static const struct {
    enum sb_state state;
    const char *name;
} sb_names[] = {
    {SB_NONE, ""},         {SB_RUNNING, "running"}, {SB_PAUSED, "paused"},
    {SB_EXITED, "exited"}, {SB_FAILED, "failed"},
};

static const struct {
    enum dk_state state;
    const char *name;
} dk_names[] = {
    {DK_CREATED, "created"},   {DK_RUNNING, "running"},
    {DK_PAUSED, "paused"},     {DK_RESTARTING, "restarting"},
    {DK_REMOVING, "removing"}, {DK_EXITED, "exited"},
    {DK_DEAD, "dead"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const char *sb_state_name(enum sb_state s)
{
    for (size_t i = 0; i < COUNT(sb_names); i++)
        if (sb_names[i].state == s)
            return sb_names[i].name;
    return "";
}

enum sb_state sb_state_decode(const char *name)
{
    for (size_t i = 0; name && i < COUNT(sb_names); i++)
        if (strcmp(sb_names[i].name, name) == 0)
            return sb_names[i].state;
    return SB_NONE;
}

enum dk_state dk_state_decode(const char *name)
{
    for (size_t i = 0; name && i < COUNT(dk_names); i++)
        if (strcmp(dk_names[i].name, name) == 0)
            return dk_names[i].state;
    return DK_UNKNOWN;
}

const char *dk_state_name(enum dk_state s)
{
    for (size_t i = 0; i < COUNT(dk_names); i++)
        if (dk_names[i].state == s)
            return dk_names[i].name;
    return NULL;
}
