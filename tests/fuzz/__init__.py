"""The standing fuzz campaign of movers (issue 7, item 16; the surfaces of issue 21).

A grammar-aware mutation fuzzer over the models of ``examples/`` and ``docs/`` (``mutate.py``), a
command-line, signal and file-level suite (``cases.py``), hostile strings in thread names, messages and file
names, and corrupted or hostile trails (``hostile.py``), and the contract of docs/cli.md as
the oracle (``oracle.py``), run on warm workers that fork per input (``worker.py``, ``campaign.py``).

Every command line may use the options of issue 21: all twelve reductions, ``--store hashcompact`` and
``--store bitstate --bits N``, ``--workers 2`` (judged against the same run without it), ``--trail`` (then
``movers replay`` of the trail, pristine or corrupted), ``--html`` (the page must be well-formed), ``--format
sarif|junit``, ``--all-violations``. The oracle flags: tracebacks, exit codes outside 0-3 (4 included),
hangs past the time limit, JSON that is not one value or not as docs/result.schema.json says, SARIF or JUnit
that is not well-formed, raw control characters in text output or a page, model strings taken as rich
markup or left unescaped in HTML and XML, HTML pages that are not well-formed, trails that are missing,
unexpected or do not replay, a lossy store reported as a proof (exit 0 below 99.9% expected coverage, or
"verified … in any interleaving"), ``--workers`` verdicts that differ from the sequential search, and
processes left running.

- In CI: ``tests/fuzz/test_fuzz.py`` runs ``CI_COUNT`` (100) inputs of a fixed seed, well under a minute.
- By hand (a few thousand inputs, 2-3 inputs a second on two cores)::

      PYTHONPATH=src python -m tests.fuzz --seed S --count 3000 --jobs 2 --out /tmp/fuzz [--minimize DIR]

  It prints a table of failures by category and one line per distinct failure with its smallest input;
  each failing input is saved under ``OUT/cases/ID/`` (the model, ``case.json``, stdout, stderr, the files
  the run wrote as ``written-*``, ``findings.txt``).
- Replay one failure: ``python -m tests.fuzz --replay DIR/cases/ID/case.json``, or regenerate it with
  ``python -m tests.fuzz --seed S --index I``.
"""
