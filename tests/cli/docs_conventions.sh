# The docs agree with the code on what a reader copies: the one binary
# path `make` builds and the docs name (bin/kgate; docs/measurements/
# records what was run, and is left as it was), and docs/python.md's
# evidence schema, which is the package's SCHEMA_MAX and kgate's
# KG_EVIDENCE_SCHEMA.
. tests/cli_lib.sh
grep -q '^all: .*bin/kgate' Makefile || die "make's default target does not build bin/kgate"
grep -rn 'build/kgate\b' README.md docs python/README.md python/kgate/__init__.py python/tests/conftest.py \
    | grep -v '^docs/measurements/' >"$T/build-paths"
[ -s "$T/build-paths" ] && { cat "$T/build-paths" >&2; die "the docs name build/kgate: name bin/kgate, the binary make builds"; }
schema=$(sed -n 's/^#define KG_EVIDENCE_SCHEMA \([0-9]*\).*/\1/p' include/kgate/evidence.h)
pymax=$(sed -n 's/^SCHEMA_MAX = \([0-9]*\).*/\1/p' python/kgate/evidence.py)
[ -n "$schema" ] && [ "$schema" = "$pymax" ] || die "KG_EVIDENCE_SCHEMA $schema, the package's SCHEMA_MAX $pymax"
sed -n "s/.*Evidence('[^']*', schema=\([0-9]*\)).*/\1/p" docs/python.md >"$T/shown"
[ -s "$T/shown" ] || die "docs/python.md shows no Evidence(...) with its schema"
while read -r n; do
    [ "$n" = "$schema" ] || die "docs/python.md shows schema=$n; the package reads $schema"
done <"$T/shown"
grep -q "\`kgate.SCHEMA_MAX\` ($schema)" docs/python.md || die "docs/python.md names another SCHEMA_MAX than $schema"
exit 0
