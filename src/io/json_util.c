/* xengine io — loading JSON files and reading typed fields with one-line errors. */
#include "json_util.h"

#include "xengine/io.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* xe_io_read_all and xe_io_read_text: kind NULL reads bytes, else text, refused at its
 * first NUL byte as soon as it is read (/dev/zero: at once, not after filling memory). */
static int read_file(const char *path, const char *kind, char **data, size_t *len, xe_err *err)
{
    *data = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return xe_err_set(err, XE_EIO, "%s: cannot open: %s", path, strerror(errno));
    /* a regular file's size is known: one too large is refused before it is read (a
     * sparse 3 GB file took 14.6 s and 2.1 GB of memory to be refused before
     * 2026-12-05); pipes and devices are still read to the limit */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > (off_t)XE_IO_MAX_FILE_BYTES) {
        fclose(f);
        return xe_err_set(err, XE_EINVAL, "%s: larger than %lld bytes (2 GiB), more than any file xengine reads", path,
                          (long long)XE_IO_MAX_FILE_BYTES);
    }
    size_t cap = 1 << 14, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return xe_err_set(err, XE_ENOMEM, "%s: out of memory reading the file", path);
    }
    int rc = XE_OK;
    for (;;) { /* to the end: a pipe or /dev/stdin has no size to ask for */
        if (cap - n < 2) {
            /* doubling, but to one byte past the limit at most: enough to see it passed */
            size_t ncap = cap * 2 < (size_t)XE_IO_MAX_FILE_BYTES + 2 ? cap * 2 : (size_t)XE_IO_MAX_FILE_BYTES + 2;
            char *p = realloc(buf, ncap);
            if (!p) {
                rc = xe_err_set(err, XE_ENOMEM, "%s: out of memory reading the file", path);
                break;
            }
            buf = p;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        const char *nul = kind && got ? memchr(buf + n, '\0', got) : NULL;
        if (nul) {
            rc = xe_err_set(err, XE_EPARSE, "%s: byte %zu: a NUL byte (%s is text)", path, (size_t)(nul - buf) + 1, kind);
            break;
        }
        n += got;
        if (n > XE_IO_MAX_FILE_BYTES) {
            rc = xe_err_set(err, XE_EINVAL, "%s: larger than %lld bytes (2 GiB), more than any file xengine reads", path,
                            (long long)XE_IO_MAX_FILE_BYTES);
            break;
        }
        if (got == 0) break;
    }
    int rd_err = ferror(f), rd_errno = errno;
    fclose(f);
    if (rc == XE_OK && rd_err) rc = xe_err_set(err, XE_EIO, "%s: cannot read: %s", path, strerror(rd_errno));
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return XE_OK;
}

int xe_io_read_all(const char *path, char **data, size_t *len, xe_err *err)
{
    return read_file(path, NULL, data, len, err);
}

int xe_io_read_text(const char *path, const char *kind, char **data, size_t *len, xe_err *err)
{
    return read_file(path, kind ? kind : "the file", data, len, err);
}

size_t xe_io_bom_len(const char *data, size_t len)
{
    return len >= 3 && !memcmp(data, "\xef\xbb\xbf", 3) ? 3 : 0;
}

int xe_json_load_buffer(const char *path, const char *data, size_t len, json_t **out, xe_err *err)
{
    *out = NULL;
    json_error_t jerr;
    json_t *root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr); /* a repeated key is an error, not "last wins" */
    if (!root) {
        if (json_error_code(&jerr) == json_error_out_of_memory)
            return xe_err_set(err, XE_ENOMEM, "%s: out of memory while parsing", path);
        if (json_error_code(&jerr) == json_error_premature_end_of_input && jerr.position == 0)
            /* nothing but the end: jansson would say "line 1 column 0" */
            return xe_err_set(err, XE_EPARSE, "%s: empty file (a JSON object was expected)", path);
        return xe_err_set(err, XE_EPARSE, "%s: line %d column %d: invalid JSON: %s", path,
                          jerr.line, jerr.column, jerr.text);
    }
    if (!json_is_object(root)) {
        json_decref(root);
        return xe_err_set(err, XE_EPARSE, "%s: the top level must be a JSON object", path);
    }
    *out = root;
    return XE_OK;
}

int xe_json_load(const char *path, json_t **out, xe_err *err)
{
    *out = NULL;
    char *data;
    size_t len;
    int rc = xe_io_read_text(path, "a JSON file", &data, &len, err);
    if (rc) return rc;
    size_t bom = xe_io_bom_len(data, len); /* a UTF-8 byte order mark, as some editors write: skipped */
    rc = xe_json_load_buffer(path, data + bom, len - bom, out, err);
    free(data);
    return rc;
}

int xe_json_batch(const char *path, const json_t *obj, const char *label, int64_t *batch, xe_err *err)
{
    *batch = 0;
    const json_t *jb = json_is_object(obj) ? json_object_get(obj, "batch") : NULL;
    int64_t b;
    if (!jb || json_is_null(jb)) return XE_OK;
    if (xe_json_as_int(jb, 1, INT64_C(1000000000), &b) != 0)
        return xe_err_set(err, XE_EINVAL, "%s: %s must be a whole number from 1 to 1000000000", path, label);
    *batch = b;
    return XE_OK;
}

