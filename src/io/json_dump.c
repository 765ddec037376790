/* xengine io — human-friendly JSON text: two expanded levels, one line per element below. */
#include "json_util.h"

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

/* Appends value as compact JSON on one line. */
static void sb_compact(sbuf *b, const json_t *v)
{
    char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
    if (!t) {
        b->oom = 1;
        return;
    }
    sb_str(b, t);
    free(t);
}

static void sb_value(sbuf *b, const json_t *v, int depth)
{
    int expand = depth < 2 && ((json_is_object(v) && json_object_size(v) > 0) ||
                               (json_is_array(v) && json_array_size(v) > 0));
    if (!expand) {
        sb_compact(b, v);
        return;
    }
    if (json_is_object(v)) {
        sb_str(b, "{\n");
        const char *key;
        json_t *val;
        size_t i = 0, n = json_object_size(v);
        /* jansson keeps insertion order; cast is safe: iteration does not modify */
        json_object_foreach((json_t *)v, key, val) {
            json_t *k = json_string(key);
            if (!k) {
                b->oom = 1;
                return;
            }
            sb_indent(b, depth + 1);
            sb_compact(b, k);
            json_decref(k);
            sb_str(b, ": ");
            sb_value(b, val, depth + 1);
            sb_str(b, ++i < n ? ",\n" : "\n");
        }
        sb_indent(b, depth);
        sb_str(b, "}");
    } else {
        sb_str(b, "[\n");
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n; i++) {
            sb_indent(b, depth + 1);
            sb_value(b, json_array_get(v, i), depth + 1);
            sb_str(b, i + 1 < n ? ",\n" : "\n");
        }
        sb_indent(b, depth);
        sb_str(b, "]");
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
