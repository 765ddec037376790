/* ONNX model file -> xe_net (include/xengine/onnx.h, docs/onnx.md).
 *
 * The protobuf is unpacked with the protobuf-c code generated at build time from
 * Debian's onnx.proto; one reader context walks the graph once: graph inputs first,
 * then the nodes in file order (initializers and Constant values become tensors when a
 * node first reads them), then the graph outputs, and finally shape inference. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "onnx.pb-c.h"
#include "xengine/io.h"
#include "xengine/onnx.h"

typedef Onnx__ModelProto model_t;
typedef Onnx__GraphProto graph_t;
typedef Onnx__NodeProto node_t;
typedef Onnx__TensorProto tproto_t;
typedef Onnx__AttributeProto attr_t;

typedef struct rd {
    const char *path;     /* for messages */
    const graph_t *g;
    xe_net *net;
    int64_t opset;        /* default-domain opset version (0 when not stated) */
    int *undecided;       /* graph inputs read only by Add nodes: data or parameter? */
    int nundecided;
    const char **alias;   /* outputs of dropped identity nodes (all-zero Pad) ... */
    int *alias_t;         /* ... and the tensor each stands for */
    int nalias;
    xe_err *err;
} rd;

/* ---- lookups ------------------------------------------------------------------------ */

static const tproto_t *find_initializer(const graph_t *g, const char *name)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->name && strcmp(g->initializer[i]->name, name) == 0) return g->initializer[i];
    return NULL;
}

/* The Constant node writing `name`, or NULL. */
static const node_t *find_constant(const graph_t *g, const char *name)
{
    for (size_t k = 0; k < g->n_node; k++) {
        const node_t *n = g->node[k];
        if (n->op_type && strcmp(n->op_type, "Constant") == 0 && n->n_output >= 1 && strcmp(n->output[0], name) == 0)
            return n;
    }
    return NULL;
}

static const attr_t *find_attr(const node_t *n, const char *name)
{
    for (size_t a = 0; a < n->n_attribute; a++)
        if (n->attribute[a]->name && strcmp(n->attribute[a]->name, name) == 0) return n->attribute[a];
    return NULL;
}

/* 1 when some node reads `name` (as input j == pos, or any input when pos < 0) or it is a
 * graph output. */
static int is_read(const graph_t *g, const char *name, int pos, const char *op_type)
{
    for (size_t k = 0; k < g->n_node; k++) {
        const node_t *n = g->node[k];
        if (op_type && (!n->op_type || strcmp(n->op_type, op_type) != 0)) continue;
        for (size_t j = 0; j < n->n_input; j++)
            if ((pos < 0 || (size_t)pos == j) && strcmp(n->input[j], name) == 0) return 1;
    }
    if (pos < 0 && !op_type)
        for (size_t o = 0; o < g->n_output; o++)
            if (g->output[o]->name && strcmp(g->output[o]->name, name) == 0) return 1;
    return 0;
}

/* 1 when some node of g is named s. */
static int named_in(const graph_t *g, const char *s)
{
    for (size_t k = 0; k < g->n_node; k++)
        if (g->node[k]->name && strcmp(g->node[k]->name, s) == 0) return 1;
    return 0;
}

/* The node's name; an unnamed node k (names are optional in ONNX) gets "OPTYPE_k", with
 * "_2", "_3", ... after it where a named node of the file is called that (an unnamed
 * Relu next to a node named "Relu_1" was refused as a duplicate op). */
static const char *node_name(const graph_t *g, const node_t *n, size_t k, char *buf, size_t len)
{
    if (n->name && n->name[0]) return n->name;
    const char *op = n->op_type && n->op_type[0] ? n->op_type : "node";
    snprintf(buf, len, "%s_%zu", op, k);
    for (int c = 2; named_in(g, buf) && c < 1000000; c++) snprintf(buf, len, "%s_%zu_%d", op, k, c);
    return buf;
}

/* ---- tensor data -------------------------------------------------------------------- */

static int map_dtype(int32_t onnx_type, xe_dtype *dt)
{
    switch (onnx_type) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: *dt = XE_DT_FLOAT32; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: *dt = XE_DT_INT64; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: *dt = XE_DT_FLOAT16; return 1;
    default: return 0;
    }
}

/* Elements of a TensorProto from its dims; -1 for a negative dim or an overflow. */
static int64_t tp_numel(const tproto_t *t)
{
    int64_t n = 1;
    for (size_t d = 0; d < t->n_dims; d++) {
        if (t->dims[d] < 0 || (t->dims[d] > 0 && n > (INT64_C(1) << 53) / t->dims[d])) return -1;
        n *= t->dims[d];
    }
    return n;
}

static uint64_t le_bytes(const uint8_t *p, int nbytes)
{
    uint64_t v = 0;
    for (int b = nbytes - 1; b >= 0; b--) v = (v << 8) | p[b];
    return v;
}

/* Element i of a numeric TensorProto as a double; XE_EPARSE when the data is short or
 * of a type without a number. */
static int tp_get(const rd *r, const tproto_t *t, const char *what, int64_t i, double *v)
{
    size_t u = (size_t)i;
    int32_t ty = t->has_data_type ? t->data_type : 0;
    int size;
    switch (ty) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: size = 4; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: size = 8; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: size = 4; break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL:
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8:
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: size = 1; break;
    default:
        return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: %s: tensor data type %d not supported", r->path, what, (int)ty);
    }
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: %s: external tensor data not supported", r->path, what);
    if (t->has_raw_data) {
        if ((u + 1) * (size_t)size > t->raw_data.len)
            return xe_err_set(r->err, XE_EPARSE, "%s: %s: raw data of %zu bytes too short", r->path, what,
                              t->raw_data.len);
        uint64_t bits = le_bytes(t->raw_data.data + u * (size_t)size, size);
        switch (ty) {
        case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: {
            uint32_t b32 = (uint32_t)bits;
            float f;
            memcpy(&f, &b32, sizeof f);
            *v = f;
            break;
        }
        case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: memcpy(v, &bits, sizeof *v); break;
        case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: *v = (double)(int64_t)bits; break;
        case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: *v = (double)(int32_t)(uint32_t)bits; break;
        case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: *v = (double)(int8_t)(uint8_t)bits; break;
        default: *v = (double)bits; break;
        }
        return XE_OK;
    }
    int short_data = 0;
    switch (ty) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
        if (u < t->n_float_data) *v = t->float_data[u]; else short_data = 1;
        break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
        if (u < t->n_double_data) *v = t->double_data[u]; else short_data = 1;
        break;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
        if (u < t->n_int64_data) *v = (double)t->int64_data[u]; else short_data = 1;
        break;
    default: /* int32, bool, (u)int8 live in int32_data */
        if (u < t->n_int32_data) *v = t->int32_data[u]; else short_data = 1;
        break;
    }
    if (short_data) return xe_err_set(r->err, XE_EPARSE, "%s: %s: fewer values than its dims say", r->path, what);
    return XE_OK;
}

/* Bytes per element of an ONNX data type with a fixed width; 0 for others. */
static size_t tp_elem_size(int32_t ty)
{
    switch (ty) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return 8;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return 4;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return 2;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL:
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8:
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: return 1;
    default: return 0;
    }
}

