#include "xengine/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Messages quote names and strings from input files: keep them one line by writing
 * control characters as \n, \r, \t or \xHH (truncating at the buffer's end). */
static void escape_controls(char *msg, size_t cap)
{
    char out[sizeof ((xe_err *)0)->msg];
    size_t k = 0;
    if (cap > sizeof out) cap = sizeof out;
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
        char esc[5];
        if (*p >= 0x20 && *p != 0x7f) {
            esc[0] = (char)*p;
            esc[1] = '\0';
        } else if (*p == '\n') {
            snprintf(esc, sizeof esc, "\\n");
        } else if (*p == '\r') {
            snprintf(esc, sizeof esc, "\\r");
        } else if (*p == '\t') {
            snprintf(esc, sizeof esc, "\\t");
        } else {
            snprintf(esc, sizeof esc, "\\x%02x", (unsigned)*p);
        }
        size_t len = strlen(esc);
        if (k + len >= cap) break;
        memcpy(out + k, esc, len);
        k += len;
    }
    out[k] = '\0';
    memcpy(msg, out, k + 1);
}

int xe_err_set(xe_err *err, int code, const char *fmt, ...)
{
    if (err) {
        /* formatted aside first: callers prefix the message in hand ("...: %s", err->msg),
         * and vsnprintf into the buffer it reads is undefined (it doubled the prefix and
         * cut the reason: "...: CBC's solution fails ...: t 700000000002") */
        char buf[sizeof err->msg];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        memcpy(err->msg, buf, sizeof buf);
        escape_controls(err->msg, sizeof err->msg);
    }
    return code;
}

void xe_assert_fail(const char *file, int line, const char *cond, const char *msg)
{
    fprintf(stderr, "xengine: internal error at %s:%d: %s (%s)\n", file, line, msg, cond);
    abort();
}
