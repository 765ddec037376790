/* xengine io — budget strings: a percentage of the no-recomputation peak or a size. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json_util.h"
#include "xengine/io.h"

/* Units of size strings: decimal (kB = 1000) and binary (KiB = 1024). */
static const struct {
    const char *unit;
    double bytes;
} size_units[] = {
    {"", 1.0},          {"B", 1.0},         {"KB", 1e3},         {"MB", 1e6},
    {"GB", 1e9},        {"TB", 1e12},       {"KiB", 1024.0},     {"MiB", 1048576.0},
    {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}, {"PB", 1e15}, {"EB", 1e18},
    {"PiB", 1125899906842624.0}, {"EiB", 1152921504606846976.0},
};

/* "NN%" or a size such as "12345", "500MB", "12GiB", "12.5 GiB" (io.h). A number without
 * unit is a count of bytes and must be whole ("1.5" is refused, as a devices file's
 * numeric 1.5); a size with a unit is rounded down to whole bytes. 1 byte .. 9.2e18 bytes. */
int xe_io_parse_budget(const char *what, const char *s, int64_t *bytes, double *frac, xe_err *err)
{
    char *end;
    double x = strtod(s, &end);
    if (end == s || isspace((unsigned char)*s))
        goto bad;
    for (const char *c = s; c < end; c++) /* decimal only: no "0x1000", "inf", "nan" */
        if (!isdigit((unsigned char)*c) && !strchr(".eE+-", *c)) goto bad;
    while (isspace((unsigned char)*end)) end++;
    if (strcmp(end, "%") == 0) {
        if (!(x > 0))
            return xe_err_set(err, XE_EINVAL, "%s: budget \"%s\" must be > 0%%", what, s);
        if (!isfinite(x)) /* 1e400% overflows to infinity: too large, not too small */
            return xe_err_set(err, XE_EINVAL, "%s: budget \"%s\" is too large", what, s);
        *frac = x / 100.0;
        return XE_OK;
    }
    for (size_t i = 0; i < sizeof size_units / sizeof size_units[0]; i++) {
        if (strcasecmp(end, size_units[i].unit) != 0) continue;
        if (!*end && x != floor(x))
            return xe_err_set(err, XE_EINVAL,
                              "%s: budget \"%s\" is not a whole number of bytes (use a unit, \"1.5GiB\", or \"NN%%\")",
                              what, s);
        double b = floor(x * size_units[i].bytes);
        if (!(b >= 1))
            return xe_err_set(err, XE_EINVAL, "%s: budget \"%s\" must be at least 1 byte", what, s);
        if (b > 9.2e18) /* 9.2e18 < INT64_MAX */
            return xe_err_set(err, XE_EINVAL, "%s: budget \"%s\" is too large", what, s);
        *bytes = (int64_t)b;
        return XE_OK;
    }
bad:
    return xe_err_set(err, XE_EPARSE,
                      "%s: budget \"%s\" is not a size: use bytes (12345), \"NN%%\" of the "
                      "no-recomputation peak, or a size with unit (\"500MB\", \"12GiB\")",
                      what, s);
}

const char *xe_io_bytes(int64_t b, char *buf, size_t cap)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double x = (double)b;
    int u = 0;
    while (x >= 1024.0 && u < 4) {
        x /= 1024.0;
        u++;
    }
    snprintf(buf, cap, u ? "%.2f %s" : "%.0f %s", x, unit[u]);
    return buf;
}
