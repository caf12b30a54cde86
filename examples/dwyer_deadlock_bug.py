# Source: Dwyer et al. (FMSD 2004; papers/002), section 8, Table 1 row "Deadlock": the paper's program;
#         dwyer_deadlock.py with the bug injected
# Expected: violation (deadlock)
# Smoke test: no (it may deadlock under CPython)
from movers.lang import *
"""Deadlock (Dwyer et al., section 8): the paper's program, which dwyer_deadlock.py fixes.

The injected bug: the second Locker takes the Resources in the opposite order (`Locker(b, a)`), so each
Locker can hold one monitor and wait for the other's: violation kind deadlock. Every reduction must
report it, as the paper's strategies all did.
"""

ROUNDS = 2


class Resource:
    pass


class Locker(Thread):
    def __init__(self, first, second):
        super().__init__()
        self.first = first
        self.second = second

    def run(self):
        i = 0
        while i < ROUNDS:
            with synchronized(self.first):
                with synchronized(self.second):
                    i += 1


def main():
    a = Resource()
    b = Resource()
    t1 = Locker(a, b)
    t1.start()
    t2 = Locker(b, a)
    t2.start()


Thread(target=main).start()
