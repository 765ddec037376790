/* xengine io — reading a devices file into an xe_recipe (docs/formats.md). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json_util.h"
#include "xengine/cost.h"
#include "xengine/io.h"

static int read_budget(const char *path, const char *what, const json_t *dev, int64_t *bytes,
                       double *frac, xe_err *err)
{
    const json_t *b = json_object_get(dev, "budget");
    if (!b || json_is_null(b))
        return xe_err_set(err, XE_EPARSE, "%s: %s: missing field \"budget\"", path, what);
    if (json_is_string(b)) {
        char where[512];
        snprintf(where, sizeof where, "%s: %s", path, what);
        return xe_io_parse_budget(where, json_string_value(b), bytes, frac, err);
    }
    if (json_is_number(b)) {
        int64_t x;
        if (xe_json_as_int(b, INT64_MIN, INT64_MAX, &x))
            return xe_err_set(err, XE_EPARSE,
                              "%s: %s: numeric budget must be a whole number of bytes (use \"NN%%\" "
                              "for a fraction)", path, what);
        if (x <= 0)
            return xe_err_set(err, XE_EINVAL, "%s: %s: budget must be > 0 bytes (found %" PRId64 ")",
                              path, what, x);
        *bytes = x;
        return XE_OK;
    }
    return xe_err_set(err, XE_EPARSE, "%s: %s: field \"budget\" must be a number of bytes or a string",
                      path, what);
}

static int read_device(const char *path, int d, const json_t *o, xe_recipe *r, xe_err *err)
{
    char what[32];
    snprintf(what, sizeof what, "device %d", d);
    if (!json_is_object(o)) return xe_err_set(err, XE_EPARSE, "%s: %s must be an object", path, what);
    const char *name, *kind;
    int rc = xe_json_get_str(path, what, o, "name", 0, &name, err);
    if (!rc) rc = xe_json_get_str(path, what, o, "kind", 0, &kind, err);
    if (rc) return rc;
    if (name[0] == '\0' || strlen(name) >= sizeof r->name[d])
        return xe_err_set(err, XE_EINVAL, "%s: %s: name must have 1 to %zu characters", path,
                          what, sizeof r->name[d] - 1);
    if (xe_io_has_control(name))
        return xe_err_set(err, XE_EINVAL, "%s: %s: name '%s' contains a control character", path,
                          what, name);
    if (strstr(name, "->")) /* costs files name a copy "from->to" (docs/formats.md) */
        return xe_err_set(err, XE_EINVAL, "%s: %s: name '%s' contains '->', which costs files use between the two devices of a copy",
                          path, what, name);
    snprintf(r->name[d], sizeof r->name[d], "%s", name);
    /* any case, as the paper's line format takes "GPU" (JSON took lower case only before
     * 2026-12-05) */
    if (strcasecmp(kind, "gpu") == 0) r->kind[d] = XE_DEV_GPU;
    else if (strcasecmp(kind, "cpu") == 0) r->kind[d] = XE_DEV_CPU;
    else
        return xe_err_set(err, XE_EINVAL, "%s: %s: kind \"%s\" is neither \"cpu\" nor \"gpu\"", path,
                          what, kind);
    rc = read_budget(path, what, o, &r->budget_bytes[d], &r->budget_frac[d], err);
    r->speed[d] = 1.0;
    if (!rc) rc = xe_json_get_num(path, what, o, "speed", 1, &r->speed[d], err);
    if (!rc && !(r->speed[d] > 0))
        rc = xe_err_set(err, XE_EINVAL, "%s: %s: speed must be > 0", path, what);
    /* specifications for the cost model of network graphs; the kind's preset where absent */
    xe_device_spec spec;
    xe_cost_spec_preset(r->kind[d], &spec);
    if (!rc) rc = xe_json_get_num(path, what, o, "peak_flops", 1, &spec.peak_flops, err);
    if (!rc) rc = xe_json_get_num(path, what, o, "mem_bandwidth", 1, &spec.mem_bandwidth, err);
    if (!rc) rc = xe_json_get_num(path, what, o, "launch_overhead", 1, &spec.launch_overhead, err);
    if (!rc && (!(spec.peak_flops > 0) || !(spec.mem_bandwidth > 0) || !(spec.launch_overhead >= 0)))
        rc = xe_err_set(err, XE_EINVAL, "%s: %s: peak_flops and mem_bandwidth must be > 0, launch_overhead >= 0",
                        path, what);
    r->peak_flops[d] = spec.peak_flops;
    r->mem_bandwidth[d] = spec.mem_bandwidth;
    r->launch_overhead[d] = spec.launch_overhead;
    return rc;
}

