/* kgate/err.h: error codes and the caller-owned error record.
 *
 * Every library function that can fail returns an int: KG_OK (0) or a
 * negative KG_E* code, and fills a caller-owned kg_err with a one-line
 * message for people.  The first error recorded wins, so a cleanup path
 * that fails again does not hide the original cause.  The library never
 * calls exit() or abort() on an error a user can cause. */
#ifndef KGATE_ERR_H
#define KGATE_ERR_H

#include <stddef.h>

enum {
    KG_OK = 0,
    KG_EUSAGE = -1,       /* bad command line */
    KG_EINPUT = -2,       /* malformed plan, bad file contents */
    KG_EIO = -3,          /* file system, process spawning */
    KG_ENOMEM = -4,
    KG_EBACKEND = -5,     /* backend failed: compile, load, launch */
    KG_ECHECK = -6,       /* a correctness check failed */
    KG_EUNSUPPORTED = -7, /* feature or backend not available here */
    KG_EINADMISSIBLE = -8,/* a case violates an op or arm precondition, or the device refuses
                           * the arm's launch: the arm is INADMISSIBLE on that case */
    KG_EINTERNAL = -9,
    KG_EARM = -10         /* the arm's own code failed: its host crashed, exited, hung past its
                           * per-sample timeout, passed a limit or tripped the sandbox.  The
                           * arm is INCORRECT in that process; the process goes on */
};

#define KG_ERR_MSG_MAX 1024

typedef struct kg_err {
    int code;                  /* 0 while no error was recorded */
    char msg[KG_ERR_MSG_MAX];  /* one line, no trailing newline; a tool's output it quotes (a
                                * compiler's diagnostics, kg_tool_failed) on the lines after it */
} kg_err;

/* Records an error (printf-style message) unless one is already recorded.
 * Returns code, so that `return kg_errorf(err, KG_EINPUT, ...)` reads well.
 * err may be NULL. */
int kg_errorf(kg_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Clears err for reuse. */
void kg_err_clear(kg_err *err);

/* Short name of a code ("input error", ...). */
const char *kg_strerror(int code);

#endif
