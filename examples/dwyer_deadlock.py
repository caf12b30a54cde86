# Source: Dwyer, Hatcliff, Robby, Ranganath, "Exploiting Object Escape and Locking Information in
#         Partial-Order Reductions for Concurrent Object-Oriented Programs" (FMSD 2004; papers/002),
#         section 8, Table 1 row "Deadlock"
# Expected: ok
# Smoke test: yes
from movers.lang import *
"""Deadlock (Dwyer et al., section 8; Table 1), the deadlock-free variant.

Rebuilt from the text of section 8 (the paper shows no code): "a pair of threads share objects on which
locks are acquired, but there are no accesses to or through those objects". The main thread allocates
two Resource objects and starts two Locker threads; each Locker acquires its first and then its second
Resource's monitor, ROUNDS times. Static escape analysis gets nothing (the Resources escape); dynamic
escape analysis sees the initialisation phase as thread-local; (DA) also runs the Lockers' local steps
(the loop counter) without storing the states between them.

Differences from the paper: the paper's program locks in opposite orders and deadlocks, and Bogor, which
counted the states of a full search (3 threads, 142 states in (B)), found that deadlock in every
strategy. movers stops at the first violation, so a state count of that program would depend on the
search order; this file is the same program with both Lockers taking the Resources in the same order,
which cannot deadlock and is searched in full. dwyer_deadlock_bug.py is the paper's program, opposite
orders. `main` is a thread of its own; `while (true)` became ROUNDS rounds, so that the threads end.

Scaling: ROUNDS rounds per Locker (benchmarks/dwyer.py rewrites the line `ROUNDS = 2`: keep it).
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
    t2 = Locker(a, b)
    t2.start()


Thread(target=main).start()
