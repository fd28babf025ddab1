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

/* Starts the server, and starts it again whenever it ends, with envd's
 * environment as it is now: at start, or after /init for a warm sandbox. */
void interp_launch_start(void);

#endif