static int is_external(const tproto_t *t)
{
    return t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

/* A non-negative decimal integer (external_data's offset and length); 0 when it is not one. */
static int parse_u63(const char *s, int64_t *v)
{
    if (!s || !*s) return 0;
    int64_t x = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || x > (INT64_MAX - 9) / 10) return 0;
        x = x * 10 + (*s - '0');
    }
    *v = x;
    return 1;
}

/* 1 when `loc` is a relative path with no ".." component (stays under the model's
 * directory). */
static int location_ok(const char *loc)
{
    if (!loc[0] || loc[0] == '/') return 0;
    for (const char *p = loc; *p;) {
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.') return 0;
        p += len;
        while (*p == '/') p++;
    }
    return 1;
}

/* The data of an external tensor (data_location EXTERNAL: external_data "location",
 * "offset", "length"), read from the file `location` names relative to the model file's
 * directory: *tmp becomes a copy of *t holding it as raw_data (little-endian, as ONNX
 * stores it), *owned the buffer to free. A tensor stored in the model is returned as it
 * is (*owned NULL). NULL with *rc set on error: an absolute location or one with a ".."
 * component (XE_EUNSUPPORTED), no location or a bad offset / length (XE_EPARSE), a data
 * file that cannot be opened (XE_EIO) or ends before the tensor's bytes (XE_EPARSE), each
 * naming the data file. */
static const tproto_t *tp_data(rd *r, const tproto_t *t, const char *what, tproto_t *tmp, uint8_t **owned, int *rc)
{
    *owned = NULL;
    *rc = XE_OK;
    if (!is_external(t)) return t;
    const char *loc = NULL;
    int64_t off = 0, len = -1;
    for (size_t i = 0; i < t->n_external_data; i++) {
        const char *k = t->external_data[i]->key, *v = t->external_data[i]->value;
        if (!k) continue;
        if (strcmp(k, "location") == 0) loc = v;
        else if ((strcmp(k, "offset") == 0 && !parse_u63(v, &off)) || (strcmp(k, "length") == 0 && !parse_u63(v, &len))) {
            *rc = xe_err_set(r->err, XE_EPARSE, "%s: %s: external data %s \"%s\" is not a byte count", r->path, what, k,
                             v ? v : "");
            return NULL;
        }
    }
    if (!loc || !loc[0]) {
        *rc = xe_err_set(r->err, XE_EPARSE, "%s: %s: external data without a location", r->path, what);
        return NULL;
    }
    if (!location_ok(loc)) {
        *rc = xe_err_set(r->err, XE_EUNSUPPORTED,
                         "%s: %s: external data location \"%s\" is absolute or has a \"..\" component (must be "
                         "under the model's directory)",
                         r->path, what, loc);
        return NULL;
    }
    size_t es = tp_elem_size(t->has_data_type ? t->data_type : 0);
    int64_t n = tp_numel(t);
    if (!es || n < 0) {
        *rc = xe_err_set(r->err, XE_EUNSUPPORTED, "%s: %s: external data of type %d not supported", r->path, what,
                         t->has_data_type ? (int)t->data_type : 0);
        return NULL;
    }
    int64_t need = n * (int64_t)es;
    if (len >= 0 && len != need) {
        *rc = xe_err_set(r->err, XE_EPARSE, "%s: %s: external data length %lld, its dims and type need %lld bytes",
                         r->path, what, (long long)len, (long long)need);
        return NULL;
    }
    const char *slash = strrchr(r->path, '/');
    int dirlen = slash ? (int)(slash - r->path) + 1 : 0;
    size_t plen = (size_t)dirlen + strlen(loc) + 1;
    char *file = malloc(plen);
    uint8_t *buf = malloc(need ? (size_t)need : 1);
    if (!file || !buf) {
        free(file);
        free(buf);
        *rc = xe_err_set(r->err, XE_ENOMEM, "%s: out of memory for %s", r->path, what);
        return NULL;
    }
    snprintf(file, plen, "%.*s%s", dirlen, r->path, loc);
    FILE *f = fopen(file, "rb");
    struct stat st;
    if (f && (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))) { /* a directory opens too */
        fclose(f);
        f = NULL;
        errno = EISDIR;
    }
    if (!f) {
        *rc = xe_err_set(r->err, XE_EIO, "%s: %s: external data file %s cannot be opened: %s", r->path, what, file,
                         strerror(errno));
    } else {
        size_t got = 0;
        if (fseeko(f, (off_t)off, SEEK_SET) == 0) got = fread(buf, 1, (size_t)need, f);
        if (got != (size_t)need)
            *rc = xe_err_set(r->err, XE_EPARSE, "%s: %s: external data file %s is too short (bytes %lld..%lld wanted)",
                             r->path, what, file, (long long)off, (long long)(off + need));
        fclose(f);
    }
    free(file);
    if (*rc) {
        free(buf);
        return NULL;
    }
    *tmp = *t;
    tmp->has_data_location = 0;
    tmp->n_external_data = 0;
    tmp->external_data = NULL;
    tmp->has_raw_data = 1;
    tmp->raw_data.len = (size_t)need;
    tmp->raw_data.data = buf;
    *owned = buf;
    return tmp;
}

/* Number of elements a TensorProto's data holds (of its data type). */
static int64_t tp_count(const tproto_t *t)
{
    int32_t ty = t->has_data_type ? t->data_type : 0;
    size_t size = tp_elem_size(ty) ? tp_elem_size(ty) : 1;
    if (t->has_raw_data) return (int64_t)(t->raw_data.len / size);
    switch (ty) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return (int64_t)t->n_float_data;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: return (int64_t)t->n_double_data;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return (int64_t)t->n_int64_data;
    default: return (int64_t)t->n_int32_data;
    }
}

/* Exact int64 element i (Reshape's shape: doubles would lose digits). */
static int tp_get_i64(const rd *r, const tproto_t *t, const char *what, int64_t i, int64_t *v)
{
    size_t u = (size_t)i;
    if (t->has_raw_data) {
        if ((u + 1) * 8 > t->raw_data.len)
            return xe_err_set(r->err, XE_EPARSE, "%s: %s: raw data of %zu bytes too short", r->path, what,
                              t->raw_data.len);
        *v = (int64_t)le_bytes(t->raw_data.data + u * 8, 8);
        return XE_OK;
    }
    if (u >= t->n_int64_data) return xe_err_set(r->err, XE_EPARSE, "%s: %s: fewer values than its dims say", r->path, what);
    *v = t->int64_data[u];
    return XE_OK;
}

