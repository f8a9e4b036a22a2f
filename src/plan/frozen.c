/* frozen.c: frozen plans.
 *
 * `kgate freeze PLAN` writes the plan's canonical text under a header
 * comment that carries its SHA-256:
 *     # kgate frozen plan sha256 <64 hex>
 *     <canonical text>
 * The file is itself a valid plan (the parser drops comments).  A
 * confirmation run given `--frozen FILE` refuses a plan whose canonical
 * hash differs from the header, and lists the keys that changed by
 * comparing the two canonical texts section by section.
 *
 * This file does not parse plans: canonical texts come from plan.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plan/frozen.h"
#include "base/util.h"

#define FROZEN_TAG "# kgate frozen plan sha256 "

int kg_frozen_write(const kg_plan *plan, const char *path, kg_err *err)
{
    kg_sb sb = { 0 };
    kg_sb_printf(&sb, "%s%s\n%s", FROZEN_TAG, plan->hash, plan->canonical);
    int rc = sb.oom ? kg_errorf(err, KG_ENOMEM, "out of memory") : kg_write_atomic(path, sb.buf, sb.len, err);
    kg_sb_free(&sb);
    return rc;
}

/* One "[section] key" entry of a canonical text. */
typedef struct entry {
    char key[200];
    const char *val;
} entry;

static int collect(char *text, entry **out)
{
    int n = 0, cap = 0;
    entry *v = NULL;
    char section[160] = "";
    char *cur = text, *line;
    while ((line = kg_next_line(&cur)) != NULL) {
        if (line[0] == '\0' || line[0] == '#' || line[0] == ';') continue;
        if (line[0] == '[') {
            snprintf(section, sizeof section, "%s", line);
            continue;
        }
        char *eq = strstr(line, " = ");
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            entry *p = realloc(v, (size_t)cap * sizeof *p);
            if (p == NULL) break;
            v = p;
        }
        if (eq != NULL) {
            *eq = '\0';
            snprintf(v[n].key, sizeof v[n].key, "%s %s", section, line);
            v[n].val = eq + 3;
        } else {
            snprintf(v[n].key, sizeof v[n].key, "%s %s", section, line);
            v[n].val = "";
        }
        n++;
    }
    *out = v;
    return n;
}

static const entry *find(const entry *v, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v[i].key, key) == 0) return &v[i];
    return NULL;
}

void kg_frozen_diff(const char *a, const char *b, kg_sb *sb)
{
    char *ta = strdup(a ? a : ""), *tb = strdup(b ? b : "");
    entry *va = NULL, *vb = NULL;
    int na = 0, nb = 0, shown = 0;
    if (ta == NULL || tb == NULL) { sb->oom = 1; goto done; }
    na = collect(ta, &va);
    nb = collect(tb, &vb);
    for (int i = 0; i < na; i++) {
        const entry *o = find(vb, nb, va[i].key);
        if (o == NULL) kg_sb_printf(sb, "%s- %s = %s", shown++ ? "; " : "", va[i].key, va[i].val);
        else if (strcmp(o->val, va[i].val) != 0)
            kg_sb_printf(sb, "%s%s: %s -> %s", shown++ ? "; " : "", va[i].key, va[i].val, o->val);
    }
    for (int i = 0; i < nb; i++)
        if (find(va, na, vb[i].key) == NULL) kg_sb_printf(sb, "%s+ %s = %s", shown++ ? "; " : "", vb[i].key, vb[i].val);
    if (!shown) kg_sb_puts(sb, "no key differs (the order of sections changed)");
done:
    free(va);
    free(vb);
    free(ta);
    free(tb);
}

int kg_frozen_check(const kg_plan *plan, const char *frozen_path, kg_err *err)
{
    char *text = NULL;
    kg_sb diff = { 0 };
    int rc = kg_read_file(frozen_path, &text, NULL, err);
    if (rc != KG_OK) return rc;
    size_t tl = strlen(FROZEN_TAG);
    if (strncmp(text, FROZEN_TAG, tl) != 0 || strlen(text) < tl + 65 || text[tl + 64] != '\n') {
        rc = kg_errorf(err, KG_EINPUT, "%s:1: not a frozen plan (expected '%s<sha256>'; make one with kgate freeze)",
                       frozen_path, FROZEN_TAG);
        goto done;
    }
    const char *want = text + tl, *body = text + tl + 65;
    char body_hash[65];
    kg_sha256_hex(body, strlen(body), body_hash);
    if (strncmp(body_hash, want, 64) != 0) {
        rc = kg_errorf(err, KG_EINPUT, "%s: the frozen text does not hash to its header (%.12s, header %.12s): "
                       "the frozen file was edited; freeze the plan again", frozen_path, body_hash, want);
        goto done;
    }
    if (strncmp(plan->hash, want, 64) == 0) goto done;
    kg_frozen_diff(body, plan->canonical, &diff);
    rc = kg_errorf(err, KG_EINPUT, "%s differs from the frozen plan %s (sha256 %.12s, frozen %.12s): %s",
                   plan->path, frozen_path, plan->hash, want, diff.oom ? "out of memory" : diff.buf);
done:
    kg_sb_free(&diff);
    free(text);
    return rc;
}
