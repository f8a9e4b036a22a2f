/* token.c: the worker's token (token.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include "run/token.h"

int kg_token_draw(unsigned char tok[KG_TOKEN_BYTES], kg_err *err)
{
    size_t got = 0;
    while (got < KG_TOKEN_BYTES) {
        ssize_t n = getrandom(tok + got, KG_TOKEN_BYTES - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            return kg_errorf(err, KG_EIO, "getrandom: %s: kgate needs the kernel's random bytes for the worker's "
                             "token", n < 0 ? strerror(errno) : "no bytes");
        got += (size_t)n;
    }
    return KG_OK;
}

int kg_token_pipe(const unsigned char tok[KG_TOKEN_BYTES], int *rfd, kg_err *err)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return kg_errorf(err, KG_EIO, "cannot make the token pipe: %s", strerror(errno));
    /* 32 bytes fit any pipe buffer: the write does not block */
    ssize_t n = write(p[1], tok, KG_TOKEN_BYTES);
    close(p[1]);
    if (n != KG_TOKEN_BYTES) {
        close(p[0]);
        return kg_errorf(err, KG_EIO, "cannot write the token pipe: %s", n < 0 ? strerror(errno) : "short write");
    }
    *rfd = p[0];
    return KG_OK;
}

int kg_token_read_fd(int fd, unsigned char tok[KG_TOKEN_BYTES], kg_err *err)
{
    size_t len = 0;
    while (len < KG_TOKEN_BYTES) {
        ssize_t n = read(fd, tok + len, KG_TOKEN_BYTES - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        len += (size_t)n;
    }
    close(fd);
    if (len != KG_TOKEN_BYTES)
        return kg_errorf(err, KG_EIO, "--token-fd: read %zu of %d bytes: no token from a supervisor (a worker runs "
                         "only under kgate run)", len, KG_TOKEN_BYTES);
    return KG_OK;
}