/* Adds a constant tensor (an initializer or a Constant node's value) under `name`. */
static int add_const_tensor(rd *r, const char *name, const tproto_t *t)
{
    xe_dtype dt;
    char what[600];
    snprintf(what, sizeof what, "tensor \"%s\"", name);
    if (!map_dtype(t->has_data_type ? t->data_type : 0, &dt))
        return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: %s: data type %d not supported (float32, int64, float16)",
                          r->path, what, t->has_data_type ? (int)t->data_type : 0);
    if (t->n_dims > XE_MAX_RANK)
        return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: %s: rank %zu above %d", r->path, what, t->n_dims, XE_MAX_RANK);
    int64_t n = tp_numel(t);
    if (n <= 0)
        return xe_err_set(r->err, XE_EINVAL, "%s: %s: empty or invalid dimensions", r->path, what);
    int64_t dim[XE_MAX_RANK];
    for (size_t d = 0; d < t->n_dims; d++) dim[d] = t->dims[d];
    int i = xe_net_add_tensor(r->net, name, XE_T_PARAM, dt, (int)t->n_dims, dim, r->err);
    if (i < 0) return i;
    int has_data = t->has_raw_data || t->n_float_data || t->n_int64_data || t->n_int32_data || t->n_double_data ||
                   is_external(t);
    if (!has_data) return i; /* dims only */
    tproto_t ext;
    uint8_t *owned;
    int rc;
    t = tp_data(r, t, what, &ext, &owned, &rc); /* external data read from its file */
    if (!t) return rc;
    if (tp_count(t) < n) { /* checked before allocating what the dims claim */
        free(owned);
        return xe_err_set(r->err, XE_EPARSE, "%s: %s: %lld values, its dims say %lld", r->path, what,
                          (long long)tp_count(t), (long long)n);
    }
    rc = XE_OK;
    if (dt == XE_DT_FLOAT32) {
        float *p = malloc((size_t)n * sizeof *p);
        if (!p) rc = xe_err_set(r->err, XE_ENOMEM, "%s: out of memory for %s", r->path, what);
        else r->net->t[i].data = p; /* owned by the net from here */
        for (int64_t e = 0; e < n && !rc; e++) {
            double v;
            if ((rc = tp_get(r, t, what, e, &v)) == XE_OK) p[e] = (float)v;
        }
    } else if (dt == XE_DT_INT64) {
        int64_t *p = malloc((size_t)n * sizeof *p);
        if (!p) rc = xe_err_set(r->err, XE_ENOMEM, "%s: out of memory for %s", r->path, what);
        else r->net->t[i].idata = p;
        for (int64_t e = 0; e < n && !rc; e++) rc = tp_get_i64(r, t, what, e, &p[e]);
    }
    free(owned);
    return rc < 0 ? rc : i;
}

/* The value tensor of a Constant node (attribute "value", or value_float / value_int /
 * value_ints, written into *tmp). NULL with an error set when it has none usable. */
static const tproto_t *constant_value(rd *r, const node_t *n, const char *nm, tproto_t *tmp, int64_t *dimbuf,
                                      int *rc)
{
    const attr_t *a;
    *rc = XE_OK;
    onnx__tensor_proto__init(tmp);
    if ((a = find_attr(n, "value")) && a->t) return a->t;
    if ((a = find_attr(n, "value_float")) && a->has_f) {
        tmp->has_data_type = 1;
        tmp->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
        tmp->n_float_data = 1;
        tmp->float_data = (float *)&a->f;
        return tmp;
    }
    if ((a = find_attr(n, "value_int")) && a->has_i) {
        tmp->has_data_type = 1;
        tmp->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
        tmp->n_int64_data = 1;
        tmp->int64_data = (int64_t *)&a->i;
        return tmp;
    }
    if ((a = find_attr(n, "value_ints"))) {
        tmp->has_data_type = 1;
        tmp->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
        tmp->n_int64_data = a->n_ints;
        tmp->int64_data = a->ints;
        tmp->n_dims = 1;
        dimbuf[0] = (int64_t)a->n_ints;
        tmp->dims = dimbuf;
        return tmp;
    }
    *rc = xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": Constant without a supported value attribute", r->path,
                     nm);
    return NULL;
}

/* The constant behind tensor name `name` (an initializer with data or a Constant node),
 * or NULL (rc XE_OK) when it is not one. */
static const tproto_t *lookup_const(rd *r, const char *name, tproto_t *tmp, int64_t *dimbuf, int *rc)
{
    *rc = XE_OK;
    const tproto_t *t = find_initializer(r->g, name);
    if (t) return t;
    const node_t *c = find_constant(r->g, name);
    if (!c) return NULL;
    char buf[64];
    return constant_value(r, c, node_name(r->g, c, 0, buf, sizeof buf), tmp, dimbuf, rc);
}

/* lookup_const for an input that must be a constant (node nm's `what`): NULL with *rc
 * XE_EUNSUPPORTED ("... is not a constant") when it is none, or lookup_const's error. */
static const tproto_t *need_const(rd *r, const char *nm, const char *input, const char *what, tproto_t *tmp,
                                  int64_t *dimbuf, int *rc)
{
    const tproto_t *t = lookup_const(r, input, tmp, dimbuf, rc);
    if (!t && *rc >= 0)
        *rc = xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": %s \"%s\" is not a constant", r->path, nm, what,
                         input);
    return t;
}

/* A scalar constant input (Clip's min/max, Dropout's ratio). 1 found, 0 absent (empty
 * name), < 0 error (not a constant, not one element). */
static int const_scalar(rd *r, const char *nm, const char *input, const char *what, double *v)
{
    if (!input || !input[0]) return 0;
    tproto_t tmp;
    int64_t dimbuf[1];
    int rc;
    const tproto_t *t = need_const(r, nm, input, what, &tmp, dimbuf, &rc);
    if (!t) return rc;
    if (tp_numel(t) != 1)
        return xe_err_set(r->err, XE_EINVAL, "%s: node \"%s\": %s \"%s\" is not a single value", r->path, nm, what,
                          input);
    char w[300];
    snprintf(w, sizeof w, "node \"%s\": %s", nm, what);
    tproto_t ext;
    uint8_t *owned;
    t = tp_data(r, t, w, &ext, &owned, &rc); /* external data read from its file */
    if (!t) return rc;
    rc = tp_get(r, t, w, 0, v);
    free(owned);
    return rc < 0 ? rc : 1;
}

/* ---- attributes --------------------------------------------------------------------- */

static int attr_type_err(rd *r, const char *nm, const attr_t *a, const char *want)
{
    return xe_err_set(r->err, XE_EPARSE, "%s: node \"%s\": attribute \"%s\" is not %s", r->path, nm, a->name, want);
}

/* 1 and *v when present, 0 when absent, < 0 when of another type. */
static int get_int(rd *r, const node_t *n, const char *nm, const char *name, int64_t *v)
{
    const attr_t *a = find_attr(n, name);
    if (!a) return 0;
    if (!a->has_i || (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT))
        return attr_type_err(r, nm, a, "an int");
    *v = a->i;
    return 1;
}

static int get_float(rd *r, const node_t *n, const char *nm, const char *name, double *v)
{
    const attr_t *a = find_attr(n, name);
    if (!a) return 0;
    if (!a->has_f || (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT))
        return attr_type_err(r, nm, a, "a float");
    *v = a->f;
    return 1;
}

/* Exactly `want` ints into v. */
static int get_ints(rd *r, const node_t *n, const char *nm, const char *name, size_t want, int64_t *v)
{
    const attr_t *a = find_attr(n, name);
    if (!a) return 0;
    if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) return attr_type_err(r, nm, a, "ints");
    if (a->n_ints != want)
        return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": attribute \"%s\" has %zu values (xengine handles %zu: 2-D only)",
                          r->path, nm, name, a->n_ints, want);
    for (size_t i = 0; i < want; i++) v[i] = a->ints[i];
    return 1;
}

