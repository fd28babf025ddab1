/* interp_launch.h: the code interpreter's server, started by envd in a
 * sandbox whose template carries it (interp_launch.c, decision 0088). */
#ifndef ENVD_INTERP_LAUNCH_H
#define ENVD_INTERP_LAUNCH_H

#define INTERP_EXE "/usr/lib/corral-interp/corral-interp"
#define INTERP_PORT 49999

/* At start, before /health answers: when INTERP_EXE is there (never in
 * agent mode), the server's listening socket. 0 (also when there is no
 * server to start), -1 the port could not be had. */
int interp_launch_prepare(void);

/* Starts the server, and starts it again whenever it ends. It is told the
 * access token's digest and waits for it before serving; a warm sandbox's
 * (warm 1) only once claimed, its python kernel started meanwhile. */
void interp_launch_start(int warm);

/* A warm sandbox was claimed (/init): the server waiting is told the token's
 * digest and env_json, the claim's env vars (a JSON object), which it sets
 * in its kernel already started and for those it starts later. */
void interp_launch_claimed(const char *env_json);

#endif
