# Source: movers (issue 9): a small model with an obvious answer
# Expected: ok
# Atomicity: violation (atomicity)
# Smoke test: yes
from movers.lang import *
"""atomicity_locked_increment.py without the lock: two increments can read the same value, and the
interleaved run ends with x == 1 where every serial run ends with x == 2."""

x = 0


def inc():
    global x
    with atomic():
        t = x
        x = t + 1


Thread(target=inc).start()
Thread(target=inc).start()
