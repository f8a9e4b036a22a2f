/* attest.c: the signed statement of a campaign (attest.h): base64, the
 * DSSE pre-authentication encoding, Ed25519 keys, signing and checking
 * through OpenSSL, and the in-toto statement built from the folder. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include "evidence/attest.h"
#include "kgate/evidence.h"
#include "base/util.h"

/* ---- base64 ---- */

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *kg_b64_encode(const void *data, size_t len)
{
    const unsigned char *p = data;
    char *out = malloc(4 * ((len + 2) / 3) + 1), *o = out;
    if (out == NULL) return NULL;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        *o++ = b64chars[v >> 18 & 63];
        *o++ = b64chars[v >> 12 & 63];
        *o++ = b64chars[v >> 6 & 63];
        *o++ = b64chars[v & 63];
    }
    if (len - i == 1) {
        unsigned v = (unsigned)p[i] << 16;
        *o++ = b64chars[v >> 18 & 63];
        *o++ = b64chars[v >> 12 & 63];
        *o++ = '=';
        *o++ = '=';
    } else if (len - i == 2) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;
        *o++ = b64chars[v >> 18 & 63];
        *o++ = b64chars[v >> 12 & 63];
        *o++ = b64chars[v >> 6 & 63];
        *o++ = '=';
    }
    *o = '\0';
    return out;
}

static int b64val(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;   /* the URL-safe alphabet is read too (DSSE allows it) */
    if (c == '/' || c == '_') return 63;
    return -1;
}

