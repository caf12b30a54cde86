# Source: movers (issue 9): a small model with an obvious answer
# Expected: ok
# Atomicity: violation (atomicity)
# Smoke test: yes
from movers.lang import *
"""Two critical sections of one lock in one block: each access is protected, but the lock is released
between the read and the write, so another thread's update can come in between (a lost update). Not
reducible either: `--atomicity reduction` names the acquire that comes after the release."""

x = 0
m = Lock()


def inc():
    global x
    with atomic():
        with m:
            t = x
        with m:
            x = t + 1


Thread(target=inc).start()
Thread(target=inc).start()
