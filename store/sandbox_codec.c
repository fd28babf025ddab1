/* sandbox_codec.c: one table per enum of sandbox_codec.h, indexed by the
 * enum, holding its wire word; a word is looked up in the same table. */
#include "sandbox_codec.h"
#include "template_store.h"

#include <string.h>

static const char *const state_words[SANDBOX_STATE_COUNT] = {
    [SANDBOX_STATE_UNKNOWN] = "",        [SANDBOX_STATE_PENDING] = "pending",
    [SANDBOX_STATE_RUNNING] = "running", [SANDBOX_STATE_PAUSING] = "pausing",
    [SANDBOX_STATE_PAUSED] = "paused",   [SANDBOX_STATE_RESUMING] = "resuming",
    [SANDBOX_STATE_EXITED] = "exited",   [SANDBOX_STATE_ERROR] = "error",
    [SANDBOX_STATE_LOST] = "lost",
};

static const char *const outcome_words[TRANSITION_COUNT] = {
    [TRANSITION_OK] = "ok",
    [TRANSITION_PAUSE] = "pause",
    [TRANSITION_KILL] = "kill",
    [TRANSITION_NOTDUE] = "notdue",
    [TRANSITION_ABSENT] = "absent",
    [TRANSITION_NETWORK] = "network",
    [TRANSITION_OVER_LIMIT] = "over_limit",
    [TRANSITION_REFUSED] = "",
};

static const char *const orphan_words[ORPHAN_COUNT] = {
    [ORPHAN_SKIP] = "skip",
    [ORPHAN_REPLACE] = "replace",
    [ORPHAN_LOST] = "lost",
};

static const char *const reported_words[SANDBOX_REPORTED_COUNT] = {
    [SANDBOX_REPORTED_UNKNOWN] = "",      [SANDBOX_REPORTED_RUNNING] = "running",
    [SANDBOX_REPORTED_PAUSED] = "paused", [SANDBOX_REPORTED_EXITED] = "exited",
    [SANDBOX_REPORTED_FAILED] = "failed", [SANDBOX_REPORTED_MISSING] = "missing",
};

static const char *const report_words[REPORT_COUNT] = {
    [REPORT_IGNORED] = "ignored", [REPORT_STARTED] = "started", [REPORT_STOPPED] = "stopped",
    [REPORT_KILL] = "kill",       [REPORT_PAUSED] = "paused",   [REPORT_RESUMED] = "resumed",
};

int codec_word_index(const char *const *words, int n, const char *word)
{
    if (!word || !*word)
        return -1;
    for (int i = 0; i < n; i++)
        if (*words[i] && strcmp(words[i], word) == 0)
            return i;
    return -1;
}

/* words[i], or "" out of range (a value no table names). */
static const char *word_at(const char *const *words, int n, int i)
{
    return i >= 0 && i < n ? words[i] : "";
}

const char *sandbox_state_name(enum sandbox_state s)
{
    return word_at(state_words, SANDBOX_STATE_COUNT, (int)s);
}

enum sandbox_state sandbox_state_parse(const char *word)
{
    int i = codec_word_index(state_words, SANDBOX_STATE_COUNT, word);

    return i < 0 ? SANDBOX_STATE_UNKNOWN : (enum sandbox_state)i;
}

int sandbox_state_is_live(enum sandbox_state s)
{
    return s == SANDBOX_STATE_RUNNING || s == SANDBOX_STATE_PAUSING || s == SANDBOX_STATE_PAUSED ||
           s == SANDBOX_STATE_RESUMING;
}

const char *transition_outcome_name(enum transition_outcome o)
{
    return word_at(outcome_words, TRANSITION_COUNT, (int)o);
}

enum transition_outcome transition_outcome_parse(const char *word, enum sandbox_state *refused)
{
    int i = codec_word_index(outcome_words, TRANSITION_COUNT, word);

    *refused = i < 0 ? sandbox_state_parse(word) : SANDBOX_STATE_UNKNOWN;
    return i < 0 ? TRANSITION_REFUSED : (enum transition_outcome)i;
}

const char *orphan_decision_name(enum orphan_decision d)
{
    return word_at(orphan_words, ORPHAN_COUNT, (int)d);
}

enum orphan_decision orphan_decision_parse(const char *word)
{
    int i = codec_word_index(orphan_words, ORPHAN_COUNT, word);

    return i < 0 ? ORPHAN_SKIP : (enum orphan_decision)i;
}

const char *sandbox_reported_name(enum sandbox_reported r)
{
    return word_at(reported_words, SANDBOX_REPORTED_COUNT, (int)r);
}

enum sandbox_reported sandbox_reported_parse(const char *word)
{
    int i = codec_word_index(reported_words, SANDBOX_REPORTED_COUNT, word);

    return i < 0 ? SANDBOX_REPORTED_UNKNOWN : (enum sandbox_reported)i;
}

const char *report_outcome_name(enum report_outcome o)
{
    return word_at(report_words, REPORT_COUNT, (int)o);
}

enum report_outcome report_outcome_parse(const char *word)
{
    int i = codec_word_index(report_words, REPORT_COUNT, word);

    return i < 0 ? REPORT_IGNORED : (enum report_outcome)i;
}

/* A template build's state (store/build_store.c). */
static const char *const build_state_words[] = {"", "waiting", "building", "ready", "error"};

const char *build_state_name(enum build_state s)
{
    return (unsigned)s < sizeof(build_state_words) / sizeof(*build_state_words)
               ? build_state_words[s]
               : "";
}

enum build_state build_state_parse(const char *word)
{
    for (size_t i = 1; word && i < sizeof(build_state_words) / sizeof(*build_state_words); i++)
        if (strcmp(word, build_state_words[i]) == 0)
            return (enum build_state)i;
    return BUILD_STATE_UNKNOWN;
}
