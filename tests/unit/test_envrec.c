/* test_envrec.c: the record of what ran and of the environment
 * (evidence/envrec.h): each variable's class, the recorded and unattested
 * lists, a program found as posix_spawnp finds it, this process's image's
 * SHA-256, and the worker's hello frame on the channel (channel.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "evidence/envrec.h"
#include "base/util.h"
#include "run/channel.h"

static void classes(void)
{
    static const struct { const char *name; kg_envrec_class want; } t[] = {
        { "KGATE_WORKER_WRAPPER", KG_ENVREC_UNATTESTED }, { "KGATE_CC", KG_ENVREC_UNATTESTED },
        { "KGATE_INCLUDE", KG_ENVREC_UNATTESTED }, { "KGATE_LIBCUDA", KG_ENVREC_UNATTESTED },
        { "KGATE_PYTHON", KG_ENVREC_UNATTESTED }, { "KGATE_NEGATIVE_ARM", KG_ENVREC_UNATTESTED },
        { "LD_PRELOAD", KG_ENVREC_UNATTESTED }, { "LD_LIBRARY_PATH", KG_ENVREC_UNATTESTED },
        { "LD_AUDIT", KG_ENVREC_UNATTESTED }, { "CUDA_INJECTION64_PATH", KG_ENVREC_UNATTESTED },
        { "KGATE_LOCK_DIR", KG_ENVREC_RECORDED }, { "KGATE_CACHE_DIR", KG_ENVREC_RECORDED },
        { "KGATE_PEAKS", KG_ENVREC_RECORDED }, { "KGATE_FAKE_MODEL", KG_ENVREC_RECORDED },
        { "KGATE_SOMETHING_NEW", KG_ENVREC_RECORDED }, { "CUDA_VISIBLE_DEVICES", KG_ENVREC_RECORDED },
        { "CUDA_HOME", KG_ENVREC_RECORDED }, { "PYTHONPATH", KG_ENVREC_RECORDED }, { "PATH", KG_ENVREC_RECORDED },
        { "LIBRARY_PATH", KG_ENVREC_RECORDED }, { "CPATH", KG_ENVREC_RECORDED },
        { "GCC_EXEC_PREFIX", KG_ENVREC_RECORDED }, { "OMP_NUM_THREADS", KG_ENVREC_RECORDED },
        { "HOME", KG_ENVREC_IGNORED }, { "TERM", KG_ENVREC_IGNORED }, { "KGATEX", KG_ENVREC_IGNORED },
        { "LD", KG_ENVREC_IGNORED },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        CHECK_MSG(kg_envrec_classify(t[i].name) == t[i].want, "%s: class %d, want %d", t[i].name,
                  (int)kg_envrec_classify(t[i].name), (int)t[i].want);
    CHECK(kg_env_compiler_path("C_INCLUDE_PATH") && kg_env_compiler_path("COMPILER_PATH"));
    CHECK(!kg_env_compiler_path("PATH") && !kg_env_compiler_path("LD_LIBRARY_PATH"));
}

static void lists(void)
{
    char *env[] = { (char *)"TERM=xterm", (char *)"LD_PRELOAD=/x/evil.so", (char *)"KGATE_LOCK_DIR=/l",
                    (char *)"KGATE_CC=gcc-12", (char *)"PATH=/usr/bin", (char *)"=odd", (char *)"NOEQUALS",
                    (char *)"PYTHONPATH=/p", NULL };
    json_t *o = kg_envrec_environment(env);
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    CHECK_MSG(text != NULL && strcmp(text, "{\"recorded\":{\"KGATE_LOCK_DIR\":\"/l\",\"PATH\":\"/usr/bin\","
                                           "\"PYTHONPATH\":\"/p\"},\"unattested\":[\"KGATE_CC=gcc-12\","
                                           "\"LD_PRELOAD=/x/evil.so\"]}") == 0, "%s", text ? text : "(null)");
    free(text);
    json_decref(o);
    char names[256];
    CHECK(kg_envrec_unattested(env, names, sizeof names) == 2);
    CHECK_MSG(strcmp(names, "KGATE_CC, LD_PRELOAD") == 0, "%s", names);
    char *none[] = { (char *)"PATH=/bin", NULL };
    CHECK(kg_envrec_unattested(none, names, sizeof names) == 0 && names[0] == '\0');
    o = kg_envrec_environment(NULL);
    CHECK(json_object_size(json_object_get(o, "recorded")) == 0 &&
          json_array_size(json_object_get(o, "unattested")) == 0);
    json_decref(o);
}

static void programs(void)
{
    char dir[] = "/tmp/kgate-envrec-XXXXXX", path[512], found[512], p2[1100];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/a", dir);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(path, sizeof path, "%s/b", dir);
    CHECK(mkdir(path, 0700) == 0);
    /* a/tool is not executable: the search goes on to b/tool */
    snprintf(path, sizeof path, "%s/a/tool", dir);
    int fd = open(path, O_WRONLY | O_CREAT, 0600);
    CHECK(fd >= 0 && write(fd, "x", 1) == 1);
    close(fd);
    snprintf(path, sizeof path, "%s/b/tool", dir);
    fd = open(path, O_WRONLY | O_CREAT, 0700);
    CHECK(fd >= 0 && write(fd, "#!/bin/sh\n", 10) == 10);
    close(fd);
    snprintf(p2, sizeof p2, "%s/a:%s/b", dir, dir);
    CHECK(kg_find_program("tool", p2, found, sizeof found) == 1);
    CHECK_MSG(strcmp(found, path) == 0, "%s", found);
    CHECK(kg_find_program("missing", p2, found, sizeof found) == 0);
    CHECK(kg_find_program("tool", NULL, found, sizeof found) == 0);
    CHECK(kg_find_program(path, NULL, found, sizeof found) == 1 && strcmp(found, path) == 0);
    /* the programs record: a wrapper's file and words, a compiler found on PATH */
    kg_envrec_in in = { .path_env = p2, .worker_wrapper = "tool --flag", .compiler = "tool",
                        .compiler_version = "tool 1.0" };
    json_t *o = kg_envrec_programs(&in);
    char hex[65];
    CHECK(kg_sha256_file(path, hex, NULL) == KG_OK);
    json_t *w = json_object_get(o, "worker_wrapper"), *cc = json_object_get(o, "compiler");
    CHECK(strcmp(json_string_value(json_object_get(w, "words")), "tool --flag") == 0);
    CHECK(strcmp(json_string_value(json_object_get(w, "sha256")), hex) == 0);
    CHECK(strcmp(json_string_value(json_object_get(cc, "sha256")), hex) == 0);
    CHECK(strcmp(json_string_value(json_object_get(cc, "version")), "tool 1.0") == 0);
    CHECK(json_object_get(o, "library_helper") == NULL);
    /* the supervisor's own image, as /proc/self/exe's file */
    char self[65], exe[512], fhex[65];
    CHECK(kg_exe_sha256(0, self, NULL) == KG_OK && kg_self_exe(exe, sizeof exe, NULL) == KG_OK &&
          kg_sha256_file(exe, fhex, NULL) == KG_OK && strcmp(self, fhex) == 0);
    CHECK(strcmp(json_string_value(json_object_get(json_object_get(o, "supervisor"), "sha256")), self) == 0);
    CHECK(strcmp(json_string_value(json_object_get(json_object_get(o, "arm_host"), "sha256")), self) == 0);
    CHECK(kg_exe_sha256(getpid(), fhex, NULL) == KG_OK && strcmp(self, fhex) == 0);
    json_decref(o);
    snprintf(p2, sizeof p2, "rm -rf %s", dir);
    CHECK(system(p2) == 0);
}

/* The hello frame: taken once; a second one breaks the protocol. */
static void hello(void)
{
    int p[2];
    kg_err err = { 0 };
    kg_chan c;
    CHECK(pipe(p) == 0);
    CHECK(kg_frame_send(p[1], KG_FRAME_HELLO, 2, "abc /x\n", 7, &err) == KG_OK);
    CHECK(kg_frame_send(p[1], KG_FRAME_HELLO, 2, "abc /x\n", 7, &err) == KG_OK);
    close(p[1]);
    kg_chan_init(&c, 2);
    CHECK(kg_chan_pump(&c, p[0], &err) == KG_OK);
    CHECK(c.part[KG_FRAME_HELLO] != NULL && c.partlen[KG_FRAME_HELLO] == 7);
    CHECK_STR_CONTAINS(c.bad, "a second frame");
    kg_chan_free(&c);
    close(p[0]);
}

int main(void)
{
    classes();
    lists();
    programs();
    hello();
    return kg_test_finish("test_envrec");
}