/* String attribute into buf (truncated to len - 1): 1 present, 0 absent (buf ""),
 * < 0 when of another type. */
static int get_str(rd *r, const node_t *n, const char *nm, const char *name, char *buf, size_t len)
{
    const attr_t *a = find_attr(n, name);
    buf[0] = 0;
    if (!a) return 0;
    if (!a->has_s || (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING))
        return attr_type_err(r, nm, a, "a string");
    size_t l = a->s.len < len - 1 ? a->s.len : len - 1;
    memcpy(buf, a->s.data, l);
    buf[l] = 0;
    return 1;
}

#define TRY(x)                    \
    do {                          \
        int rc_ = (x);            \
        if (rc_ < 0) return rc_;  \
    } while (0)

/* Kernel, strides, dilations, pads, auto_pad of Conv / ConvTranspose / pools. */
static int spatial_attrs(rd *r, const node_t *n, const char *nm, xe_op *o)
{
    char ap[32];
    TRY(get_ints(r, n, nm, "kernel_shape", 2, o->kernel));
    TRY(get_ints(r, n, nm, "strides", 2, o->stride));
    TRY(get_ints(r, n, nm, "dilations", 2, o->dilation));
    TRY(get_ints(r, n, nm, "pads", 4, o->pad)); /* ONNX: x1_begin, x2_begin, x1_end, x2_end */
    TRY(get_str(r, n, nm, "auto_pad", ap, sizeof ap));
    if (ap[0] && strcmp(ap, "NOTSET") != 0) {
        int zero = o->pad[0] == 0 && o->pad[1] == 0 && o->pad[2] == 0 && o->pad[3] == 0;
        if (strcmp(ap, "VALID") != 0 || !zero)
            return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": auto_pad \"%s\" not supported (NOTSET, VALID)",
                              r->path, nm, ap);
    }
    return XE_OK;
}

/* `if (got) ...` after a getter call, returning its error. */
#define IF_GOT(call)      \
    if ((g = (call)) < 0) \
        return g;         \
    else if (g)

/* Attributes of op `o` (kind set) from node n. */
static int read_attrs(rd *r, const node_t *n, const char *nm, xe_op *o)
{
    int64_t i64;
    double f;
    char s[32];
    int g;
    switch (o->kind) {
    case XE_OP_CONV:
    case XE_OP_CONV_TRANSPOSE:
        TRY(spatial_attrs(r, n, nm, o));
        TRY(get_int(r, n, nm, "group", &o->group));
        if (o->kind == XE_OP_CONV_TRANSPOSE) {
            TRY(get_ints(r, n, nm, "output_padding", 2, o->output_padding));
            if (find_attr(n, "output_shape"))
                return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": ConvTranspose output_shape not supported",
                                  r->path, nm);
        }
        return XE_OK;
    case XE_OP_MAXPOOL:
    case XE_OP_AVGPOOL:
        TRY(spatial_attrs(r, n, nm, o));
        IF_GOT(get_int(r, n, nm, "ceil_mode", &i64)) o->ceil_mode = i64 != 0;
        IF_GOT(get_int(r, n, nm, "count_include_pad", &i64)) o->count_include_pad = i64 != 0;
        IF_GOT(get_int(r, n, nm, "storage_order", &i64)) if (i64 != 0)
            return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": storage_order 1 not supported", r->path, nm);
        return XE_OK;
    case XE_OP_GEMM:
        IF_GOT(get_float(r, n, nm, "alpha", &f)) o->alpha = f;
        IF_GOT(get_float(r, n, nm, "beta", &f)) o->beta = f;
        IF_GOT(get_int(r, n, nm, "transA", &i64)) o->trans_a = i64 != 0;
        IF_GOT(get_int(r, n, nm, "transB", &i64)) o->trans_b = i64 != 0;
        return XE_OK;
    case XE_OP_LEAKY_RELU:
        IF_GOT(get_float(r, n, nm, "alpha", &f)) o->alpha = f;
        return XE_OK;
    case XE_OP_LRN:
        TRY(get_int(r, n, nm, "size", &o->size));
        IF_GOT(get_float(r, n, nm, "alpha", &f)) o->alpha = f;
        IF_GOT(get_float(r, n, nm, "beta", &f)) o->beta = f;
        IF_GOT(get_float(r, n, nm, "bias", &f)) o->bias = f;
        return XE_OK;
    case XE_OP_BATCHNORM:
        IF_GOT(get_float(r, n, nm, "momentum", &f)) o->momentum = f;
        /* fall through */
    case XE_OP_INSTANCENORM:
        IF_GOT(get_float(r, n, nm, "epsilon", &f)) o->epsilon = f;
        return XE_OK;
    case XE_OP_CONCAT:
    case XE_OP_FLATTEN:
    case XE_OP_SOFTMAX:
        if (o->kind == XE_OP_SOFTMAX && r->opset > 0 && r->opset < 13) o->axis = 1;
        TRY(get_int(r, n, nm, "axis", &o->axis));
        if (o->kind == XE_OP_CONCAT && !find_attr(n, "axis"))
            return xe_err_set(r->err, XE_EPARSE, "%s: node \"%s\": Concat without axis", r->path, nm);
        return XE_OK;
    case XE_OP_RESHAPE:
        IF_GOT(get_int(r, n, nm, "allowzero", &i64)) if (i64 != 0)
            return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": Reshape allowzero = 1 not supported", r->path, nm);
        return XE_OK;
    case XE_OP_DROPOUT:
        IF_GOT(get_float(r, n, nm, "ratio", &f)) o->ratio = f; /* before opset 12 */
        if (n->n_input > 1) {
            IF_GOT(const_scalar(r, nm, n->input[1], "ratio", &f)) o->ratio = f;
        }
        if (n->n_input > 2) TRY(const_scalar(r, nm, n->input[2], "training_mode", &f));
        return XE_OK;
    case XE_OP_CLIP:
        IF_GOT(get_float(r, n, nm, "min", &f)) o->clip_min = f; /* before opset 11 */
        IF_GOT(get_float(r, n, nm, "max", &f)) o->clip_max = f;
        if (n->n_input > 1) {
            IF_GOT(const_scalar(r, nm, n->input[1], "min", &f)) o->clip_min = f;
        }
        if (n->n_input > 2) {
            IF_GOT(const_scalar(r, nm, n->input[2], "max", &f)) o->clip_max = f;
        }
        return XE_OK;
    case XE_OP_LOSS:
        IF_GOT(get_str(r, n, nm, "reduction", s, sizeof s)) if (strcmp(s, "mean") != 0)
            return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": reduction \"%s\" not supported (mean)", r->path,
                              nm, s);
        /* PyTorch always writes ignore_index = -100; one no label can equal changes
         * nothing and is kept for shape inference to check against the classes */
        IF_GOT(get_int(r, n, nm, "ignore_index", &i64)) {
            o->has_ignore_index = 1;
            o->ignore_index = i64;
        }
        return XE_OK;
    default: return XE_OK;
    }
}

/* ---- the graph ---------------------------------------------------------------------- */

