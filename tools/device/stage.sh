#!/bin/sh
# tools/device/stage.sh DEST: copies what a GPU run of this tree needs into DEST, a folder
# that travels to the device machine (the device tool sends the session's own checkout, not
# a helper's worktree: DEST is an ignored folder of that checkout, e.g. CHECKOUT/.carry/NAME,
# named in the run's carry).  Build first, here: make portable, and for the comparison
# bin/kgate-base-portable from the tree before the change (strip both: the carry is 64 MiB).
#   sh tools/device/stage.sh /path/to/checkout/.carry/cudaiso
#   run(carry = [".carry/cudaiso"], command = "cd .carry/cudaiso && sh tools/device/cudaiso_device.sh $OUT")
set -eu
DEST=${1:?usage: stage.sh DEST}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$DEST"
mkdir -p "$DEST/bin" "$DEST/tests"
for b in kgate-portable kgate-base-portable isolation-probe; do
    [ -x "$ROOT/bin/$b" ] && cp "$ROOT/bin/$b" "$DEST/bin/"
done
cp -r "$ROOT/include" "$ROOT/kernels" "$ROOT/examples" "$ROOT/tools" "$DEST/"
cp -r "$ROOT/tests/gpu" "$DEST/tests/"
du -sh "$DEST"
