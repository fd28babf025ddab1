/* stop_signals.h: how corral-api, corral-sched and workerd learn to stop.
 * sigaction, not signal(): what signal() installs differs between libcs and
 * may reset the handler after one delivery. */
#ifndef CORRAL_STOP_SIGNALS_H
#define CORRAL_STOP_SIGNALS_H

/* on_stop runs on SIGTERM and SIGINT; SIGPIPE is ignored, so that a peer that
 * hung up is a failed write, not our death. restart: 1 resumes a system call
 * the signal interrupted (SA_RESTART), 0 lets it fail with EINTR. 0, or -1
 * with errno set. */
int stop_signals_install(void (*on_stop)(int), int restart);

#endif