/* Rewrites the message of a failed net call as "PATH: node "NAME": message". */
static int wrap(rd *r, int rc, const char *nm)
{
    if (r->err) {
        char msg[sizeof r->err->msg];
        memcpy(msg, r->err->msg, sizeof msg);
        msg[sizeof msg - 1] = 0;
        if (nm) xe_err_set(r->err, rc, "%s: node \"%s\": %s", r->path, nm, msg);
        else xe_err_set(r->err, rc, "%s: %s", r->path, msg);
    }
    return rc;
}

/* 1 when some node other than an Add reads `name` as its first input. */
static int is_first_input_of_non_add(const graph_t *g, const char *name)
{
    for (size_t k = 0; k < g->n_node; k++) {
        const node_t *n = g->node[k];
        if (n->n_input > 0 && strcmp(n->input[0], name) == 0 && (!n->op_type || strcmp(n->op_type, "Add") != 0))
            return 1;
    }
    return 0;
}

/* Graph inputs that are not initializers: the data input(s), labels, parameters. One
 * read only by Add nodes (where the data operand may come first or second: PyTorch's
 * `self.b + x` is Add(b, x)) is added as a parameter and listed in r->undecided, for
 * resolve_add_inputs to settle by shape; one with a symbolic first dimension is data. */
static int read_inputs(rd *r, int64_t batch)
{
    for (size_t i = 0; i < r->g->n_input; i++) {
        const Onnx__ValueInfoProto *vi = r->g->input[i];
        if (!vi->name || !vi->name[0]) return xe_err_set(r->err, XE_EPARSE, "%s: graph input %zu has no name", r->path, i);
        if (find_initializer(r->g, vi->name)) continue; /* a parameter with data: added when read */
        xe_tensor_role role = XE_T_PARAM;
        int undecided = 0;
        if (is_read(r->g, vi->name, 1, "SoftmaxCrossEntropyLoss")) role = XE_T_LABEL;
        else if (is_first_input_of_non_add(r->g, vi->name)) role = XE_T_INPUT;
        else if (is_read(r->g, vi->name, -1, "Add")) undecided = 1;
        const Onnx__TypeProto *ty = vi->type;
        if (!ty || ty->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !ty->tensor_type)
            return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: graph input \"%s\" is not a tensor", r->path, vi->name);
        const Onnx__TypeProto__Tensor *tt = ty->tensor_type;
        xe_dtype dt;
        if (!map_dtype(tt->has_elem_type ? tt->elem_type : 0, &dt))
            return xe_err_set(r->err, XE_EUNSUPPORTED,
                              "%s: graph input \"%s\": element type %d not supported (float32, int64, float16)", r->path,
                              vi->name, tt->has_elem_type ? (int)tt->elem_type : 0);
        if (!tt->shape)
            return xe_err_set(r->err, XE_EINVAL, "%s: graph input \"%s\" has no shape", r->path, vi->name);
        if (tt->shape->n_dim > XE_MAX_RANK)
            return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: graph input \"%s\": rank %zu above %d", r->path, vi->name,
                              tt->shape->n_dim, XE_MAX_RANK);
        if (undecided && tt->shape->n_dim > 0 &&
            (tt->shape->dim[0]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
             tt->shape->dim[0]->dim_value <= 0)) { /* a symbolic batch: data */
            role = XE_T_INPUT;
            undecided = 0;
        }
        int64_t dim[XE_MAX_RANK];
        for (size_t d = 0; d < tt->shape->n_dim; d++) {
            const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[d];
            int batch_dim = d == 0 && (role == XE_T_INPUT || role == XE_T_LABEL);
            if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dm->dim_value > 0) {
                dim[d] = dm->dim_value;
            } else if (batch_dim && batch > 0) {
                dim[d] = batch; /* symbolic batch, replaced below anyway */
            } else if (batch_dim) {
                return xe_err_set(r->err, XE_EINVAL, "%s: graph input \"%s\": batch dimension is not a number; give a batch size (--batch N)",
                                  r->path, vi->name);
            } else {
                return xe_err_set(r->err, XE_EINVAL, "%s: graph input \"%s\": dimension %zu is not a positive number",
                                  r->path, vi->name, d);
            }
        }
        int t = xe_net_add_tensor(r->net, vi->name, role, dt, (int)tt->shape->n_dim, dim, r->err);
        if (t < 0) return wrap(r, t, NULL);
        if (undecided) {
            int *p = realloc(r->undecided, (size_t)(r->nundecided + 1) * sizeof *p);
            if (!p) return xe_err_set(r->err, XE_ENOMEM, "%s: out of memory", r->path);
            r->undecided = p;
            p[r->nundecided++] = t;
        }
    }
    return XE_OK;
}

static int same_shape(const xe_tensor *a, const xe_tensor *b)
{
    if (a->rank != b->rank) return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->dim[d] != b->dim[d]) return 0;
    return 1;
}

/* Settles the graph inputs read only by Add nodes (r->undecided), once every shape is
 * inferred at the file's sizes: such an input is data when, in some Add, it has the
 * output's shape and the other operand does not (the other one is broadcast into it), or
 * both have it and it is the first operand; otherwise (it is broadcast into the other
 * operand, or both have the output's shape and it comes second) it stays a parameter.
 * Then checks that the model has a data input at all. */
static int resolve_add_inputs(rd *r)
{
    xe_net *net = r->net;
    if (r->nundecided > 0) {
        int rc = xe_net_infer_shapes(net, r->err);
        if (rc < 0) return wrap(r, rc, NULL);
        for (int u = 0; u < r->nundecided; u++) {
            int t = r->undecided[u], data = 0;
            for (int k = 0; k < net->nops && !data; k++) {
                const xe_op *o = &net->op[k];
                if (o->kind != XE_OP_ADD || o->nin != 2) continue;
                for (int j = 0; j < 2 && !data; j++) {
                    if (o->in[j] != t) continue;
                    const xe_tensor *y = &net->t[o->out], *other = &net->t[o->in[1 - j]];
                    if (same_shape(&net->t[t], y) && (!same_shape(other, y) || j == 0)) data = 1;
                }
            }
            if (data) net->t[t].role = XE_T_INPUT;
        }
    }
    for (int i = 0; i < net->nt; i++)
        if (net->t[i].role == XE_T_INPUT) return XE_OK;
    return xe_err_set(r->err, XE_EINVAL,
                      "%s: no data input (no graph input without data is read as a node's first input, or as the "
                      "unbroadcast operand of an Add)",
                      r->path);
}

/* Index of tensor `name` read by node nm, adding an initializer or Constant value on
 * first use. */
static int input_tensor(rd *r, const char *nm, const char *name)
{
    for (int a = r->nalias - 1; a >= 0; a--)
        if (strcmp(r->alias[a], name) == 0) return r->alias_t[a];
    int t = xe_net_find_tensor(r->net, name);
    if (t >= 0) return t;
    tproto_t tmp;
    int64_t dimbuf[1];
    int rc;
    const tproto_t *c = lookup_const(r, name, &tmp, dimbuf, &rc);
    if (rc < 0) return rc;
    if (!c)
        return xe_err_set(r->err, XE_EINVAL,
                          "%s: node \"%s\": input \"%s\" is not a graph input, an initializer or an earlier node's output "
                          "(ONNX nodes must be in topological order: a cycle, or a node listed before its producer)",
                          r->path, nm, name);
    t = add_const_tensor(r, name, c);
    return t < 0 ? (r->err && strncmp(r->err->msg, r->path, strlen(r->path)) != 0 ? wrap(r, t, nm) : t) : t;
}

