/*
 * csp.h — the Content-Security-Policy (CSP Level 3) sent with the lab page
 * (GET /): everything from the page's own origin only, and its inline
 * <script> and <style> elements allowed by their SHA-256 hashes, computed
 * once at start from the page the api serves — so the policy always
 * matches the page that was built in, and no other inline script can run.
 */
#ifndef SRV_CSP_H
#define SRV_CSP_H

#include <stddef.h>

/* Longest policy, bytes with the NUL. */
#define SRV_CSP_MAX 2048

/* Write the policy for the HTML document html[0 .. len) into out (cap
 * bytes):
 *   default-src 'self'; script-src 'self' 'sha256-…'…;
 *   style-src 'self' 'sha256-…'…; style-src-attr 'unsafe-inline';
 *   img-src 'self' data: blob:; connect-src 'self'; object-src 'none';
 *   base-uri 'none'; form-action 'self'; frame-ancestors 'self'
 * with one hash per inline element (an element with a src attribute is
 * not inline). The hash is over the element's text with CR LF and lone
 * CR turned into LF, as the HTML parser hands it to the browser (WHATWG
 * HTML, "preprocessing the input stream"). style-src-attr admits the
 * style attributes the page sets from script; data: and blob: images are
 * its icon and the SVG answers it shows. Returns 0, or -1 when the policy
 * does not fit or hashing fails. */
int srv_csp_build(char *out, size_t cap, const char *html, size_t len);

/* Build the lab page's policy (asks the api for GET /). Call once before
 * serving. Returns 0, -1 when it cannot be built. */
int srv_csp_init(void);

/* The lab page's policy, or NULL before srv_csp_init succeeded. */
const char *srv_csp_lab(void);

#endif /* SRV_CSP_H */
