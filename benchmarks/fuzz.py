"""The standing fuzz campaign, by hand: ``python benchmarks/fuzz.py --seed S --count N [--jobs 2] [--out DIR]``.

The same as ``python -m tests.fuzz`` (see ``tests/fuzz/__init__.py``): it prints the table of the run
(inputs, by exit code, tracebacks, hangs past a limit, exit codes outside the set, invalid JSON, canaries
triggered, seconds) and the distinct failures, each with an input saved for ``--replay``; ``--minimize DIR``
writes one minimised input per distinct failure. Exit status 1 if anything failed.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fuzz.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
