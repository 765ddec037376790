/* xengine — error codes and the error message carrier.
 *
 * Every fallible function returns an int status: XE_OK (0) on success or one of the
 * negative XE_E* codes below, and, when given a non-NULL xe_err, writes one line
 * (no trailing newline) naming the file or object and the problem; xe_err_set replaces
 * control characters quoted from input (a newline in a name) as \n or \xHH. */
#ifndef XENGINE_ERROR_H
#define XENGINE_ERROR_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    XE_OK = 0,
    XE_EIO = -1,         /* file cannot be opened, read or written */
    XE_EPARSE = -2,      /* malformed file: bad JSON, missing or ill-typed field */
    XE_EINVAL = -3,      /* well-formed but invalid: cycle, missing node, negative size */
    XE_ENOMEM = -4,      /* an allocation failed */
    XE_EINFEASIBLE = -5, /* no schedule exists under the budget (or the solver proved so) */
    XE_ETIMEOUT = -6,    /* the time limit passed before any schedule was found */
    XE_ESOLVER = -7,     /* the MILP solver failed or returned an unusable answer */
    XE_EINTERNAL = -8,   /* an invariant broke: a bug in xengine */
    XE_EUNSUPPORTED = -9 /* a feature or operator xengine does not handle */
};

/* One-line error message; filled by the function that failed. */
typedef struct xe_err {
    char msg[512];
} xe_err;

/* Human-readable name of a status code ("ok", "parse error", ...). Static storage. */
const char *xe_status_str(int status);

/* Formats msg into err (if non-NULL) and returns code, so callers can write
 * `return xe_err_set(err, XE_EPARSE, "%s: ...", path);`. */
int xe_err_set(xe_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Invariant check: on failure prints file:line and the message to stderr, then aborts.
 * Used for internal consistency only, never for input validation. */
#define XE_ASSERT(cond, msg)                                                         \
    do {                                                                             \
        if (!(cond)) xe_assert_fail(__FILE__, __LINE__, #cond, (msg));               \
    } while (0)
void xe_assert_fail(const char *file, int line, const char *cond, const char *msg)
    __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif
