/*
 * openapi.h — the service's OpenAPI 3.1 document (api/fronts/openapi.json),
 * embedded in the binary at build time and served at GET /openapi.json.
 */
#ifndef API_OPENAPI_H
#define API_OPENAPI_H

#include <stddef.h>

/* The document's bytes (static, NUL-terminated); *len gets the length
 * without the NUL. */
const char *api_openapi_json(size_t *len);

#endif /* API_OPENAPI_H */
