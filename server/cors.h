/*
 * cors.h — Cross-Origin Resource Sharing (Fetch standard, "CORS protocol"):
 * which Access-Control-Allow-Origin a response carries.
 */
#ifndef SRV_CORS_H
#define SRV_CORS_H

/* Methods and request headers a preflight allows, and how long a browser
 * may cache the preflight (seconds). */
#define SRV_CORS_ALLOW_HEADERS                                                 \
    "Content-Type, Authorization, X-Request-Id, "                              \
    "Inference-Header-Content-Length"
#define SRV_CORS_EXPOSE_HEADERS                                                \
    "X-Request-Id, Server-Timing, Retry-After, "                               \
    "Inference-Header-Content-Length"
#define SRV_CORS_MAX_AGE "600"

/* Install the policy: "*" allows every origin; otherwise a comma-separated
 * list of at most 32 exact origins ("https://a.example,
 * http://localhost:3000"), compared byte for byte after trimming blanks.
 * The string is copied. Returns 0, or -1 when the list has no origin, more
 * than 32, or an entry that is not scheme://host[:port] (a path, even a
 * trailing slash, or a '*' inside a list never matches what browsers
 * send). */
int srv_cors_init(const char *origins);

/* The Access-Control-Allow-Origin value for a request with this Origin
 * header (NULL when absent): "*" under the wildcard policy, the origin
 * itself when listed, NULL (send no header) otherwise. *vary is set to 1
 * when the answer depends on Origin (allow-list policy), else 0. The
 * returned pointer lives as long as origin or the policy. */
const char *srv_cors_allow_origin(const char *origin, int *vary);

#endif /* SRV_CORS_H */
