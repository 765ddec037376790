/* xengine io — reading a devices file into an xe_recipe (docs/formats.md). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
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
    snprintf(r->name[d], sizeof r->name[d], "%s", name);
    if (strcmp(kind, "gpu") == 0) r->kind[d] = XE_DEV_GPU;
    else if (strcmp(kind, "cpu") == 0) r->kind[d] = XE_DEV_CPU;
    else
        return xe_err_set(err, XE_EINVAL, "%s: %s: kind \"%s\" is neither \"cpu\" nor \"gpu\"", path,
                          what, kind);
    rc = read_budget(path, what, o, &r->budget_bytes[d], &r->budget_frac[d], err);
    r->speed[d] = 1.0;
    if (!rc) rc = xe_json_get_num(path, what, o, "speed", 1, &r->speed[d], err);
    if (!rc && !(r->speed[d] > 0))
        rc = xe_err_set(err, XE_EINVAL, "%s: %s: speed must be > 0", path, what);
    return rc;
}

int xe_io_read_devices(const char *path, xe_recipe *out, xe_err *err)
{
    json_t *root;
    int rc = xe_json_load(path, &root, err);
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
