/* The gate's question to the person, on a terminal, one at a time across envds. */
#ifndef ENVD_GATE_ASK_H
#define ENVD_GATE_ASK_H

enum gate_reply { GR_ONCE, GR_SESSION, GR_ALWAYS, GR_DENY, GR_TIMEOUT };

/*
 * Writes question to tty and reads answer lines until one is o, s, a or d.
 * lock_file (in the gate dir) is flock'ed for the whole exchange so questions
 * of several envds never interleave; waiting for it counts against
 * timeout_s. Anything that goes wrong (no terminal) is GR_DENY.
 */
enum gate_reply gate_ask(const char *tty, const char *lock_file, int timeout_s,
                         const char *question);

#endif
