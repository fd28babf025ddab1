/* e2b_routes.h: the routes of E2B's spec/openapi.yml that Corral does not
 * serve, in one table, so each answers 501 naming itself instead of a 404
 * that the SDK would read as "not found". Pure (no I/O). */
#ifndef CORRAL_E2B_ROUTES_H
#define CORRAL_E2B_ROUTES_H

/* The spec's path template ("/volumes/{volumeID}") that method and path match,
 * the most literal one when several do; NULL if none. *path_known is set to 1
 * when the path is one of the table's with another method (then a 405). */
const char *e2b_unserved_route(const char *method, const char *path, int *path_known);

#endif
