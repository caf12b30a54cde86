# Source: movers (issue 9): a small model with an obvious answer
# Expected: ok
# Atomicity: ok
# Smoke test: yes
from movers.lang import *
"""Atomic only thanks to a lock: the read and the write of `x` are in one critical section. Reducible
(acquire, two both-movers, release), so `--atomicity reduction` proves it too."""

x = 0
m = Lock()


def inc():
    global x
    with atomic():
        with m:
            t = x
            x = t + 1


Thread(target=inc).start()
Thread(target=inc).start()
