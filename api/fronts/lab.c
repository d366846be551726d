/*
 * lab.c — GET /: the lab page (docs/contract.md sections 11 and 14).
 * The page's three sources, api/fronts/lab/index.html, lab.css and lab.js, are
 * embedded with the assembler's .incbin (as api/fronts/openapi.c embeds the
 * OpenAPI document; the Makefile makes this object depend on them) and
 * served as one self-contained HTML document: the stylesheet <link> and
 * the <script src> in index.html are replaced by the files' contents, so
 * the page loads nothing from the network but the requests it sends.
 */
#include <string.h>

#include "call.h"
#include "route.h"

#ifndef API_LAB_DIR
#define API_LAB_DIR "api/fronts/lab/"
#endif

#define EMBED(name, file)                                                      \
    __asm__(".pushsection .rodata,\"a\",@progbits\n"                           \
            ".balign 16\n" #name "_start:\n"                                   \
            ".incbin \"" API_LAB_DIR file "\"\n" #name "_end:\n"               \
            ".byte 0\n"                                                        \
            ".popsection\n")

EMBED(api_lab_html, "index.html");
EMBED(api_lab_css, "lab.css");
EMBED(api_lab_js, "lab.js");

extern const char api_lab_html_start[], api_lab_html_end[];
extern const char api_lab_css_start[], api_lab_css_end[];
extern const char api_lab_js_start[], api_lab_js_end[];

/* The tags in index.html that the embedded files replace. */
static const char css_link[] = "<link rel=\"stylesheet\" href=\"lab.css\">";
static const char js_script[] = "<script src=\"lab.js\"></script>";

/* Append html[from … to) to out with the two tags replaced. */
static void splice(api_buf *out, const char *html, size_t len) {
    const char *css = strstr(html, css_link);
    const char *js = strstr(html, js_script);
    const char *p = html;
    if (css && js && css < js) {
        api_buf_append(out, p, (size_t)(css - p));
        api_buf_puts(out, "<style>\n");
        api_buf_append(out, api_lab_css_start,
                       (size_t)(api_lab_css_end - api_lab_css_start));
        api_buf_puts(out, "</style>");
        p = css + sizeof css_link - 1;
        api_buf_append(out, p, (size_t)(js - p));
        api_buf_puts(out, "<script>\n");
        api_buf_append(out, api_lab_js_start,
                       (size_t)(api_lab_js_end - api_lab_js_start));
        api_buf_puts(out, "</script>");
        p = js + sizeof js_script - 1;
    }
    api_buf_append(out, p, (size_t)(html + len - p));
}

static int handle_lab(api_call *call) {
    splice(&call->out, api_lab_html_start,
           (size_t)(api_lab_html_end - api_lab_html_start));
    call->content_type = "text/html; charset=utf-8";
    return 0;
}

/* The route table's entry (route.h). */
const api_route api_route_lab = {
    .method = "GET",
    .path = "/",
    .handler = handle_lab,
    .flags = API_ROUTE_OPEN | API_ROUTE_STATIC,
};