/* The tensor indices of node n's first nin inputs into in[] (input_tensor each): XE_OK;
 * XE_EUNSUPPORTED for more than XE_OP_MAX_IN or an optional input left out before
 * others; input_tensor's errors. */
static int node_inputs(rd *r, const node_t *n, const char *nm, size_t nin, int *in)
{
    if (nin > XE_OP_MAX_IN)
        return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": %zu inputs (at most %d)", r->path, nm, nin,
                          XE_OP_MAX_IN);
    for (size_t j = 0; j < nin; j++) {
        if (!n->input[j][0])
            return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": optional input %zu left out before others",
                              r->path, nm, j);
        if ((in[j] = input_tensor(r, nm, n->input[j])) < 0) return in[j];
    }
    return XE_OK;
}

/* The values of the int64 constant `input` (an initializer or a Constant), at most max
 * of them, into v[*n]. XE_EUNSUPPORTED when it is not a constant. */
static int const_i64s(rd *r, const char *nm, const char *input, const char *what, int64_t *v, int max, int *n)
{
    tproto_t tmp, ext;
    int64_t dimbuf[1];
    int rc;
    const tproto_t *t = need_const(r, nm, input, what, &tmp, dimbuf, &rc);
    if (!t) return rc;
    if (!t->has_data_type || t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT64)
        return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": %s \"%s\" is not int64", r->path, nm, what,
                          input);
    int64_t cnt = tp_numel(t);
    if (cnt < 0 || cnt > max)
        return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": %s \"%s\" has %lld values (at most %d)", r->path,
                          nm, what, input, (long long)cnt, max);
    char w[300];
    snprintf(w, sizeof w, "node \"%s\": %s", nm, what);
    uint8_t *owned;
    if (!(t = tp_data(r, t, w, &ext, &owned, &rc))) return rc;
    for (int64_t i = 0; i < cnt && !rc; i++) rc = tp_get_i64(r, t, w, i, &v[i]);
    free(owned);
    *n = (int)cnt;
    return rc < 0 ? rc : XE_OK;
}

static int drop_node(rd *r, const node_t *n, const char *nm);

/* A Pad node: dropped, its output an alias of its input, when every pad is 0 (PyTorch
 * writes one before AveragePool for F.avg_pool2d); any other is XE_EUNSUPPORTED. The pads
 * are the int64 constant of input 1 (opset 11+) or the "pads" attribute (before). */
static int read_pad(rd *r, const node_t *n, const char *nm)
{
    int nonzero = 0;
    const attr_t *a = find_attr(n, "pads");
    if (n->n_input > 1 && n->input[1][0]) {
        int64_t pads[2 * XE_MAX_RANK];
        int cnt = 0, rc = const_i64s(r, nm, n->input[1], "Pad's pads", pads, 2 * XE_MAX_RANK, &cnt);
        if (rc < 0) return rc;
        for (int i = 0; i < cnt; i++) nonzero |= pads[i] != 0;
    } else if (a) {
        for (size_t i = 0; i < a->n_ints; i++) nonzero |= a->ints[i] != 0;
    }
    if (nonzero)
        return xe_err_set(r->err, XE_EUNSUPPORTED,
                          "%s: node \"%s\": Pad with non-zero pads not supported (only an all-zero Pad, which is "
                          "dropped)",
                          r->path, nm);
    return drop_node(r, n, nm);
}

/* Drops node n (one input, one output), its output standing for its input from here on:
 * an all-zero Pad, an Identity. */
static int drop_node(rd *r, const node_t *n, const char *nm)
{
    if (n->n_input < 1 || !n->input[0][0]) return xe_err_set(r->err, XE_EPARSE, "%s: node \"%s\" has no input", r->path, nm);
    if (n->n_output != 1 || !n->output[0][0])
        return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": %s with %zu outputs", r->path, nm, n->op_type,
                          n->n_output);
    int t = input_tensor(r, nm, n->input[0]);
    if (t < 0) return t;
    const char **pa = realloc(r->alias, (size_t)(r->nalias + 1) * sizeof *pa);
    if (pa) r->alias = pa;
    int *pt = realloc(r->alias_t, (size_t)(r->nalias + 1) * sizeof *pt);
    if (pt) r->alias_t = pt;
    if (!pa || !pt) return xe_err_set(r->err, XE_ENOMEM, "%s: out of memory", r->path);
    r->alias[r->nalias] = n->output[0]; /* owned by the unpacked model, freed after the net is built */
    r->alias_t[r->nalias++] = t;
    return XE_OK;
}

/* ---- shape computations ------------------------------------------------------------ */

/* 1 when tensor t is a shape value: computed by a shape computation, or an int64
 * constant with values. */
static int is_shape_value(const xe_net *net, int t)
{
    if (xe_net_shape_fn_of(net, t) >= 0) return 1;
    return net->t[t].role == XE_T_PARAM && net->t[t].dtype == XE_DT_INT64 && net->t[t].idata != NULL;
}


/* Unsqueeze's / Squeeze's axes (the attribute before opset 13, the constant input 1
 * from 13): absent, or exactly one axis, 0 or -1 (shape values are scalars or vectors). */
static int axis0_only(rd *r, const node_t *n, const char *nm, int absent_ok)
{
    int64_t ax[8];
    int nax = 0;
    const attr_t *a = find_attr(n, "axes");
    if (a) {
        nax = a->n_ints < 8 ? (int)a->n_ints : 8;
        for (int i = 0; i < nax; i++) ax[i] = a->ints[i];
        if (a->n_ints > 8) nax = 9;
    } else if (n->n_input > 1 && n->input[1][0]) {
        TRY(const_i64s(r, nm, n->input[1], "axes", ax, 8, &nax));
    } else if (absent_ok) {
        return XE_OK;
    }
    if (nax != 1 || (ax[0] != 0 && ax[0] != -1))
        return xe_err_set(r->err, XE_EUNSUPPORTED,
                          "%s: node \"%s\": %s of a shape value with axes other than [0] not supported", r->path, nm,
                          n->op_type);
    return XE_OK;
}

#define NOT_SHAPE 1 /* read_shape_fn: the node computes on data, read it as an operator */

/* A node of the shape-arithmetic kinds (Shape, Gather, Unsqueeze, Squeeze, Concat, Cast,
 * Slice, Mul, Add, Sub) whose inputs are shapes: added as an xe_shape_fn, evaluated by
 * shape inference. Concat and Add on other tensors are operators (NOT_SHAPE returned);
 * any other of these kinds reading a tensor that is not a shape value is data-dependent
 * and refused (XE_EUNSUPPORTED naming the model, the node and the tensor). */
