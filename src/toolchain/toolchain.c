/* toolchain.c: see toolchain.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "toolchain/toolchain.h"
#include "base/util.h"

extern char **environ;

/* The environment a tool runs with: this process's, without the
 * compiler's own search paths (kg_env_compiler_path); a malloc'd array
 * of environ's pointers (NULL: out of memory). */
static char **tool_environ(void)
{
    size_t n = 0, k = 0;
    while (environ != NULL && environ[n] != NULL) n++;
    char **v = malloc((n + 1) * sizeof *v);
    if (v == NULL) return NULL;
    for (size_t i = 0; i < n; i++) {
        char name[64];
        size_t l = strcspn(environ[i], "=");
        snprintf(name, sizeof name, "%.*s", (int)(l < sizeof name - 1 ? l : sizeof name - 1), environ[i]);
        if (l >= sizeof name - 1 || !kg_env_compiler_path(name)) v[k++] = environ[i];
    }
    v[k] = NULL;
    return v;
}

int kg_run_capture(char *const argv[], const char *log_path, int *status, kg_err *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    const char *out = log_path ? log_path : "/dev/null";
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    char **env = tool_environ();
    int e = env == NULL ? ENOMEM : posix_spawnp(&pid, argv[0], &fa, NULL, argv, env);
    free(env);
    posix_spawn_file_actions_destroy(&fa);
    if (e != 0) return kg_errorf(err, KG_EIO, "cannot run %s: %s", argv[0], strerror(e));
    while (waitpid(pid, status, 0) < 0) {
        if (errno != EINTR) return kg_errorf(err, KG_EIO, "waiting for %s: %s", argv[0], strerror(errno));
    }
    return KG_OK;
}

int kg_tool_failed(kg_err *err, int code, const char *log_path, const char *head)
{
    char *text = NULL;
    size_t len = 0;
    if (log_path == NULL || kg_read_file(log_path, &text, &len, NULL) != KG_OK) text = NULL;
    while (text != NULL && len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
        text[--len] = '\0';
    if (text == NULL || len == 0) {
        free(text);
        return kg_errorf(err, code, "%s: (no output)", head);
    }
    /* whole lines, as many as fit beside the head and the tail note (the
     * log may not outlive the message: a refused campaign's folder goes) */
    char tail[64] = "";
    size_t room = KG_ERR_MSG_MAX - 1, used = strlen(head) + 2, tail_max = 40;
    size_t keep = len;
    if (used + len > room) {
        size_t lim = used + tail_max < room ? room - used - tail_max : 0;
        keep = 0;
        for (size_t i = 0; i < len && i < lim; i++)
            if (text[i] == '\n') keep = i;
        int more = 0;
        for (size_t i = keep; i < len; i++) more += text[i] == '\n';
        snprintf(tail, sizeof tail, "\n    (and %d more line%s)", more, more == 1 ? "" : "s");
        text[keep] = '\0';
    }
    int rc = kg_errorf(err, code, "%s:\n%s%s", head, text, tail);
    free(text);
    return rc;
}

void kg_tool_version(const char *argv0, char *buf, size_t cap)
{
    snprintf(buf, cap, "unknown");
    char log[] = "/tmp/kgate-version-XXXXXX";
    int fd = mkstemp(log);
    if (fd < 0) return;
    close(fd);
    char *argv[] = { (char *)argv0, (char *)"--version", NULL };
    int st;
    kg_err err = { 0 };
    if (kg_run_capture(argv, log, &st, &err) == KG_OK && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        FILE *fp = fopen(log, "r");
        if (fp != NULL) {
            if (fgets(buf, (int)cap, fp) != NULL) buf[strcspn(buf, "\r\n")] = '\0';
            fclose(fp);
        }
    }
    unlink(log);
}

int kg_include_dir(const char *env, char *buf, size_t cap, kg_err *err)
{
    char probe[PATH_MAX + 32];
    if (env != NULL && env[0] != '\0') {
        snprintf(probe, sizeof probe, "%s/kgate/kernel.h", env);
        if (!kg_path_exists(probe))
            return kg_errorf(err, KG_EIO, "KGATE_INCLUDE=%s has no kgate/kernel.h (point it at kgate's include folder)", env);
        snprintf(buf, cap, "%s", env);
        return KG_OK;
    }
    char exe[PATH_MAX];
    if (kg_self_exe(exe, sizeof exe, NULL) == KG_OK) {
        char *slash = strrchr(exe, '/');
        if (slash != NULL) *slash = '\0';
        const char *rel[] = { "/../include", "/../../include", "/../share/kgate/include" };
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            snprintf(probe, sizeof probe, "%s%s/kgate/kernel.h", exe, rel[i]);
            if (kg_path_exists(probe)) {
                char joined[PATH_MAX + 32];
                snprintf(joined, sizeof joined, "%s%s", exe, rel[i]);
                if (realpath(joined, buf) == NULL) snprintf(buf, cap, "%s", joined);
                return KG_OK;
            }
        }
    }
#ifdef KG_SOURCE_DIR
    snprintf(probe, sizeof probe, "%s/include/kgate/kernel.h", KG_SOURCE_DIR);
    if (kg_path_exists(probe)) { snprintf(buf, cap, "%s/include", KG_SOURCE_DIR); return KG_OK; }
#endif
    return kg_errorf(err, KG_EIO, "cannot find kgate's include folder next to the executable; set KGATE_INCLUDE to it");
}
