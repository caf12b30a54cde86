# Source: movers (issue 9): a small model with an obvious answer
# Expected: ok
# Atomicity: ok
# Smoke test: yes
from movers.lang import *
"""Nested blocks belong to the outermost one: the inner block reads `x`, the outer one also writes it,
all under the lock. Atomic (and reducible)."""

x = 0
m = Lock()


def inc():
    global x
    with atomic():
        with m:
            with atomic():
                t = x
            x = t + 1


Thread(target=inc).start()
Thread(target=inc).start()
