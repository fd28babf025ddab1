/* GET /v1/audit: the caller's workspace's audit trail, owner only (the
 * router refuses members with 403 owner_required). Oldest first; a page's
 * "next" is the cursor of the one after it, null at the end (decision 0045). */
#include "audit_query.h"
#include "audit_view.h"
#include "handlers.h"
#include "respond.h"

void h_audit(struct request *req)
{
    struct audit_query q;
    struct audit_page page;
    char err[160];

    if (audit_query_parse(req, &q, err, sizeof(err)) != 0) {
        respond_error(req, 400, "%s", err);
        return;
    }
    if (audit_read(req->rc, req->cred.ws, &q, &page) != 0) {
        respond_store_down(req);
        return;
    }
    respond_json(req, 200, audit_page_view(&page));
    audit_page_free(&page);
}