static int read_shape_fn(rd *r, const node_t *n, const char *nm, xe_shape_fn_kind kind)
{
    int64_t i64;
    int g;
    size_t nin = n->n_input;
    while (nin > 0 && !n->input[nin - 1][0]) nin--;
    if (nin == 0) return xe_err_set(r->err, XE_EPARSE, "%s: node \"%s\" has no input", r->path, nm);
    if (n->n_output > 1)
        return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": %s with %zu outputs", r->path, nm, n->op_type,
                          n->n_output);
    /* the inputs the computation reads: Unsqueeze / Squeeze / Slice take the rest as
     * constants (below) */
    size_t nread = kind == XE_SF_UNSQUEEZE || kind == XE_SF_SQUEEZE || kind == XE_SF_SLICE || kind == XE_SF_SHAPE ||
                           kind == XE_SF_CAST ? 1 : nin;
    int in[XE_OP_MAX_IN];
    int rc_in = node_inputs(r, n, nm, nread, in);
    if (rc_in) return rc_in;
    if (kind != XE_SF_SHAPE) {
        int shapes = 0;
        for (size_t j = 0; j < nread; j++) shapes += is_shape_value(r->net, in[j]);
        if (shapes < (int)nread) {
            if (kind == XE_SF_CONCAT || kind == XE_SF_ADD) return NOT_SHAPE;
            for (size_t j = 0; j < nread; j++)
                if (!is_shape_value(r->net, in[j]))
                    return xe_err_set(r->err, XE_EUNSUPPORTED,
                                      "%s: node \"%s\": %s of \"%s\", which is not computed from shapes (a Shape "
                                      "output or an int64 constant): data-dependent %s is not supported",
                                      r->path, nm, n->op_type, n->input[j], n->op_type);
        }
    }
    int64_t start = 0, end = INT64_MAX, step = 1;
    switch (kind) {
    case XE_SF_SHAPE:
        if (find_attr(n, "start") || find_attr(n, "end"))
            return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": Shape with start / end not supported", r->path,
                              nm);
        break;
    case XE_SF_GATHER:
    case XE_SF_CONCAT:
        IF_GOT(get_int(r, n, nm, "axis", &i64)) if (i64 != 0 && i64 != -1)
            return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": %s of shape values along axis %lld (0 only)",
                              r->path, nm, n->op_type, (long long)i64);
        if (kind == XE_SF_GATHER && nin != 2)
            return xe_err_set(r->err, XE_EPARSE, "%s: node \"%s\": Gather with %zu inputs", r->path, nm, nin);
        if (kind == XE_SF_CONCAT && !find_attr(n, "axis"))
            return xe_err_set(r->err, XE_EPARSE, "%s: node \"%s\": Concat without axis", r->path, nm);
        break;
    case XE_SF_UNSQUEEZE: TRY(axis0_only(r, n, nm, 0)); break;
    case XE_SF_SQUEEZE: TRY(axis0_only(r, n, nm, 1)); break;
    case XE_SF_CAST:
        if ((g = get_int(r, n, nm, "to", &i64)) < 0) return g;
        if (!g || i64 != ONNX__TENSOR_PROTO__DATA_TYPE__INT64)
            return xe_err_set(r->err, XE_EUNSUPPORTED,
                              "%s: node \"%s\": Cast of a shape value to type %lld not supported (int64 only)", r->path,
                              nm, g ? (long long)i64 : -1LL);
        break;
    case XE_SF_SLICE: {
        int64_t v[4][2];
        int cnt[4] = {0, 0, 0, 0};
        static const char *const what[4] = {"starts", "ends", "axes", "steps"};
        for (int q = 0; q < 4; q++) {
            const attr_t *a = r->opset > 0 && r->opset < 10 ? find_attr(n, what[q]) : NULL;
            if (a) {
                cnt[q] = a->n_ints == 1 ? 1 : 2;
                if (a->n_ints == 1) v[q][0] = a->ints[0];
            } else if (nin > (size_t)q + 1) {
                TRY(const_i64s(r, nm, n->input[q + 1], what[q], v[q], 2, &cnt[q]));
            }
        }
        if (cnt[0] != 1 || cnt[1] != 1 || cnt[2] > 1 || cnt[3] > 1 || (cnt[2] == 1 && v[2][0] != 0 && v[2][0] != -1))
            return xe_err_set(r->err, XE_EUNSUPPORTED,
                              "%s: node \"%s\": Slice of a shape value other than one range along axis 0 not supported",
                              r->path, nm);
        start = v[0][0];
        end = v[1][0];
        if (cnt[3] == 1) step = v[3][0];
        if (step < 1)
            return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": Slice of a shape value with step %lld (positive "
                              "steps only)", r->path, nm, (long long)step);
        break;
    }
    case XE_SF_MUL:
    case XE_SF_ADD:
    case XE_SF_SUB:
        if (nin != 2) return xe_err_set(r->err, XE_EPARSE, "%s: node \"%s\": %s with %zu inputs", r->path, nm, n->op_type, nin);
        break;
    default: break;
    }
    int f = xe_net_add_shape_fn(r->net, kind, nm, (int)nread, in, n->output[0], r->err);
    if (f < 0) return wrap(r, f, nm);
    r->net->sf[f].start = start;
    r->net->sf[f].end = end;
    r->net->sf[f].step = step;
    return XE_OK;
}

/* The shape computation kind of an ONNX op_type, or -1. */
static int shape_fn_kind(const char *op_type)
{
    for (int k = 0; k < XE_SF_COUNT; k++)
        if (strcmp(op_type, xe_shape_fn_kind_name((xe_shape_fn_kind)k)) == 0) return k;
    return -1;
}

static int read_node(rd *r, const node_t *n, size_t k)
{
    char buf[64];
    const char *nm = node_name(r->g, n, k, buf, sizeof buf);
    if (!n->op_type || !n->op_type[0]) return xe_err_set(r->err, XE_EPARSE, "%s: node \"%s\" has no op_type", r->path, nm);
    if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
        return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": unsupported operator \"%s\" (domain \"%s\")",
                          r->path, nm, n->op_type, n->domain);
    if (n->n_output < 1 || !n->output[0][0])
        return xe_err_set(r->err, XE_EPARSE, "%s: node \"%s\" has no output", r->path, nm);
    if (strcmp(n->op_type, "Constant") == 0) return XE_OK; /* a tensor, added when read */
    if (strcmp(n->op_type, "Pad") == 0) return read_pad(r, n, nm);
    /* Identity: PyTorch's EVAL exports with parameters write one per initializer it has
     * merged with another of equal value (squeezenet1_1: 18); refused before 2026-12-05 */
    if (strcmp(n->op_type, "Identity") == 0) return drop_node(r, n, nm);
    int sk = shape_fn_kind(n->op_type);
    if (sk >= 0) {
        int rc = read_shape_fn(r, n, nm, (xe_shape_fn_kind)sk);
        if (rc != NOT_SHAPE) return rc;
    }
    int kind = xe_op_kind_from_onnx(n->op_type);
    if (kind < 0)
        return xe_err_set(r->err, XE_EUNSUPPORTED, "%s: node \"%s\": unsupported operator \"%s\"", r->path, nm,
                          n->op_type);
    for (size_t j = 1; j < n->n_output; j++)
        if (n->output[j][0] && is_read(r->g, n->output[j], -1, NULL))
            return xe_err_set(r->err, XE_EUNSUPPORTED,
                              "%s: node \"%s\": output %zu \"%s\" of %s is read; xengine keeps only the first output",
                              r->path, nm, j, n->output[j], n->op_type);
    /* Dropout's ratio / training_mode and Clip's min / max become attributes */
    size_t nin = (kind == XE_OP_DROPOUT || kind == XE_OP_CLIP) && n->n_input > 1 ? 1 : n->n_input;
    while (nin > 0 && !n->input[nin - 1][0]) nin--; /* trailing optional inputs left out */
    if (nin == 0) return xe_err_set(r->err, XE_EPARSE, "%s: node \"%s\" has no input", r->path, nm);
    int in[XE_OP_MAX_IN];
    int rc_in = node_inputs(r, n, nm, nin, in);
    if (rc_in) return rc_in;
    for (size_t j = 0; j < nin; j++) {
        int f = xe_net_shape_fn_of(r->net, in[j]);
        if (f >= 0 && !(kind == XE_OP_RESHAPE && j == 1))
            return xe_err_set(r->err, XE_EUNSUPPORTED,
                              "%s: node \"%s\": %s reads \"%s\", a value computed from shapes (by \"%s\"): only a "
                              "Reshape's shape may",
                              r->path, nm, n->op_type, n->input[j], r->net->sf[f].name);
    }
    int op = xe_net_add_op(r->net, (xe_op_kind)kind, nm, (int)nin, in, n->output[0], r->err);
    if (op < 0) return wrap(r, op, nm);
    return read_attrs(r, n, nm, &r->net->op[op]);
}

