/* xengine io — internal helpers shared by the readers and writers (not installed).
 *
 * Conventions of every helper here: `path` is the file the value came from and starts
 * every error message; `what` names where the value sits ("node 3", "device 1",
 * "event 12"), and `key` is the field. Structure and type problems (missing field,
 * wrong JSON type, unparsable text) are XE_EPARSE; well-typed values that are out of
 * range or name something that does not exist are XE_EINVAL. */
#ifndef XENGINE_IO_JSON_UTIL_H
#define XENGINE_IO_JSON_UTIL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "xengine/error.h"

/* Loads the JSON document at path (a leading UTF-8 byte order mark is skipped). XE_EIO
 * when the file cannot be opened or read, XE_EPARSE (with jansson's line and column) when
 * it is not JSON, or when the top level is not an object. On XE_OK the caller owns *out
 * (json_decref). */
int xe_json_load(const char *path, json_t **out, xe_err *err);

/* The same for the len bytes at data, read from path (for the messages). */
int xe_json_load_buffer(const char *path, const char *data, size_t len, json_t **out, xe_err *err);

/* xe_io_read_all (include/xengine/io.h) reads the files these parse. */

/* 3 when data (len bytes) starts with a UTF-8 byte order mark (EF BB BF), else 0. */
size_t xe_io_bom_len(const char *data, size_t len);

/* Checks the optional "format" string of a top-level object: absent is accepted when
 * `required` is 0; present and different from `expected` is XE_EPARSE. */
int xe_json_check_format(const char *path, const json_t *root, const char *expected,
                         int required, xe_err *err);

/* Field getters. Each one looks up key in obj (a JSON object). When the key is absent:
 * if `dflt_ok` is non-zero, *out keeps its value (the caller's default) and XE_OK is
 * returned, otherwise XE_EPARSE "missing". A JSON null counts as absent. */

/* String; *out points into obj (valid while obj lives). */
int xe_json_get_str(const char *path, const char *what, const json_t *obj, const char *key,
                    int dflt_ok, const char **out, xe_err *err);
/* Boolean (true/false, or the integers 0/1). */
int xe_json_get_bool(const char *path, const char *what, const json_t *obj, const char *key,
                     int dflt_ok, int *out, xe_err *err);
/* Integer number of bytes: a JSON integer, or a real with an integral value within
 * int64 range. Negative values are XE_EINVAL ("is negative"). */
int xe_json_get_bytes(const char *path, const char *what, const json_t *obj, const char *key,
                      int dflt_ok, int64_t *out, xe_err *err);
/* Finite number (integer or real). Range checks are the caller's. */
int xe_json_get_num(const char *path, const char *what, const json_t *obj, const char *key,
                    int dflt_ok, double *out, xe_err *err);

/* The batch size an object states, its key "batch" (obj may be NULL), into *batch: 0 when
 * absent or null, XE_OK; XE_EINVAL naming the file (path) and `label` when it is not a
 * whole number from 1 to 10^9 (schedules' summary.batch, costs files' batch). */
int xe_json_batch(const char *path, const json_t *obj, const char *label, int64_t *batch, xe_err *err);

/* The value of an integer JSON number (or integral real) in [lo, hi] into *out;
 * 0 on success, -1 when value is not such a number. */
int xe_json_as_int(const json_t *value, int64_t lo, int64_t hi, int64_t *out);

/* A node key for node-link files: a string as is, an integer as its decimal text.
 * Writes into buf (size cap); returns 0, or -1 when value is neither or too long. */
int xe_json_key_text(const json_t *value, char *buf, size_t cap);

/* Finite double as a JSON real, non-finite as null (JSON has no infinity). NULL on
 * allocation failure. */
json_t *xe_json_num(double v);

/* Sets key in obj to value, stealing the reference; returns -1 when value is NULL or
 * the set fails (allocation), 0 otherwise. */
int xe_json_put(json_t *obj, const char *key, json_t *value);
/* Appends value to the array arr, stealing the reference; -1 on failure. */
int xe_json_push(json_t *arr, json_t *value);

/* Whether s holds a control character (a byte below 0x20, or 0x7f); such names are
 * refused by the readers, since names are quoted in one-line messages and other files. */
int xe_io_has_control(const char *s);

/* Serialises root for humans: the top level and its direct members (and arrays of
 * objects one level below) are expanded one member per line, anything deeper is written
 * on one line (so a node, an edge, an event or a device summary is one line). Reals are written with the fewest digits that read back
 * as the same double (exact round trip).
 * Returns a malloc'd NUL-terminated string, or NULL when out of memory. */
char *xe_json_dump_pretty(const json_t *root);

/* Writes `len` bytes of data to path atomically: writes PATH.tmp.XXXXXX (mkstemp, same
 * directory), fsyncs and closes it, then renames it over path. On any failure the
 * temporary file is removed, path is untouched and XE_EIO (message starting with path)
 * is returned. */
int xe_io_write_atomic(const char *path, const char *data, size_t len, xe_err *err);

/* xe_json_dump_pretty + xe_io_write_atomic. XE_ENOMEM when serialisation fails. */
int xe_json_write_file(const char *path, const json_t *root, xe_err *err);

/* Sorted name -> index lookup for node and device names. */
typedef struct xe_name_index {
    struct xe_name_entry {
        char *key; /* owned copy */
        int idx;
    } *e;
    int n;
} xe_name_index;

/* Builds the index of keys[0..n) (index i for keys[i]). XE_ENOMEM; XE_EINVAL naming
 * the duplicate when a key occurs twice (message "PATH: duplicate node name 'x'", using
 * path and `kind` — "node", "device"). On failure idx is left empty. */
int xe_name_index_build(xe_name_index *idx, const char *const *keys, int n,
                        const char *path, const char *kind, xe_err *err);
/* Index of key, or -1 when absent. */
int xe_name_index_find(const xe_name_index *idx, const char *key);
void xe_name_index_free(xe_name_index *idx);

#endif
