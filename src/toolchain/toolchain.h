/* toolchain.h: the tools the producer runs to build code: a program run
 * with its output captured in a log (a C compiler), the first line of a
 * tool's --version (the environment receipt), and kgate's include folder
 * that kernels and op modules are compiled against.
 *
 * A producer part: it starts processes, so no reader part may use it
 * (docs/architecture.md, "## Parts"). */
#ifndef KGATE_TOOLCHAIN_H
#define KGATE_TOOLCHAIN_H

#include <stddef.h>
#include "kgate/err.h"

/* Runs argv (no shell) with stdout and stderr appended to log_path (or
 * /dev/null when NULL) and waits, in this process's environment without
 * the compiler's own search paths (base/util.h's kg_env_compiler_path:
 * none of them chooses what kgate compiles).  *status is the wait status.  Returns
 * KG_OK when the child ran, whatever its exit code. */
int kg_run_capture(char *const argv[], const char *log_path, int *status, kg_err *err);

/* Records a failed build in err: head (one line: the plan's file:line,
 * what failed) and then, on the lines after it, the tool's output in
 * log_path as it printed it, so that a compiler's source lines and caret
 * marks still line up; the lines that do not fit in the message are
 * counted.  Returns code. */
int kg_tool_failed(kg_err *err, int code, const char *log_path, const char *head);

/* First line printed by `argv0 --version`, or "unknown". */
void kg_tool_version(const char *argv0, char *buf, size_t cap);

/* kgate's include/ folder for kernels: include_dir (the settings'
 * KGATE_INCLUDE) when not NULL or empty, else ../include next to the
 * executable, else the folder the library was built in. */
int kg_include_dir(const char *include_dir, char *buf, size_t cap, kg_err *err);

#endif
