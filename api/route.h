/*
 * route.h — the route table: every (method, path) attnd answers, its
 * handler, the name metrics use, and its "Allow" value. GET routes also
 * answer HEAD (the server drops the body); OPTIONS is answered 204 with the
 * same Allow value (the server adds the CORS headers).
 */
#ifndef API_ROUTE_H
#define API_ROUTE_H

#include <stddef.h>

#include "call.h"

typedef struct {
    const char *method; /* "GET" or "POST" */
    const char *path;   /* path ({model}: a model name, route.c); also the
                           route name for metrics */
    api_handler handler;
    const char *allow; /* "GET, HEAD, OPTIONS" or "POST, OPTIONS" */
    int json_body;     /* 1: the body is a JSON object (POST routes) */
    int vary_accept;   /* 1: the answer depends on Accept (SVG later) */
} api_route;

/* The route whose path matches `path` (equal, or a known model name
 * where the route has {model}), or NULL (404). */
const api_route *api_route_find(const char *path);

/* The table, for tests and documentation: routes 0 … api_route_count()-1. */
size_t api_route_count(void);
const api_route *api_route_at(size_t i);

/* Allow value for "OPTIONS *": every method some route answers. */
#define API_ALLOW_ANY "GET, HEAD, POST, OPTIONS"

#endif /* API_ROUTE_H */
