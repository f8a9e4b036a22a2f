/* err.c: the error record (see kgate/err.h). */
#include <stdarg.h>
#include <stdio.h>
#include "kgate/err.h"

int kg_errorf(kg_err *err, int code, const char *fmt, ...)
{
    if (err == NULL || err->code != 0) return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

void kg_err_clear(kg_err *err)
{
    if (err == NULL) return;
    err->code = 0;
    err->msg[0] = '\0';
}

const char *kg_strerror(int code)
{
    switch (code) {
    case KG_OK: return "ok";
    case KG_EUSAGE: return "usage error";
    case KG_EINPUT: return "input error";
    case KG_EIO: return "I/O error";
    case KG_ENOMEM: return "out of memory";
    case KG_EBACKEND: return "backend error";
    case KG_ECHECK: return "check failed";
    case KG_EUNSUPPORTED: return "unsupported";
    case KG_EINADMISSIBLE: return "inadmissible";
    case KG_EARM: return "arm failed";
    default: return "internal error";
    }
}