int kg_b64_decode(const char *text, unsigned char **out, size_t *outlen, kg_err *err)
{
    size_t n = strlen(text);
    while (n > 0 && text[n - 1] == '=') n--;
    if (strlen(text) - n > 2 || n % 4 == 1)
        return kg_errorf(err, KG_EINPUT, "not base64 (its length or padding is wrong)");
    unsigned char *buf = malloc(n * 3 / 4 + 1);
    if (buf == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64val(text[i]);
        if (v < 0) {
            free(buf);
            return kg_errorf(err, KG_EINPUT, "not base64 (character %zu)", i);
        }
        acc = acc << 6 | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[o++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    *out = buf;
    *outlen = o;
    return KG_OK;
}

/* ---- DSSE ---- */

int kg_dsse_pae(const char *type, const void *body, size_t len, unsigned char **out, size_t *outlen, kg_err *err)
{
    char head[128];
    int hn = snprintf(head, sizeof head, "DSSEv1 %zu ", strlen(type));
    char mid[32];
    int mn = snprintf(mid, sizeof mid, " %zu ", len);
    size_t tl = strlen(type), total = (size_t)hn + tl + (size_t)mn + len;
    unsigned char *p = malloc(total + 1);
    if (p == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
    memcpy(p, head, (size_t)hn);
    memcpy(p + hn, type, tl);
    memcpy(p + (size_t)hn + tl, mid, (size_t)mn);
    if (len > 0) memcpy(p + (size_t)hn + tl + (size_t)mn, body, len);
    *out = p;
    *outlen = total;
    return KG_OK;
}

/* ---- keys ---- */

static int keyid_of(EVP_PKEY *k, char keyid[65], kg_err *err)
{
    unsigned char raw[32];
    size_t rl = sizeof raw;
    if (EVP_PKEY_get_raw_public_key(k, raw, &rl) != 1 || rl != sizeof raw)
        return kg_errorf(err, KG_EINPUT, "the key is not an Ed25519 key (kgate key init makes one)");
    kg_sha256_hex(raw, rl, keyid);
    return KG_OK;
}

/* Reads a PEM key: a private key when priv, else a public one (a private
 * key file is read as its public half too). */
static int load_key(const char *path, int priv, EVP_PKEY **out, kg_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = kg_read_file(path, &text, &len, err);
    if (rc != KG_OK) return rc;
    BIO *b = BIO_new_mem_buf(text, (int)len);
    EVP_PKEY *k = NULL;
    if (b != NULL) {
        k = priv ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
        if (k == NULL && !priv) {
            BIO_free(b);
            b = BIO_new_mem_buf(text, (int)len);
            if (b != NULL) k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
        }
        BIO_free(b);
    }
    OPENSSL_cleanse(text, len);
    free(text);
    if (k == NULL)
        return kg_errorf(err, KG_EINPUT, "%s: not a PEM %s key (kgate key init makes %s and %s)", path,
                         priv ? "private" : "public", KG_ATTEST_PRIV, KG_ATTEST_PUB);
    if (EVP_PKEY_get_id(k) != EVP_PKEY_ED25519) {
        EVP_PKEY_free(k);
        return kg_errorf(err, KG_EINPUT, "%s: not an Ed25519 key (kgate key init makes one)", path);
    }
    *out = k;
    return KG_OK;
}

int kg_attest_keyid(const char *pem_path, char keyid[65], kg_err *err)
{
    EVP_PKEY *k = NULL;
    int rc = load_key(pem_path, 0, &k, err);
    if (rc == KG_OK) rc = keyid_of(k, keyid, err);
    EVP_PKEY_free(k);
    return rc;
}

/* Writes all of data to a new file: O_EXCL|O_NOFOLLOW, mode. */
static int write_new(const char *path, const void *data, size_t len, mode_t mode, kg_err *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) {
        if (errno == EEXIST)
            return kg_errorf(err, KG_EUSAGE, "%s exists: kgate key init does not overwrite a key (move it away, or "
                             "pass --out DIR for another folder)", path);
        return kg_errorf(err, KG_EIO, "cannot create %s: %s", path, strerror(errno));
    }
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            unlink(path);
            return kg_errorf(err, KG_EIO, "cannot write %s: %s", path, strerror(e));
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        unlink(path);
        return kg_errorf(err, KG_EIO, "cannot write %s: %s", path, strerror(errno));
    }
    return KG_OK;
}

/* The PEM text of k (private or public) in a malloc'd buffer. */
static int pem_text(EVP_PKEY *k, int priv, char **out, size_t *outlen, kg_err *err)
{
    BIO *b = BIO_new(BIO_s_mem());
    if (b == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
    int ok = priv ? PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) : PEM_write_bio_PUBKEY(b, k);
    char *p = NULL;
    long n = BIO_get_mem_data(b, &p);
    int rc = KG_OK;
    if (ok != 1 || n <= 0 || (*out = malloc((size_t)n)) == NULL) {
        rc = kg_errorf(err, KG_EINTERNAL, "OpenSSL could not write the key as PEM");
    } else {
        memcpy(*out, p, (size_t)n);
        *outlen = (size_t)n;
    }
    BIO_free(b);   /* a memory BIO: its buffer is freed (not cleansed: the copy is) */
    return rc;
}

int kg_attest_key_init(const char *dir, char *priv, size_t privcap, char *pub, size_t pubcap, kg_err *err)
{
    int rc;
    struct stat st;
    if (stat(dir, &st) != 0) {
        if ((rc = kg_mkdir_p(dir, err)) != KG_OK) return rc;
        (void)chmod(dir, 0700);
    } else if (!S_ISDIR(st.st_mode)) {
        return kg_errorf(err, KG_EUSAGE, "%s is not a folder (--out DIR names the folder of the key files)", dir);
    }
    snprintf(priv, privcap, "%s/%s", dir, KG_ATTEST_PRIV);
    snprintf(pub, pubcap, "%s/%s", dir, KG_ATTEST_PUB);
    if (lstat(priv, &st) == 0)
        return kg_errorf(err, KG_EUSAGE, "%s exists: kgate key init does not overwrite a key (move it away, or pass "
                         "--out DIR for another folder)", priv);
    if (lstat(pub, &st) == 0)
        return kg_errorf(err, KG_EUSAGE, "%s exists: kgate key init does not overwrite a key (move it away, or pass "
                         "--out DIR for another folder)", pub);
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    if (k == NULL) return kg_errorf(err, KG_EINTERNAL, "OpenSSL could not make an Ed25519 key");
    char *ptext = NULL, *qtext = NULL;
    size_t plen = 0, qlen = 0;
    if ((rc = pem_text(k, 1, &ptext, &plen, err)) == KG_OK && (rc = pem_text(k, 0, &qtext, &qlen, err)) == KG_OK &&
        (rc = write_new(priv, ptext, plen, 0600, err)) == KG_OK) {
        if ((rc = write_new(pub, qtext, qlen, 0644, err)) != KG_OK) unlink(priv);
    }
    if (ptext != NULL) OPENSSL_cleanse(ptext, plen);
    free(ptext);
    free(qtext);
    EVP_PKEY_free(k);
    return rc;
}

/* ---- the statement ---- */

/* The folder's files with their digests, sorted by path: every file but
 * the envelope. */
static int subjects(const char *dir, json_t **out, kg_err *err)
{
    char **files = NULL, path[KG_PATH_MAX * 3], hex[65];
    int n = 0, rc = kg_evidence_list(dir, &files, &n, err);
    if (rc != KG_OK) return rc;
    json_t *a = json_array();
    for (int i = 0; i < n && rc == KG_OK; i++) {
        if (strcmp(files[i], KG_ATTEST_FILE) == 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        if ((rc = kg_sha256_file(path, hex, err)) != KG_OK) break;
        json_array_append_new(a, json_pack("{s:s, s:{s:s}}", "name", files[i], "digest", "sha256", hex));
    }
    kg_strlist_free(files, n);
    if (rc != KG_OK) {
        json_decref(a);
        return rc;
    }
    *out = a;
    return KG_OK;
}

static json_t *load_json(const char *dir, const char *name, kg_err *err)
{
    char path[KG_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (j == NULL) kg_errorf(err, KG_EINPUT, "%s: %s (line %d): the campaign did not write it whole", path, je.text,
                             je.line);
    return j;
}

static json_t *copy_of(json_t *o, const char *key)
{
    json_t *v = o != NULL ? json_object_get(o, key) : NULL;
    return v != NULL ? json_deep_copy(v) : json_null();
}

/* The predicate: what ran and what it decided, from the folder's own
 * records (meta.json, environment.json, results.json, plan.sha256). */
static int predicate(const char *dir, json_t **out, kg_err *err)
{
    json_t *meta = load_json(dir, "meta.json", err), *env = NULL, *res = NULL;
    if (meta == NULL) return err->code;
    if ((env = load_json(dir, "environment.json", err)) == NULL || (res = load_json(dir, "results.json", err)) == NULL) {
        json_decref(meta);
        json_decref(env);
        return err->code;
    }
    char path[KG_PATH_MAX + 32], *ps = NULL;
    snprintf(path, sizeof path, "%s/plan.sha256", dir);
    int rc = kg_read_file(path, &ps, NULL, err);
    if (rc == KG_OK) {
        ps[strcspn(ps, "\n")] = '\0';
        json_t *p = json_object();
        json_object_set_new(p, "plan_sha256", json_string(ps));
        json_t *kg = json_object();
        json_object_set_new(kg, "version", copy_of(meta, "kgate_version"));
        json_object_set_new(kg, "git_sha", copy_of(meta, "kgate_git_sha"));
        json_object_set_new(kg, "binary_sha256", copy_of(env, "kgate_binary_sha256"));
        json_object_set_new(p, "kgate", kg);
        /* what ran, by SHA-256, and the environment that changes what kgate does (envrec.h) */
        json_object_set_new(p, "programs", copy_of(env, "programs"));
        json_object_set_new(p, "environment", copy_of(env, "environment"));
        json_t *dev = json_object();
        json_object_set_new(dev, "backend", copy_of(meta, "backend"));
        json_object_set_new(dev, "description", copy_of(meta, "device"));
        json_object_set_new(dev, "host", copy_of(meta, "host"));
        json_object_set_new(p, "device", dev);
        json_object_set_new(p, "input_salt", copy_of(meta, "input_salt"));
        json_object_set_new(p, "started_utc", copy_of(meta, "started_utc"));
        json_t *v = json_object();
        json_object_set_new(v, "gate_pass", copy_of(res, "gate_pass"));
        json_object_set_new(v, "gate_reason", copy_of(res, "gate_reason"));
        json_object_set_new(v, "invalid", copy_of(res, "invalid"));
        json_object_set_new(v, "invalid_host", copy_of(res, "invalid_host"));
        json_object_set_new(v, "processes_accepted", copy_of(res, "processes_accepted"));
        json_object_set_new(v, "processes_excluded", copy_of(res, "processes_excluded"));
        json_t *arms = json_array(), *rs = json_object_get(res, "results");
        size_t i;
        json_t *r;
        json_array_foreach(rs, i, r) {
            json_t *e = json_object();
            const char *keys[] = { "case", "arm", "role", "state", "verdict" };
            for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) json_object_set_new(e, keys[k], copy_of(r, keys[k]));
            json_array_append_new(arms, e);
        }
        json_object_set_new(v, "results", arms);
        json_object_set_new(p, "verdicts", v);
        *out = p;
    }
    free(ps);
    json_decref(meta);
    json_decref(env);
    json_decref(res);
    return rc;
}

static int statement(const char *dir, char **text, kg_err *err)
{
    json_t *subj = NULL, *pred = NULL;
    int rc = subjects(dir, &subj, err);
    if (rc == KG_OK) rc = predicate(dir, &pred, err);
    if (rc != KG_OK) {
        json_decref(subj);
        return rc;
    }
    json_t *s = json_object();
    json_object_set_new(s, "_type", json_string(KG_ATTEST_STATEMENT));
    json_object_set_new(s, "subject", subj);
    json_object_set_new(s, "predicateType", json_string(KG_ATTEST_PREDICATE));
    json_object_set_new(s, "predicate", pred);
    *text = json_dumps(s, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(s);
    return *text != NULL ? KG_OK : kg_errorf(err, KG_ENOMEM, "out of memory");
}

/* ---- signing ---- */

int kg_attest_write(const char *dir, int dirfd, const char *key_path, char keyid[65], kg_err *err)
{
    if (key_path == NULL) {
        if (unlinkat(dirfd, KG_ATTEST_FILE, 0) != 0 && errno != ENOENT)
            return kg_errorf(err, KG_EIO, "%s/%s: cannot remove the stale envelope: %s", dir, KG_ATTEST_FILE,
                             strerror(errno));
        return KG_OK;
    }
    EVP_PKEY *k = NULL;
    char *st = NULL, *pb64 = NULL, *sb64 = NULL, *env = NULL;
    unsigned char *pae = NULL, sig[64];
    size_t paelen = 0, siglen = sizeof sig;
    EVP_MD_CTX *md = NULL;
    int rc = load_key(key_path, 1, &k, err);
    if (rc != KG_OK) goto done;
    if ((rc = keyid_of(k, keyid, err)) != KG_OK) goto done;
    if ((rc = statement(dir, &st, err)) != KG_OK) goto done;
    if ((rc = kg_dsse_pae(KG_ATTEST_PAYLOAD_TYPE, st, strlen(st), &pae, &paelen, err)) != KG_OK) goto done;
    md = EVP_MD_CTX_new();
    if (md == NULL || EVP_DigestSignInit(md, NULL, NULL, NULL, k) != 1 ||
        EVP_DigestSign(md, sig, &siglen, pae, paelen) != 1) {
        rc = kg_errorf(err, KG_EINTERNAL, "OpenSSL could not sign with %s", key_path);
        goto done;
    }
    pb64 = kg_b64_encode(st, strlen(st));
    sb64 = kg_b64_encode(sig, siglen);
    if (pb64 == NULL || sb64 == NULL) {
        rc = kg_errorf(err, KG_ENOMEM, "out of memory");
        goto done;
    }
    json_t *e = json_pack("{s:s, s:s, s:[{s:s, s:s}]}", "payloadType", KG_ATTEST_PAYLOAD_TYPE, "payload", pb64,
                          "signatures", "keyid", keyid, "sig", sb64);
    env = e != NULL ? json_dumps(e, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(e);
    if (env == NULL) {
        rc = kg_errorf(err, KG_ENOMEM, "out of memory");
        goto done;
    }
    size_t el = strlen(env);
    char *full = realloc(env, el + 2);
    if (full == NULL) {
        rc = kg_errorf(err, KG_ENOMEM, "out of memory");
        goto done;
    }
    env = full;
    env[el] = '\n';
    env[el + 1] = '\0';
    char shown[KG_PATH_MAX + 64];
    snprintf(shown, sizeof shown, "%s/%s", dir, KG_ATTEST_FILE);
    rc = kg_write_atomic_at(dirfd, KG_ATTEST_FILE, shown, env, el + 1, err);
done:
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(k);
    free(st);
    free(pae);
    free(pb64);
    free(sb64);
    free(env);
    return rc;
}

/* ---- checking ---- */


/* The statement's subjects against the folder's files now. */
static void check_subjects(const char *dir, json_t *stmt, kg_sb *out, int *nbad)
{
    json_t *have = NULL;
    kg_err e = { 0 };
    if (subjects(dir, &have, &e) != KG_OK) {
        kg_problem(out, nbad, "%s: cannot list the folder: %s", dir, e.msg);
        return;
    }
    json_t *want = json_object_get(stmt, "subject");
    if (!json_is_array(want)) {
        kg_problem(out, nbad, "%s: the signed statement has no subject list", KG_ATTEST_FILE);
        json_decref(have);
        return;
    }
    size_t i, k;
    json_t *w, *h;
    json_array_foreach(want, i, w) {
        const char *name = json_string_value(json_object_get(w, "name"));
        const char *dg = json_string_value(json_object_get(json_object_get(w, "digest"), "sha256"));
        if (name == NULL || dg == NULL) {
            kg_problem(out, nbad, "%s: subject %zu has no name or sha256 digest", KG_ATTEST_FILE, i);
            continue;
        }
        const char *found = NULL;
        json_array_foreach(have, k, h)
            if (strcmp(json_string_value(json_object_get(h, "name")), name) == 0) {
                found = json_string_value(json_object_get(json_object_get(h, "digest"), "sha256"));
                break;
            }
        if (found == NULL)
            kg_problem(out, nbad, "%s: signed in %s but missing from the folder (removed after the campaign)", name,
                    KG_ATTEST_FILE);
        else if (strcmp(found, dg) != 0)
            kg_problem(out, nbad, "%s: SHA-256 %.16s... differs from the signed statement's (%.16s...): the file was "
                    "changed after the campaign", name, found, dg);
    }
    json_array_foreach(have, k, h) {
        const char *name = json_string_value(json_object_get(h, "name"));
        int listed = 0;
        json_array_foreach(want, i, w) {
            const char *wn = json_string_value(json_object_get(w, "name"));
            if (wn != NULL && strcmp(wn, name) == 0) {
                listed = 1;
                break;
            }
        }
        if (!listed) kg_problem(out, nbad, "%s: not in the signed statement (added after the campaign)", name);
    }
    json_decref(have);
}

/* The statement's unattested environment against the verifier's
 * allowance: one problem for each variable it does not allow. */
static void check_environment(json_t *stmt, const kg_attest_allow *allow, kg_sb *out, int *nbad)
{
    json_t *envr = json_object_get(json_object_get(stmt, "predicate"), "environment");
    json_t *un = json_object_get(envr, "unattested");
    if (!json_is_array(un)) {
        kg_problem(out, nbad, "unattested environment: not recorded (the statement has no predicate.environment: "
                   "signed by a kgate that did not record the environment its campaign ran in)");
        return;
    }
    size_t i;
    json_t *v;
    json_array_foreach(un, i, v) {
        const char *e = json_string_value(v);
        if (e == NULL) {
            kg_problem(out, nbad, "unattested environment: entry %zu is not text", i);
            continue;
        }
        size_t nl = strcspn(e, "=");
        int ok = 0;
        for (int k = 0; k < allow->n && !ok; k++)
            ok = strlen(allow->names[k]) == nl && strncmp(allow->names[k], e, nl) == 0;
        if (!ok)
            kg_problem(out, nbad, "unattested environment: %.400s (it can replace code the campaign ran: "
                       "--allow-env %.*s accepts it)", e, (int)(nl < 200 ? nl : 200), e);
    }
}

int kg_attest_check(const char *dir, const char *pub_path, const kg_attest_allow *allow, kg_attest_state *state,
                    char keyid[65], kg_sb *out, int *nbad, kg_err *err)
{
    char path[KG_PATH_MAX + 64];
    keyid[0] = '\0';
    *state = KG_ATTEST_UNSIGNED;
    EVP_PKEY *k = NULL;
    char want_id[65] = "";
    int rc = KG_OK;
    /* the key first: an unreadable key is the caller's error, not the folder's */
    if (pub_path != NULL) {
        if ((rc = load_key(pub_path, 0, &k, err)) != KG_OK) return rc;
        if ((rc = keyid_of(k, want_id, err)) != KG_OK) {
            EVP_PKEY_free(k);
            return rc;
        }
    }
    snprintf(path, sizeof path, "%s/%s", dir, KG_ATTEST_FILE);
    struct stat sst;
    if (lstat(path, &sst) != 0) {
        EVP_PKEY_free(k);
        if (pub_path != NULL)
            kg_problem(out, nbad, "%s: missing: the folder is unsigned (a campaign run with --key, or with a key made "
                    "by kgate key init, writes it)", KG_ATTEST_FILE);
        return KG_OK;
    }
    *state = KG_ATTEST_BAD_SIG;
    json_error_t je;
    json_t *env = json_load_file(path, 0, &je), *stmt = NULL;
    unsigned char *payload = NULL, *pae = NULL;
    size_t plen = 0, paelen = 0;
    const char *ptype = json_string_value(json_object_get(env, "payloadType"));
    const char *pb64 = json_string_value(json_object_get(env, "payload"));
    json_t *sigs = json_object_get(env, "signatures");
    kg_err e = { 0 };
    if (env == NULL) {
        kg_problem(out, nbad, "%s: not JSON (%s, line %d)", KG_ATTEST_FILE, je.text, je.line);
        goto done;
    }
    if (ptype == NULL || pb64 == NULL || !json_is_array(sigs) || json_array_size(sigs) == 0) {
        kg_problem(out, nbad, "%s: not a DSSE envelope (payloadType, payload and signatures expected)", KG_ATTEST_FILE);
        goto done;
    }
    /* whose signature: the first one's keyid (kgate writes one) */
    const char *kid = json_string_value(json_object_get(json_array_get(sigs, 0), "keyid"));
    snprintf(keyid, 65, "%s", kid != NULL ? kid : "");
    if (kg_b64_decode(pb64, &payload, &plen, &e) != KG_OK) {
        kg_problem(out, nbad, "%s: payload: %s", KG_ATTEST_FILE, e.msg);
        goto done;
    }
    if (k == NULL) {   /* no key: the keyid is all that can be said */
        *state = KG_ATTEST_UNCHECKED;
        goto done;
    }
    if (strcmp(ptype, KG_ATTEST_PAYLOAD_TYPE) != 0) {
        kg_problem(out, nbad, "%s: payloadType '%s' is not %s", KG_ATTEST_FILE, ptype, KG_ATTEST_PAYLOAD_TYPE);
        goto done;
    }
    if ((rc = kg_dsse_pae(ptype, payload, plen, &pae, &paelen, err)) != KG_OK) goto done;
    int good = 0;
    size_t i;
    json_t *s;
    json_array_foreach(sigs, i, s) {
        const char *sid = json_string_value(json_object_get(s, "keyid"));
        const char *sb = json_string_value(json_object_get(s, "sig"));
        unsigned char *sig = NULL;
        size_t sl = 0;
        if (sb == NULL || kg_b64_decode(sb, &sig, &sl, &e) != KG_OK) continue;
        EVP_MD_CTX *md = EVP_MD_CTX_new();
        if (md != NULL && EVP_DigestVerifyInit(md, NULL, NULL, NULL, k) == 1 &&
            EVP_DigestVerify(md, sig, sl, pae, paelen) == 1) {
            good = 1;
            if (sid != NULL && strcmp(sid, want_id) != 0)
                kg_problem(out, nbad, "%s: the signature verifies with the key but names keyid %.16s... (the key's is "
                        "%.16s...)", KG_ATTEST_FILE, sid, want_id);
            snprintf(keyid, 65, "%s", want_id);
        }
        EVP_MD_CTX_free(md);
        free(sig);
        if (good) break;
    }
    if (!good) {
        kg_problem(out, nbad, "%s: the signature does not verify with key %.16s... (signed by %.16s...): the envelope "
                "was changed, or another key signed it", KG_ATTEST_FILE, want_id, keyid[0] ? keyid : "no keyid");
        goto done;
    }
    stmt = json_loadb((const char *)payload, plen, 0, &je);
    if (stmt == NULL) {
        kg_problem(out, nbad, "%s: the signed payload is not JSON (%s)", KG_ATTEST_FILE, je.text);
        goto done;
    }
    const char *ty = json_string_value(json_object_get(stmt, "_type"));
    const char *pt = json_string_value(json_object_get(stmt, "predicateType"));
    if (ty == NULL || strcmp(ty, KG_ATTEST_STATEMENT) != 0 || pt == NULL || strcmp(pt, KG_ATTEST_PREDICATE) != 0) {
        kg_problem(out, nbad, "%s: the signed payload is not an in-toto Statement v1 with predicate %s", KG_ATTEST_FILE,
                KG_ATTEST_PREDICATE);
        goto done;
    }
    int before = *nbad;
    check_subjects(dir, stmt, out, nbad);
    *state = *nbad == before ? KG_ATTEST_GOOD : KG_ATTEST_BAD_SUBJECTS;
    if (allow != NULL) check_environment(stmt, allow, out, nbad);
done:
    EVP_PKEY_free(k);
    json_decref(env);
    json_decref(stmt);
    free(payload);
    free(pae);
    return rc == KG_OK ? KG_OK : rc;
}
