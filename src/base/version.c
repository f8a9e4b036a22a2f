/* version.c: the version and the git commit this kgate was built from.
 * The Makefile rebuilds this one file whenever the commit (or the dirty
 * mark) changes, so a binary never carries the stamp of an older build. */
#include "base/util.h"

#ifndef KG_VERSION
#define KG_VERSION "unknown"
#endif
#ifndef KG_GIT_SHA
#define KG_GIT_SHA "unknown"
#endif

const char *kg_version(void)
{
    return KG_VERSION;
}

const char *kg_git_sha(void)
{
    return KG_GIT_SHA;
}
