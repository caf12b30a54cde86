# Source: movers (issue 9): a small model with an obvious answer
# Expected: ok
# Atomicity: violation (atomicity)
# Smoke test: yes
from movers.lang import *
"""Check-then-act: take a free slot if there is one. Both threads can see the slot free and both take
it; serially, the second would find it taken."""

slot = None
taken = 0


def take(me):
    global slot, taken
    with atomic():
        if slot is None:
            slot = me
            taken = taken + 1


Thread(target=take, args=(1,)).start()
Thread(target=take, args=(2,)).start()