static int read_devices(const char *path, const char *data, size_t len, xe_recipe *out, xe_err *err)
{
    json_t *root;
    int rc = xe_json_load_buffer(path, data, len, &root, err);
    if (rc) return rc;
    xe_recipe r;
    memset(&r, 0, sizeof r);
    r.bandwidth = 16e9;
    r.latency = 1e-5;
    r.time_unit = 1.0;
    rc = xe_json_check_format(path, root, "xengine-devices", 0, err);
    const json_t *devs = json_object_get(root, "devices");
    if (!rc && !json_is_array(devs))
        rc = xe_err_set(err, XE_EPARSE, "%s: missing array \"devices\"", path);
    if (!rc && (json_array_size(devs) < 1 || json_array_size(devs) > XE_MAX_DEV))
        rc = xe_err_set(err, XE_EINVAL, "%s: %zu devices: need 1 to %d", path,
                        json_array_size(devs), XE_MAX_DEV);
    if (!rc) r.ndev = (int)json_array_size(devs);
    for (int d = 0; d < r.ndev && !rc; d++) {
        rc = read_device(path, d, json_array_get(devs, (size_t)d), &r, err);
        for (int e = 0; e < d && !rc; e++)
            if (strcmp(r.name[e], r.name[d]) == 0)
                rc = xe_err_set(err, XE_EINVAL, "%s: devices %d and %d are both named '%s'", path, e,
                                d, r.name[d]);
    }
    const json_t *link = json_object_get(root, "link");
    if (!rc && link && !json_is_null(link)) {
        if (!json_is_object(link)) rc = xe_err_set(err, XE_EPARSE, "%s: \"link\" must be an object", path);
        if (!rc) rc = xe_json_get_num(path, "link", link, "bandwidth", 1, &r.bandwidth, err);
        if (!rc) rc = xe_json_get_num(path, "link", link, "latency", 1, &r.latency, err);
        if (!rc && !(r.bandwidth > 0))
            rc = xe_err_set(err, XE_EINVAL, "%s: link: bandwidth must be > 0 bytes/s", path);
        if (!rc && !(r.latency >= 0))
            rc = xe_err_set(err, XE_EINVAL, "%s: link: latency must be >= 0 s", path);
    }
    if (!rc) rc = xe_json_get_num(path, "devices file", root, "time_unit", 1, &r.time_unit, err);
    if (!rc && !(r.time_unit > 0))
        rc = xe_err_set(err, XE_EINVAL, "%s: time_unit must be > 0 s", path);
    json_decref(root);
    if (!rc) *out = r;
    return rc;
}

/* ---- the XEngine paper's line format: name;type;id;streams;budget_bytes ---------------- */

/* Trims leading and trailing blanks of s in place. */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) s[--n] = '\0';
    return s;
}

static int parse_count(const char *s, long lo, long *out)
{
    char *end;
    if (!*s) return -1;
    long x = strtol(s, &end, 10);
    if (*end || x < lo || x > 1000000) return -1;
    *out = x;
    return 0;
}

