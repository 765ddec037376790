#include "xengine/error.h"

#include <stdio.h>
#include <stdlib.h>

const char *xe_status_str(int status)
{
    switch (status) {
    case XE_OK: return "ok";
    case XE_EIO: return "i/o error";
    case XE_EPARSE: return "parse error";
    case XE_EINVAL: return "invalid input";
    case XE_ENOMEM: return "out of memory";
    case XE_EINFEASIBLE: return "infeasible";
    case XE_ETIMEOUT: return "time limit reached without a schedule";
    case XE_ESOLVER: return "solver failure";
    case XE_EINTERNAL: return "internal error";
    case XE_EUNSUPPORTED: return "unsupported";
    default: return "unknown status";
    }
}

int xe_err_set(xe_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void xe_assert_fail(const char *file, int line, const char *cond, const char *msg)
{
    fprintf(stderr, "xengine: internal error at %s:%d: %s (%s)\n", file, line, msg, cond);
    abort();
}