int xe_json_check_format(const char *path, const json_t *root, const char *expected,
                         int required, xe_err *err)
{
    const json_t *f = json_object_get(root, "format");
    if (!f || json_is_null(f)) { /* null counts as absent (docs/formats.md) */
        if (!required) return XE_OK;
        return xe_err_set(err, XE_EPARSE, "%s: missing \"format\": \"%s\"", path, expected);
    }
    if (!json_is_string(f) || strcmp(json_string_value(f), expected) != 0)
        return xe_err_set(err, XE_EPARSE, "%s: \"format\" must be \"%s\"%s%s%s", path, expected,
                          json_is_string(f) ? " (found \"" : "",
                          json_is_string(f) ? json_string_value(f) : "",
                          json_is_string(f) ? "\")" : "");
    return XE_OK;
}

/* Looks key up; returns 1 when present (non-null), 0 when absent, or an error code. */
static int field(const char *path, const char *what, const json_t *obj, const char *key,
                 int dflt_ok, const json_t **v, xe_err *err)
{
    *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    if (*v && !json_is_null(*v)) return 1;
    if (dflt_ok) return 0;
    return xe_err_set(err, XE_EPARSE, "%s: %s: missing field \"%s\"", path, what, key);
}

int xe_json_get_str(const char *path, const char *what, const json_t *obj, const char *key,
                    int dflt_ok, const char **out, xe_err *err)
{
    const json_t *v;
    int rc = field(path, what, obj, key, dflt_ok, &v, err);
    if (rc <= 0) return rc;
    if (!json_is_string(v))
        return xe_err_set(err, XE_EPARSE, "%s: %s: field \"%s\" must be a string", path, what,
                          key);
    *out = json_string_value(v);
    return XE_OK;
}

int xe_json_get_bool(const char *path, const char *what, const json_t *obj, const char *key,
                     int dflt_ok, int *out, xe_err *err)
{
    const json_t *v;
    int rc = field(path, what, obj, key, dflt_ok, &v, err);
    if (rc <= 0) return rc;
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return XE_OK;
    }
    if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1)) {
        *out = (int)json_integer_value(v);
        return XE_OK;
    }
    return xe_err_set(err, XE_EPARSE, "%s: %s: field \"%s\" must be true or false", path, what,
                      key);
}

int xe_json_as_int(const json_t *value, int64_t lo, int64_t hi, int64_t *out)
{
    int64_t x;
    if (json_is_integer(value)) {
        x = (int64_t)json_integer_value(value);
    } else if (json_is_real(value)) {
        double d = json_real_value(value);
        /* 9.2e18 is the largest double range safely below INT64_MAX */
        if (!isfinite(d) || d != floor(d) || d < -9.2e18 || d > 9.2e18) return -1;
        x = (int64_t)d;
    } else {
        return -1;
    }
    if (x < lo || x > hi) return -1;
    *out = x;
    return 0;
}

int xe_json_get_bytes(const char *path, const char *what, const json_t *obj, const char *key,
                      int dflt_ok, int64_t *out, xe_err *err)
{
    const json_t *v;
    int rc = field(path, what, obj, key, dflt_ok, &v, err);
    if (rc <= 0) return rc;
    int64_t x;
    if (xe_json_as_int(v, INT64_MIN, INT64_MAX, &x) != 0) {
        double d = json_is_number(v) ? json_number_value(v) : NAN;
        if (isfinite(d) && d == floor(d)) /* a whole number beyond int64 (1e30) */
            return xe_err_set(err, XE_EINVAL, "%s: %s: field \"%s\" is too large (%g bytes)", path, what,
                              key, d);
        return xe_err_set(err, XE_EPARSE, "%s: %s: field \"%s\" must be an integer (bytes)",
                          path, what, key);
    }
    if (x < 0)
        return xe_err_set(err, XE_EINVAL, "%s: %s: field \"%s\" is negative (%" PRId64 ")",
                          path, what, key, x);
    *out = x;
    return XE_OK;
}

int xe_json_get_num(const char *path, const char *what, const json_t *obj, const char *key,
                    int dflt_ok, double *out, xe_err *err)
{
    const json_t *v;
    int rc = field(path, what, obj, key, dflt_ok, &v, err);
    if (rc <= 0) return rc;
    if (!json_is_number(v) || !isfinite(json_number_value(v)))
        return xe_err_set(err, XE_EPARSE, "%s: %s: field \"%s\" must be a number", path, what,
                          key);
    *out = json_number_value(v);
    return XE_OK;
}

int xe_json_key_text(const json_t *value, char *buf, size_t cap)
{
    int k;
    if (json_is_string(value)) {
        k = snprintf(buf, cap, "%s", json_string_value(value));
    } else if (json_is_integer(value)) {
        k = snprintf(buf, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(value));
    } else {
        return -1;
    }
    return (k < 0 || (size_t)k >= cap) ? -1 : 0;
}

json_t *xe_json_num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

int xe_json_put(json_t *obj, const char *key, json_t *value)
{
    if (!value) return -1;
    return json_object_set_new(obj, key, value) == 0 ? 0 : -1;
}

int xe_json_push(json_t *arr, json_t *value)
{
    if (!value) return -1;
    return json_array_append_new(arr, value) == 0 ? 0 : -1;
}

int xe_io_has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f) return 1;
    return 0;
}
