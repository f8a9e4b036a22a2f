/* Attack 8, setsid child: in process 0 the kernel forks a child that
 * leaves the worker's session (setsid, then a second fork so that it is
 * nobody's child), closes every descriptor, waits until the evidence
 * folder has its SHA256SUMS, and then (0.2 s later) appends a forged row to
 * raw/proc-000.csv.gz and creates late-file-from-kernel.txt in the folder.
 * The kernel itself is the naive loop. */
#define _GNU_SOURCE
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include "kgate/kernel.h"
#include "attack_common.h"

void kernel(const kg_kargs *a);

static int forked;

static void nap_ms(long ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&t, NULL);
}

static void late_writer(const char *out)
{
    char path[4200], line[512] = "", last[512] = "";
    struct stat st;
    snprintf(path, sizeof path, "%s/SHA256SUMS", out);
    for (int i = 0; i < 1200 && stat(path, &st) != 0; i++) nap_ms(50);   /* up to 60 s */
    nap_ms(200);
    snprintf(path, sizeof path, "%s/raw/proc-000.csv.gz", out);
    FILE *fp = fopen(path, "r");
    if (fp != NULL) {
        while (fgets(line, sizeof line, fp) != NULL) snprintf(last, sizeof last, "%s", line);
        fclose(fp);
    }
    const char *hash = strrchr(last, ',');
    fp = fopen(path, "a");
    if (fp != NULL) {
        fprintf(fp, "0,fwd,0,cand,r,99,1.000,%s", hash ? hash + 1 : "0\n");
        fclose(fp);
    }
    snprintf(path, sizeof path, "%s/late-file-from-kernel.txt", out);
    fp = fopen(path, "w");
    if (fp != NULL) {
        fputs("written by a candidate kernel after SHA256SUMS\n", fp);
        fclose(fp);
    }
}

void kernel(const kg_kargs *a)
{
    if (!forked) {
        forked = 1;
        char out[4096];
        int proc;
        if (atk_worker_args(out, sizeof out, &proc) == 0 && proc == 0) {
            pid_t c = fork();
            if (c == 0) {
                setsid();
                if (fork() != 0) _exit(0);
                for (int fd = 0; fd < 1024; fd++) close(fd);
                open("/dev/null", O_RDWR);
                dup(0);
                dup(0);
                late_writer(out);
                _exit(0);
            }
            if (c > 0) {
                waitpid(c, NULL, 0);
                ATK_NOTE("setsid child started");
            }
        }
    }
    atk_rowsum(a);
}
