/*
 * log.c — format access lines and messages into a fixed buffer and write
 * each with one write(2) to stderr.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "utf8.h"

#define LINE_MAX_BYTES 4096
#define PATH_LOG_MAX 1024 /* bytes of the path kept in a line */

static srv_log_format log_format = SRV_LOG_TEXT;

void srv_log_init(srv_log_format format) {
    log_format = format;
}

/* A bounded line under construction; writes past the end are dropped. */
typedef struct {
    char buf[LINE_MAX_BYTES];
    size_t len;
} line;

static void put(line *l, const char *s, size_t n) {
    size_t room = sizeof l->buf - 1 - l->len; /* keep one byte for '\n' */
    if (n > room)
        n = room;
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void puts_(line *l, const char *s) {
    put(l, s, strlen(s));
}

static void putf(line *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void putf(line *l, const char *fmt, ...) {
    char tmp[LINE_MAX_BYTES];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(l, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void put_time(line *l) {
    struct timespec ts;
    struct tm tm;
    char tmp[32];
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(tmp, sizeof tmp, "%Y-%m-%dT%H:%M:%S", &tm);
    putf(l, "%s.%03ldZ", tmp, ts.tv_nsec / 1000000L);
}

/* A JSON string literal for s (RFC 8259 section 7). */
static void put_json_string(line *l, const char *s, size_t max) {
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    if (n > max)
        n = max;
    puts_(l, "\"");
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            put(l, esc, 2);
            i++;
        } else if (c < 0x20 || c == 0x7F) {
            putf(l, "\\u%04x", c);
            i++;
        } else {
            size_t len = api_utf8_len(p + i, n - i);
            if (len == 0) {
                puts_(l, "\\ufffd");
                i++;
            } else {
                put(l, (const char *)p + i, len);
                i += len;
            }
        }
    }
    puts_(l, "\"");
}

/* s as one whitespace-free token: bytes outside '!'..'~' become \xHH. */
static void put_text_token(line *l, const char *s, size_t max) {
    size_t n = strlen(s);
    if (n > max)
        n = max;
    if (n == 0)
        puts_(l, "-");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c > ' ' && c < 0x7F && c != '\\')
            put(l, (const char *)&c, 1);
        else
            putf(l, "\\x%02x", c);
    }
}

static void emit(line *l) {
    l->buf[l->len++] = '\n';
    const char *p = l->buf;
    size_t left = l->len;
    while (left > 0) {
        ssize_t w = write(STDERR_FILENO, p, left);
        if (w <= 0)
            return; /* nowhere to report a failing stderr */
        p += w;
        left -= (size_t)w;
    }
}

void srv_log_access(const srv_access *rec) {
    line l = {.len = 0};
    if (log_format == SRV_LOG_JSON) {
        puts_(&l, "{\"time\":\"");
        put_time(&l);
        puts_(&l, "\",\"request_id\":");
        put_json_string(&l, rec->request_id, 256);
        puts_(&l, ",\"method\":");
        put_json_string(&l, rec->method, 32);
        puts_(&l, ",\"path\":");
        put_json_string(&l, rec->path, PATH_LOG_MAX);
        putf(&l, ",\"status\":%d,\"bytes\":%zu,\"duration_ms\":%.3f}",
             rec->status, rec->bytes, rec->duration_ms);
    } else {
        put_time(&l);
        puts_(&l, " ");
        put_text_token(&l, rec->request_id, 256);
        puts_(&l, " ");
        put_text_token(&l, rec->method, 32);
        puts_(&l, " ");
        put_text_token(&l, rec->path, PATH_LOG_MAX);
        putf(&l, " %d %zuB %.3fms", rec->status, rec->bytes, rec->duration_ms);
    }
    emit(&l);
}

void srv_log_message(const char *level, const char *fmt, ...) {
    char msg[LINE_MAX_BYTES / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    line l = {.len = 0};
    if (log_format == SRV_LOG_JSON) {
        puts_(&l, "{\"time\":\"");
        put_time(&l);
        puts_(&l, "\",\"level\":");
        put_json_string(&l, level, 16);
        puts_(&l, ",\"msg\":");
        put_json_string(&l, msg, sizeof msg);
        puts_(&l, "}");
    } else {
        if (strcmp(level, "info") != 0) {
            puts_(&l, "attnd: ");
            puts_(&l, level);
            puts_(&l, ": ");
        }
        puts_(&l, msg);
    }
    emit(&l);
}
