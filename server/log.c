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

#include "api.h"

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

/* v's decimal digits, zero-padded to at least min_digits, written so that
 * they end just before end; returns where they start. */
static char *digits_back(char *end, unsigned long long v, int min_digits) {
    char *p = end;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
        min_digits--;
    } while (v > 0 || min_digits > 0);
    return p;
}

size_t srv_format_ms(char *buf, double ms) {
    if (!(ms >= 0.0 && ms < 1e12)) /* not a duration: printf says what */
        return (size_t)snprintf(buf, SRV_MS_TEXT_MAX, "%.3f", ms);
    unsigned long long us = (unsigned long long)(ms * 1000.0 + 0.5);
    char tmp[SRV_MS_TEXT_MAX];
    char *end = tmp + sizeof tmp;
    char *p = digits_back(end, us % 1000, 3);
    *--p = '.';
    p = digits_back(p, us / 1000, 1);
    size_t n = (size_t)(end - p);
    memcpy(buf, p, n);
    buf[n] = '\0';
    return n;
}

/* v in decimal: printf's "%llu" without its cost. */
static void put_uint(line *l, unsigned long long v) {
    char tmp[24];
    char *end = tmp + sizeof tmp;
    char *p = digits_back(end, v, 1);
    put(l, p, (size_t)(end - p));
}

static void put_int(line *l, int v) {
    if (v < 0)
        puts_(l, "-");
    put_uint(l, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v);
}

static void put_ms(line *l, double ms) {
    char tmp[SRV_MS_TEXT_MAX];
    put(l, tmp, srv_format_ms(tmp, ms));
}

/* The UTC time to the millisecond; the date and time of day are formatted
 * once a second per thread. */
static void put_time(line *l) {
    static _Thread_local time_t cached_sec = -1;
    static _Thread_local char cached[32];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (ts.tv_sec != cached_sec) {
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        strftime(cached, sizeof cached, "%Y-%m-%dT%H:%M:%S", &tm);
        cached_sec = ts.tv_sec;
    }
    char millis[5] = {'.', 0, 0, 0, 'Z'};
    digits_back(millis + 4, (unsigned long long)(ts.tv_nsec / 1000000L), 3);
    puts_(l, cached);
    put(l, millis, sizeof millis);
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

/* s as a JSON string, or null when s is NULL. */
static void put_json_or_null(line *l, const char *s, size_t max) {
    if (s == NULL)
        puts_(l, "null");
    else
        put_json_string(l, s, max);
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
        puts_(&l, ",\"status\":");
        put_int(&l, rec->status);
        puts_(&l, ",\"bytes\":");
        put_uint(&l, rec->bytes);
        puts_(&l, ",\"duration_ms\":");
        put_ms(&l, rec->duration_ms);
        puts_(&l, ",\"client\":");
        put_json_or_null(&l, rec->client, 64);
        puts_(&l, ",\"token\":");
        put_json_or_null(&l, rec->token, 64);
        if (rec->refused != NULL) {
            puts_(&l, ",\"refused\":");
            put_json_string(&l, rec->refused, 64);
            if (rec->refused_count > 1) {
                puts_(&l, ",\"refused_count\":");
                put_uint(&l, rec->refused_count);
            }
        }
        puts_(&l, "}");
    } else {
        put_time(&l);
        puts_(&l, " ");
        put_text_token(&l, rec->request_id, 256);
        puts_(&l, " ");
        put_text_token(&l, rec->method, 32);
        puts_(&l, " ");
        put_text_token(&l, rec->path, PATH_LOG_MAX);
        puts_(&l, " ");
        put_int(&l, rec->status);
        puts_(&l, " ");
        put_uint(&l, rec->bytes);
        puts_(&l, "B ");
        put_ms(&l, rec->duration_ms);
        puts_(&l, "ms ");
        put_text_token(&l, rec->client ? rec->client : "", 64);
        puts_(&l, " ");
        put_text_token(&l, rec->token ? rec->token : "", 64);
        if (rec->refused != NULL) {
            puts_(&l, " refused=");
            put_text_token(&l, rec->refused, 64);
            if (rec->refused_count > 1) {
                puts_(&l, " x");
                put_uint(&l, rec->refused_count);
            }
        }
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
