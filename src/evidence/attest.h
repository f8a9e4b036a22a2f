/* attest.h: the signed statement of a campaign (attest.c).
 *
 * At the end of a campaign, after SHA256SUMS, the supervisor writes
 * attestation.dsse.json: a DSSE envelope
 *
 *   { "payloadType": "application/vnd.in-toto+json",
 *     "payload": base64(statement),
 *     "signatures": [ { "keyid": sha256hex(raw public key), "sig": base64 } ] }
 *
 * around an in-toto Statement v1 whose subjects are every file of the
 * folder (SHA256SUMS included, the envelope itself not) with its SHA-256,
 * and whose predicate (KG_ATTEST_PREDICATE) records the plan's hash,
 * kgate's version and binary hash, the programs that ran by SHA-256 and
 * the environment that changes kgate's behaviour (environment.json's
 * "programs" and "environment", envrec.h), the device and the verdicts.  The
 * signature is Ed25519 over the DSSE pre-authentication encoding
 *   "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body.
 * Keys are PEM files made by `kgate key init` (kg_attest_key_init).
 *
 * The private key is read by kg_attest_write alone, when every worker of
 * the campaign has ended; no child process gets its path or its bytes. */
#ifndef KGATE_ATTEST_H
#define KGATE_ATTEST_H

#include <stddef.h>
#include "kgate/err.h"

#define KG_ATTEST_FILE "attestation.dsse.json"
#define KG_ATTEST_PAYLOAD_TYPE "application/vnd.in-toto+json"
#define KG_ATTEST_STATEMENT "https://in-toto.io/Statement/v1"
#define KG_ATTEST_PREDICATE "https://kgate.dev/campaign/v1"
#define KG_ATTEST_PRIV "signing-key.pem"
#define KG_ATTEST_PUB "signing-key.pub.pem"

struct kg_sb;

/* Standard base64 with padding.  kg_b64_encode returns a malloc'd NUL-
 * terminated string (NULL: out of memory); kg_b64_decode returns KG_OK
 * with a malloc'd buffer, KG_EINPUT on text that is not base64. */
char *kg_b64_encode(const void *data, size_t len);
int kg_b64_decode(const char *text, unsigned char **out, size_t *outlen, kg_err *err);

/* The DSSE pre-authentication encoding of (type, body), malloc'd. */
int kg_dsse_pae(const char *type, const void *body, size_t len, unsigned char **out, size_t *outlen, kg_err *err);

/* Makes an Ed25519 key pair in dir (created 0700 when missing):
 * KG_ATTEST_PRIV (mode 0600, never overwritten: KG_EUSAGE when it exists)
 * and KG_ATTEST_PUB.  The paths are returned in priv and pub. */
int kg_attest_key_init(const char *dir, char *priv, size_t privcap, char *pub, size_t pubcap, kg_err *err);

/* The keyid of a public or private key PEM file: the SHA-256 hex of the
 * raw 32-byte public key. */
int kg_attest_keyid(const char *pem_path, char keyid[65], kg_err *err);

/* Writes KG_ATTEST_FILE in dir (through dirfd) signed with the private
 * key key_path; *keyid receives its keyid.  With key_path NULL, removes a
 * stale envelope (an unsigned folder has none). */
int kg_attest_write(const char *dir, int dirfd, const char *key_path, char keyid[65], kg_err *err);

typedef enum {
    KG_ATTEST_UNSIGNED,      /* no envelope */
    KG_ATTEST_UNCHECKED,     /* an envelope, no public key to check it with: keyid says whose */
    KG_ATTEST_GOOD,          /* the signature verifies and the subjects are the folder's files */
    KG_ATTEST_BAD_SIG,       /* malformed, or the signature does not verify with the key */
    KG_ATTEST_BAD_SUBJECTS   /* the signature verifies, the folder differs from its subjects */
} kg_attest_state;

/* The variables a verifier accepts among a signed statement's
 * unattested environment (predicate.environment.unattested, envrec.h):
 * `kgate verify --allow-env NAME`. */
typedef struct kg_attest_allow {
    const char *const *names;
    int n;
} kg_attest_allow;

/* Checks dir's envelope with the public key pub_path (NULL: none, the
 * keyid only).  Every problem is appended to problems, one line each,
 * and counted in *nbad.  With allow (not NULL) and a signature that
 * verifies, every unattested variable of the statement that allow does
 * not name is a problem, "unattested environment: NAME=value", and so is
 * a statement that records no environment; NULL leaves the environment
 * unchecked (kgate merge's shards: the merged statement carries theirs).
 * Returns KG_OK when the check ran; an error when the key cannot be read. */
int kg_attest_check(const char *dir, const char *pub_path, const kg_attest_allow *allow, kg_attest_state *state,
                    char keyid[65], struct kg_sb *problems, int *nbad, kg_err *err);

#endif
