/* GET /files (download) and POST /files (upload), the envd HTTP file API. */
#ifndef ENVD_FILES_HTTP_H
#define ENVD_FILES_HTTP_H

#include "http.h"

void files_get(struct http_req *r);
void files_post(struct http_req *r);

#endif
