/* xengine io — human-friendly JSON text: outer levels expanded, one line per element below. */
#include "json_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > cap) cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

static void sb_indent(sbuf *b, int depth)
{
    for (int i = 0; i < depth; i++) sb_add(b, "  ", 2);
}

/* Shortest "%.Ng" text that reads back as exactly x (at most 17 digits), always with a
 * '.' or an exponent so that it reads back as a real. */
static void sb_real(sbuf *b, double x)
{
    char t[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, x);
        if (strtod(t, NULL) == x) break;
    }
    /* a whole number of moderate size in plain digits ("10.0", not the shortest "1e+01") */
    if (strpbrk(t, "eE") && x == floor(x) && fabs(x) < 1e15) snprintf(t, sizeof t, "%.1f", x);
    if (!strpbrk(t, ".eE")) strcat(t, ".0");
    sb_str(b, t);
}

/* Appends a scalar (string, number, true, false, null). */
static void sb_scalar(sbuf *b, const json_t *v)
{
    char t[32];
    switch (json_typeof(v)) {
    case JSON_REAL: sb_real(b, json_real_value(v)); return;
    case JSON_INTEGER:
        snprintf(t, sizeof t, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        sb_str(b, t);
        return;
    case JSON_TRUE: sb_str(b, "true"); return;
    case JSON_FALSE: sb_str(b, "false"); return;
    case JSON_NULL: sb_str(b, "null"); return;
    default: break;
    }
    char *q = json_dumps(v, JSON_ENCODE_ANY); /* a string: let jansson escape it */
    if (!q) {
        b->oom = 1;
        return;
    }
    sb_str(b, q);
    free(q);
}

static void sb_key(sbuf *b, const char *key)
{
    json_t *k = json_string(key);
    if (!k) {
        b->oom = 1;
        return;
    }
    sb_scalar(b, k);
    json_decref(k);
    sb_str(b, ": ");
}

/* Containers at depth < 2 are expanded one member per line, and so are arrays of
 * objects at depth 2 (e.g. the per-device list of a summary); deeper ones stay inline. */
static void sb_value(sbuf *b, const json_t *v, int depth)
{
    int expand = depth < 2 || (depth == 2 && json_is_array(v) &&
                               json_is_object(json_array_get(v, 0)));
    const char *sep = expand ? ",\n" : ", ";
    if (json_is_object(v)) {
        if (json_object_size(v) == 0) {
            sb_str(b, "{}");
            return;
        }
        sb_str(b, expand ? "{\n" : "{");
        const char *key;
        json_t *val;
        size_t i = 0, n = json_object_size(v);
        /* jansson keeps insertion order; iteration does not modify v */
        json_object_foreach((json_t *)v, key, val) {
            if (expand) sb_indent(b, depth + 1);
            sb_key(b, key);
            sb_value(b, val, depth + 1);
            if (++i < n) sb_str(b, sep);
        }
        if (expand) {
            sb_str(b, "\n");
            sb_indent(b, depth);
        }
        sb_str(b, "}");
    } else if (json_is_array(v)) {
        size_t n = json_array_size(v);
        if (n == 0) {
            sb_str(b, "[]");
            return;
        }
        sb_str(b, expand ? "[\n" : "[");
        for (size_t i = 0; i < n; i++) {
            if (expand) sb_indent(b, depth + 1);
            sb_value(b, json_array_get(v, i), depth + 1);
            if (i + 1 < n) sb_str(b, sep);
        }
        if (expand) {
            sb_str(b, "\n");
            sb_indent(b, depth);
        }
        sb_str(b, "]");
    } else {
        sb_scalar(b, v);
    }
}

char *xe_json_dump_pretty(const json_t *root)
{
    sbuf b = {0};
    sb_value(&b, root, 0);
    sb_str(&b, "\n");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

int xe_json_write_file(const char *path, const json_t *root, xe_err *err)
{
    char *text = xe_json_dump_pretty(root);
    if (!text) return xe_err_set(err, XE_ENOMEM, "%s: out of memory while serialising", path);
    int rc = xe_io_write_atomic(path, text, strlen(text), err);
    free(text);
    return rc;
}