/* The names the reader passes on to the graph (nodes' names; their operators' names
 * are checked too, as they are quoted) must be UTF-8: the graph and its schedules are
 * written as JSON, which holds nothing else. Checked before anything is read, so that the
 * message names the file and the node, not the output written after the solve. (Tensor
 * names stay in the network; xe_graph_finalize checks every name that reaches a graph.) */
static int check_names(rd *r)
{
    for (size_t k = 0; k < r->g->n_node; k++) {
        const node_t *n = r->g->node[k];
        if (n->name && !xe_utf8_valid(n->name))
            return xe_err_set(r->err, XE_EPARSE, "%s: node %zu: name is not valid UTF-8", r->path, k);
        if (n->op_type && !xe_utf8_valid(n->op_type))
            return xe_err_set(r->err, XE_EPARSE, "%s: node %zu: op_type is not valid UTF-8", r->path, k);
    }
    return XE_OK;
}

/* Refuses what shape inference takes but the executor cannot run, so that no schedule is
 * planned for a model that can never run: a MatMul with a 1-D operand. */
static int check_runnable(rd *r)
{
    for (int k = 0; k < r->net->nops; k++) {
        const xe_op *o = &r->net->op[k];
        for (int j = 0; o->kind == XE_OP_MATMUL && j < o->nin; j++)
            if (r->net->t[o->in[j]].rank == 1)
                return xe_err_set(r->err, XE_EUNSUPPORTED,
                                  "%s: node \"%s\": MatMul of the 1-D operand \"%s\" is not supported (2-D and "
                                  "batched operands only)",
                                  r->path, o->name, r->net->t[o->in[j]].name);
    }
    return XE_OK;
}

static int read_model(rd *r, const model_t *m, int64_t batch)
{
    if (!m->graph) return xe_err_set(r->err, XE_EPARSE, "%s: not an ONNX model: no graph", r->path);
    r->g = m->graph;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *os = m->opset_import[i];
        if ((!os->domain || !os->domain[0] || strcmp(os->domain, "ai.onnx") == 0) && os->has_version)
            r->opset = os->version;
    }
    if (r->g->n_node == 0) return xe_err_set(r->err, XE_EPARSE, "%s: not an ONNX model: the graph has no nodes", r->path);
    TRY(check_names(r));
    TRY(read_inputs(r, batch));
    for (size_t k = 0; k < r->g->n_node; k++) TRY(read_node(r, r->g->node[k], k));
    for (size_t o = 0; o < r->g->n_output; o++) {
        const char *name = r->g->output[o]->name;
        int t = -1;
        for (int a = r->nalias - 1; name && a >= 0 && t < 0; a--)
            if (strcmp(r->alias[a], name) == 0) t = r->alias_t[a];
        if (name && t < 0) t = xe_net_find_tensor(r->net, name);
        if (t < 0)
            return xe_err_set(r->err, XE_EINVAL, "%s: graph output \"%s\" is not produced by any node", r->path,
                              name ? name : "");
        if (r->net->t[t].producer < 0)
            return xe_err_set(r->err, XE_EINVAL, "%s: graph output \"%s\" is a graph input or a constant, not produced "
                              "by any node", r->path, name);
    }
    TRY(resolve_add_inputs(r));
    if (batch > 0) {
        int rc = xe_net_set_batch(r->net, batch, r->err);
        if (rc < 0) return wrap(r, rc, NULL);
    }
    int rc = xe_net_infer_shapes(r->net, r->err);
    if (rc < 0) return wrap(r, rc, NULL);
    return check_runnable(r);
}

/* "dir/resnet18.onnx" -> "resnet18" into buf. */
static void base_name(const char *path, char *buf, size_t len)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(buf, len, "%s", b);
    size_t l = strlen(buf);
    if (l > 5 && strcmp(buf + l - 5, ".onnx") == 0) buf[l - 5] = 0;
    if (!xe_utf8_valid(buf)) /* the graph's name, written into JSON files: a file name */
        for (char *p = buf; *p; p++) /* in another encoding becomes ASCII, not an error */
            if ((unsigned char)*p >= 0x80) *p = '_';
}

int xe_onnx_read_buffer(const uint8_t *buf, size_t len, const char *label, int64_t batch, xe_net **out,
                        xe_err *err)
{
    *out = NULL;
    if (!label) label = "<buffer>";
    if (batch < 0) return xe_err_set(err, XE_EINVAL, "%s: batch %lld (must be >= 0)", label, (long long)batch);
    model_t *m = onnx__model_proto__unpack(NULL, len, buf);
    if (!m) return xe_err_set(err, XE_EPARSE, "%s: not a valid ONNX protobuf (malformed or truncated)", label);
    char nm[256];
    base_name(label, nm, sizeof nm);
    rd r = {.path = label, .net = xe_net_new(nm), .err = err};
    int rc = r.net ? read_model(&r, m, batch) : xe_err_set(err, XE_ENOMEM, "%s: out of memory", label);
    onnx__model_proto__free_unpacked(m, NULL);
    free(r.undecided);
    free(r.alias);
    free(r.alias_t);
    if (rc < 0) {
        xe_net_free(r.net);
        return rc;
    }
    *out = r.net;
    return XE_OK;
}

int xe_onnx_read(const char *path, int64_t batch, xe_net **out, xe_err *err)
{
    *out = NULL;
    char *buf;
    size_t len;
    int rc = xe_io_read_all(path, &buf, &len, err);
    if (rc) return rc;
    rc = xe_onnx_read_buffer((const uint8_t *)buf, len, path, batch, out, err);
    free(buf);
    return rc;
}