/* One device line (comment and blanks already gone) into device d of r. */
static int read_line(const char *path, int line, char *text, int d, xe_recipe *r, xe_err *err)
{
    char *f[6];
    int nf = 0;
    for (char *p = text; nf < 6;) {
        f[nf++] = p;
        char *semi = strchr(p, ';');
        if (!semi) break;
        *semi = '\0';
        p = semi + 1;
    }
    if (nf != 5)
        return xe_err_set(err, XE_EPARSE, "%s: line %d: %s%d fields, expected name;type;id;streams;budget_bytes",
                          path, line, nf > 5 ? "more than " : "", nf > 5 ? 5 : nf);
    for (int i = 0; i < 5; i++) f[i] = trim(f[i]);
    if (d >= XE_MAX_DEV)
        return xe_err_set(err, XE_EINVAL, "%s: line %d: more than %d devices", path, line, XE_MAX_DEV);
    if (!f[0][0] || strlen(f[0]) >= sizeof r->name[d] || xe_io_has_control(f[0]))
        return xe_err_set(err, XE_EPARSE, "%s: line %d: device name must have 1 to %zu printable characters", path,
                          line, sizeof r->name[d] - 1);
    if (!xe_utf8_valid(f[0])) /* the name goes into schedule files, which are JSON */
        return xe_err_set(err, XE_EPARSE, "%s: line %d: device name is not valid UTF-8", path, line);
    if (strstr(f[0], "->")) /* costs files name a copy "from->to" (docs/formats.md) */
        return xe_err_set(err, XE_EPARSE,
                          "%s: line %d: device name '%s' contains '->', which costs files use between the two devices of a copy",
                          path, line, f[0]);
    snprintf(r->name[d], sizeof r->name[d], "%s", f[0]);
    if (strcasecmp(f[1], "gpu") == 0) r->kind[d] = XE_DEV_GPU;
    else if (strcasecmp(f[1], "cpu") == 0) r->kind[d] = XE_DEV_CPU;
    else return xe_err_set(err, XE_EPARSE, "%s: line %d: type '%s' is neither CPU nor GPU", path, line, f[1]);
    long id, streams;
    if (parse_count(f[2], 0, &id))
        return xe_err_set(err, XE_EPARSE, "%s: line %d: id '%s' is not a whole number >= 0", path, line, f[2]);
    if (parse_count(f[3], 1, &streams))
        return xe_err_set(err, XE_EPARSE, "%s: line %d: streams '%s' is not a whole number >= 1", path, line, f[3]);
    char where[600];
    snprintf(where, sizeof where, "%s: line %d: budget", path, line);
    int rc = xe_io_parse_budget(where, f[4], &r->budget_bytes[d], &r->budget_frac[d], err);
    if (rc) return rc;
    for (int e = 0; e < d; e++)
        if (strcmp(r->name[e], r->name[d]) == 0)
            return xe_err_set(err, XE_EINVAL, "%s: line %d: a second device named '%s'", path, line, r->name[d]);
    /* the file has no speeds: the presets' (a CPU 8x slower than a GPU) */
    r->speed[d] = r->kind[d] == XE_DEV_CPU ? XE_PRESET_CPU_SPEED : 1.0;
    xe_device_spec spec;
    xe_cost_spec_preset(r->kind[d], &spec);
    r->peak_flops[d] = spec.peak_flops;
    r->mem_bandwidth[d] = spec.mem_bandwidth;
    r->launch_overhead[d] = spec.launch_overhead;
    return XE_OK;
}

/* The lines of text (NUL-terminated, no NUL inside; modified in place). */
static int read_lines(const char *path, char *text, xe_recipe *out, xe_err *err)
{
    enum { MAX_LINE = 1022 }; /* characters, without the newline */
    xe_recipe r;
    memset(&r, 0, sizeof r);
    r.bandwidth = 16e9;
    r.latency = 1e-5;
    r.time_unit = XE_PRESET_TIME_UNIT; /* as the presets: graph costs read as milliseconds */
    int line = 0, rc = XE_OK;
    for (char *buf = text; !rc && *buf;) {
        line++;
        char *nl = strchr(buf, '\n');
        char *next = nl ? nl + 1 : buf + strlen(buf);
        if (nl) *nl = '\0';
        if (strlen(buf) > MAX_LINE)
            return xe_err_set(err, XE_EPARSE, "%s: line %d: longer than %d characters", path, line, (int)MAX_LINE);
        char *hash = strchr(buf, '#');
        if (hash) *hash = '\0';
        char *t = trim(buf);
        buf = next;
        if (!*t) continue;
        rc = read_line(path, line, t, r.ndev, &r, err);
        if (!rc) r.ndev++;
    }
    if (!rc && r.ndev == 0)
        rc = xe_err_set(err, XE_EPARSE, "%s: no device: neither JSON nor lines name;type;id;streams;budget_bytes",
                        path);
    if (!rc) *out = r;
    return rc;
}

/* A leading UTF-8 byte order mark is skipped; then JSON when the first character that is
 * not blank is '{', the line format otherwise. A NUL byte anywhere is refused (the line
 * reader stopped at it, dropping the rest of its line and the devices after it). */
int xe_io_read_devices(const char *path, xe_recipe *out, xe_err *err)
{
    char *data;
    size_t len;
    int rc = xe_io_read_text(path, "a devices file", &data, &len, err);
    if (rc) return rc;
    size_t bom = xe_io_bom_len(data, len);
    const char *c = data + bom;
    while (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r') c++;
    if (*c == '{') rc = read_devices(path, data + bom, len - bom, out, err);
    else rc = read_lines(path, data + bom, out, err);
    free(data);
    return rc;
}
