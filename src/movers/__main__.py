"""``python -m movers``: the same command line as the ``movers`` script."""

from movers.cli import run

run()
