/* salt.c: the campaign's input salt (see salt.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <jansson.h>
#include "evidence/salt.h"

int kg_salt_draw(uint64_t *out, kg_err *err)
{
    uint64_t s = 0;
    for (int tries = 0; tries < 4 && s == 0; tries++) {
        ssize_t n = getrandom(&s, sizeof s, 0);
        if (n != (ssize_t)sizeof s)
            return kg_errorf(err, KG_EIO, "getrandom: %s: kgate needs the kernel's random bytes for the "
                             "input salt", n < 0 ? strerror(errno) : "short read");
    }
    if (s == 0) return kg_errorf(err, KG_EIO, "getrandom returned zero four times");
    *out = s;
    return KG_OK;
}

void kg_salt_format(uint64_t salt, char buf[19])
{
    snprintf(buf, 19, "0x%016llx", (unsigned long long)salt);
}

int kg_salt_parse(const char *what, const char *text, uint64_t *out, kg_err *err)
{
    uint64_t v = 0;
    if (text == NULL || strncmp(text, "0x", 2) != 0 || strlen(text) != 18)
        return kg_errorf(err, KG_EINPUT, "%s: input salt '%s' is not 0x and 16 hex digits (restore the file "
                         "from the campaign)", what, text ? text : "");
    for (const char *p = text + 2; *p; p++) {
        int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
        if (d < 0)
            return kg_errorf(err, KG_EINPUT, "%s: input salt '%s' has a character that is not a lowercase hex "
                             "digit (restore the file from the campaign)", what, text);
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return KG_OK;
}

int kg_salt_from_meta(const char *meta_json, uint64_t *out, int *found, kg_err *err)
{
    *out = 0;
    *found = 0;
    json_t *m = json_loads(meta_json ? meta_json : "", 0, NULL);
    if (m == NULL) return kg_errorf(err, KG_EINPUT, "meta.json: not valid JSON (restore it from the campaign)");
    json_t *v = json_object_get(m, "input_salt");
    int rc = KG_OK;
    if (v != NULL) {
        if (!json_is_string(v))
            rc = kg_errorf(err, KG_EINPUT, "meta.json: input_salt is not a string (restore it from the campaign)");
        else if ((rc = kg_salt_parse("meta.json", json_string_value(v), out, err)) == KG_OK)
            *found = 1;
    }
    json_decref(m);
    return rc;
}

int kg_salt_pipe(uint64_t salt, int *rfd, kg_err *err)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return kg_errorf(err, KG_EIO, "cannot make the salt pipe: %s", strerror(errno));
    char buf[19];
    kg_salt_format(salt, buf);
    /* 18 bytes fit any pipe buffer: the write does not block */
    ssize_t n = write(p[1], buf, 18);
    close(p[1]);
    if (n != 18) {
        close(p[0]);
        return kg_errorf(err, KG_EIO, "cannot write the salt pipe: %s", n < 0 ? strerror(errno) : "short write");
    }
    *rfd = p[0];
    return KG_OK;
}

int kg_salt_read_fd(int fd, uint64_t *out, kg_err *err)
{
    char buf[24];
    size_t len = 0;
    while (len < 18) {
        ssize_t n = read(fd, buf + len, 18 - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    if (len != 18) return kg_errorf(err, KG_EIO, "--salt-fd: read %zu of 18 bytes (kgate run starts the worker)", len);
    return kg_salt_parse("--salt-fd", buf, out, err);
}
