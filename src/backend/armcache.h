/* armcache.h: the compile cache of cpu arms.
 *
 * A compiled arm's shared object is kept as DIR/arms/KEY.so (DIR: the
 * settings' cache_dir, $XDG_CACHE_HOME/kgate or $HOME/.cache/kgate; made
 * 0700, the user's own like their sources), where KEY is the SHA-256 of
 *   - the entry format,
 *   - the compiler's identity: the output of `CC -v` (its version, target
 *     and configuration) and, when CC is given as a path, the SHA-256 of
 *     that file,
 *   - the compile command: every flag and the source's path, not the
 *     output's,
 *   - the source as the preprocessor sees it (`CC -E` with the same flags):
 *     every header it includes, and what __FILE__ and the macros expand to.
 * An entry is one file: a first line "kgate-arm-cache 1 SHA256" naming the
 * SHA-256 of the object that follows.  It is written under a temporary
 * name of its own and renamed into place, so a reader sees a whole entry or
 * none, and two campaigns that store the same key leave one whole entry.
 * An entry is used only when the object's SHA-256 is the one its first line
 * names; any other entry (torn, damaged, of another format) is a miss, and
 * the compile that follows replaces it.  The digest proves an entry whole,
 * not who wrote it: the cache is used only while DIR and DIR/arms are
 * folders of this user that no one else may write (and the entry a file of
 * this user's); otherwise every arm is compiled, and stderr says why once.
 *
 * A campaign records which arms came from the cache: build/ARM.so.cache
 * (the entry's key and path) sits beside each such object in the evidence
 * folder, and environment.json's compile_cache lists them. */
#ifndef KGATE_ARMCACHE_H
#define KGATE_ARMCACHE_H

#include <limits.h>
#include "kgate/err.h"
#include "kgate/settings.h"

typedef struct kg_armcache {
    char path[PATH_MAX];   /* the entry: DIR/arms/KEY.so; "" when the cache is off or the key unknown */
    char key[65];
} kg_armcache;

/* The entry of one compile.  argv is the compile command (NULL-ended),
 * argv[out_at] the output path after "-o", and what follows it the
 * linker's arguments: every word but "-o" and the output goes into the
 * key, and the preprocessor runs argv before "-o".  work names a temporary
 * file the preprocessor may write (removed again), log the file its
 * messages go to.  The cache off (settings no_cache or no cache_dir), or a
 * preprocessor that fails: c->path is "" and the arm is compiled as
 * without a cache.  Never an error: the cache only saves time. */
void kg_armcache_key(const kg_settings *s, char *const argv[], int out_at, const char *work, const char *log,
                     kg_armcache *c);

/* 1 when entry c exists and verifies: its object is then written to so
 * (atomically) and its key to so.cache; 0 otherwise (nothing written). */
int kg_armcache_fetch(const kg_armcache *c, const char *so);

/* Keeps the object at so as entry c (best effort: a cache that cannot be
 * written is no error and leaves no partial entry). */
void kg_armcache_store(const kg_armcache *c, const char *so);

#endif
