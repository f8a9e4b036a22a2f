/* pyhelper.h: kgate's Python ops helper, the process (private to src/ops/;
 * pyops.c is its one user).  The helper is pyops_helper.py, embedded in
 * the binary (the Makefile makes it a string) and run as `python3 -I -B`
 * on the configured Python (kg_python_pick), or /usr/bin/python3 where
 * that one does not start or cannot import numpy (and torch when asked).
 * One per process, started when first needed and reused; it dies with
 * the process that started it.  Every request and reply is one frame of
 * base/frame.h on a SOCK_SEQPACKET socket (descriptors passed with it),
 * its payload a JSON object of at most KG_PYH_MAX_BYTES, a reply with its
 * "status" (0 ok) and, failed, its "error".  A helper that dies, hangs
 * past the configured limit or breaks the protocol is killed, and the
 * next request starts a fresh one (a new generation) unless it was pinned. */
#ifndef KGATE_OPS_PYHELPER_H
#define KGATE_OPS_PYHELPER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include "kgate/err.h"
#include "kgate/op.h"

#define KG_PYH_MAX_BYTES 65536
enum { KG_PYH_HELLO = 1, KG_PYH_LOAD = 2, KG_PYH_CALL = 3, KG_PYH_QUIT = 4 };

/* kg_pyops_configure's settings (kgate/op.h). */
void kg_pyhelper_configure(const kg_pyops_conf *c);

/* The helper running, started now where none is (torch: with PyTorch
 * imported; a running one without it is replaced); KG_EINPUT naming the
 * Python and what to install when none starts. */
int kg_pyhelper_up(int torch, kg_err *err);
/* Starts the helper without waiting for it (kg_pyhelper_up reads its
 * hello, and tells why it could not start), so that its imports run
 * beside other work; nothing where one runs or the helper is pinned. */
void kg_pyhelper_begin(int torch);

/* Counts the helpers started: what was loaded into an earlier one is gone. */
unsigned kg_pyhelper_generation(void);

/* One request of kind with nfd descriptors and its reply (*reply, the
 * caller's to decref): KG_OK; KG_EINPUT with the helper's error (it goes
 * on); KG_EIO when it died, hung or broke the protocol ("kgate's Python
 * helper WHAT ..."; it is gone). */
int kg_pyhelper_ask(uint32_t kind, json_t *req, const int *fds, int nfd, const char *what, json_t **reply,
                    kg_err *err);

/* A memfd holding len bytes of data (NULL: zeros): the descriptor, or -1. */
int kg_pyhelper_memfd(const char *name, const void *data, size_t len);

/* Pins the running helper (verify's op server, before it confines
 * itself): its script removed, its socket moved to fd (>= 0), its output
 * no longer read; it is never started again.  fd < 0: only the script. */
int kg_pyhelper_pin(int fd, kg_err *err);

void kg_pyhelper_stop(void);
long kg_pyhelper_pid(void);
const char *kg_pyhelper_versions(void);
void kg_pyhelper_source_sha256(char out[65]);

#endif
