/* Signals: child reaping (envd is the sandbox's PID 1) and shutdown. */
#ifndef ENVD_REAPER_H
#define ENVD_REAPER_H

/* Blocks SIGCHLD/SIGTERM/SIGINT in the calling thread; call before any other thread
 * exists so that every thread inherits the mask. */
void reaper_block_signals(void);

/* Starts the thread that reaps children and handles SIGTERM/SIGINT. */
int reaper_start(void);

#endif
