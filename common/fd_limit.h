/* fd_limit.h: a daemon that holds thousands of connections (workerd's data
 * port, corral-tunneld's streams) raises its open-files soft limit to the
 * hard one at start: 1024 by default, a few hundred held streams. */
#ifndef CORRAL_FD_LIMIT_H
#define CORRAL_FD_LIMIT_H

/* Raises RLIMIT_NOFILE's soft limit to its hard one; a failure is logged as
 * who's (the log line's prefix) and changes nothing else. */
void fd_limit_raise(const char *who);

#endif
