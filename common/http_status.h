/* http_status.h: reason phrases for the statuses Corral's servers answer
 * (corral-api's FastCGI "Status:" line, envd, workerd's data port). */
#ifndef CORRAL_HTTP_STATUS_H
#define CORRAL_HTTP_STATUS_H

const char *http_status_text(int status);

#endif
