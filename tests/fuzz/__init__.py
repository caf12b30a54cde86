"""The standing fuzz campaign of movers (issue 7, item 16).

A grammar-aware mutation fuzzer over the models of ``examples/`` and ``docs/`` (``mutate.py``), a
command-line, signal and file-level suite (``cases.py``), and the contract of docs/cli.md as
the oracle (``oracle.py``), run on warm workers that fork per input (``worker.py``, ``campaign.py``).

- In CI: ``tests/fuzz/test_fuzz.py`` runs a few hundred inputs of a fixed seed in about a minute.
- By hand: ``python -m tests.fuzz --seed S --count N [--jobs 2] [--out DIR] [--minimize DIR]``.
- Replay one failure: ``python -m tests.fuzz --replay DIR/cases/ID/case.json``, or regenerate it with
  ``python -m tests.fuzz --seed S --index I``.
"""
