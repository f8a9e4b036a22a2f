/* salt.h: the input salt of a campaign.
 *
 * The supervisor draws a fresh random salt (getrandom) when a campaign
 * starts (kgate run and kgate check alike), records it in meta.json
 * ("input_salt"), and hands it to each worker through a pipe of its own
 * (--salt-fd), never on a command line or in the environment, which an
 * arm host could read.  The worker folds it into the seed of every input
 * it generates (kg_protocol_input_base), so that no two campaigns share
 * inputs and a cache kept across runs cannot hit.  --resume and
 * kgate verify take the recorded salt.  Arm code never sees it: arm hosts
 * get buffers only, and the worker closes the pipe before loading any arm.
 * A salt of 0 means "unsalted": the folders of kgate before the salt. */
#ifndef KGATE_SALT_H
#define KGATE_SALT_H

#include <stdint.h>
#include "kgate/err.h"

/* A fresh nonzero salt from getrandom(2).  KG_EIO when the kernel gives
 * no random bytes (kgate does not fall back to a guessable value). */
int kg_salt_draw(uint64_t *out, kg_err *err);

/* "0x0123456789abcdef" (18 characters and the NUL). */
void kg_salt_format(uint64_t salt, char buf[19]);

/* Parses kg_salt_format's text; KG_EINPUT naming what when malformed. */
int kg_salt_parse(const char *what, const char *text, uint64_t *out, kg_err *err);

/* The salt recorded in meta.json text; *found = 0 (and *out = 0) for a
 * folder written before the salt.  KG_EINPUT on a malformed value. */
int kg_salt_from_meta(const char *meta_json, uint64_t *out, int *found, kg_err *err);

/* Supervisor: a pipe holding the salt, its read end returned in *rfd
 * (close-on-exec cleared by the caller for the spawn, closed after). */
int kg_salt_pipe(uint64_t salt, int *rfd, kg_err *err);

/* Worker: reads the salt from fd and closes it. */
int kg_salt_read_fd(int fd, uint64_t *out, kg_err *err);

#endif
