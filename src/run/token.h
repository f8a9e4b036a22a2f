/* token.h: the token a supervisor issues to each worker it starts.
 *
 * kg_campaign_run draws KG_TOKEN_BYTES fresh random bytes (getrandom) for
 * every worker and hands them over through a pipe of their own
 * (--token-fd), never on a command line or in the environment, as the
 * input salt is (salt.h).  The worker reads the pipe and closes it before
 * any arm loads, and authenticates every frame it sends with an
 * HMAC-SHA256 under the token (channel.h: the MAC frame, just before the
 * raw rows); the supervisor refuses a process whose HMAC does not match
 * ("bad rows").  A `kgate worker` started by hand has no token and
 * refuses to run. */
#ifndef KGATE_TOKEN_H
#define KGATE_TOKEN_H

#include "kgate/err.h"

#define KG_TOKEN_BYTES 32

/* Fresh random bytes from getrandom(2); KG_EIO when the kernel gives none. */
int kg_token_draw(unsigned char tok[KG_TOKEN_BYTES], kg_err *err);

/* Supervisor: a pipe holding tok, its read end in *rfd (close-on-exec:
 * the caller clears it for the spawn and closes it after). */
int kg_token_pipe(const unsigned char tok[KG_TOKEN_BYTES], int *rfd, kg_err *err);

/* Worker: reads the token from fd and closes it. */
int kg_token_read_fd(int fd, unsigned char tok[KG_TOKEN_BYTES], kg_err *err);

#endif
