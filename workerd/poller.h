/* poller.h: the control channel's long-poll, on a thread of its own
 * (decision 0084). It only waits for commands; the main thread applies them
 * and tells what became of them on short heartbeats. */
#ifndef WORKERD_POLLER_H
#define WORKERD_POLLER_H

#include <jansson.h>
#include <pthread.h>
#include <signal.h>

struct worker;

/* 0 started; -1 not (the main thread then long-polls itself, as before). */
int poller_start(struct worker *w);
void poller_stop(void);
int poller_running(void);

/* The identity changed (a handshake): the poll in flight, made with the old
 * one, is dropped and the next made with the new. */
void poller_kick(void);

/* Something for the main thread: commands in the inbox, or a poll refused
 * (the identity is gone: the main thread's heartbeat will enrol again). */
int poller_has_news(void);

/* Moves the commands brought so far to the end of into (as they came). */
void poller_take(json_t *into);

/* The main thread, idle: until there is news, *stop, or ms passed. */
void poller_wait(long ms, volatile sig_atomic_t *stop);

/* Also wakes cv (under mu) on news, until called with NULLs: a batch's wait. */
void poller_wake_on(pthread_mutex_t *mu, pthread_cond_t *cv);

#endif
