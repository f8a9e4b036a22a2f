"""The ``kgate`` console script: runs the kgate binary this package finds
(:func:`kgate.find_kgate`: ``$KGATE``, the binary bundled at install, ``kgate`` on ``PATH``,
the source tree's ``bin/kgate``) with the script's arguments, in its place."""
from __future__ import annotations

import os
import sys

from ._cli import KgateNotFound, find_kgate


def main() -> None:
    try:
        binary = find_kgate()
    except KgateNotFound as e:
        sys.stderr.write(f"kgate: {e.message}\n")
        sys.exit(2)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(binary, ["kgate"] + sys.argv[1:])


if __name__ == "__main__":  # pragma: no cover
    main()
