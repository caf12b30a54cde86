# Source: Dwyer, Hatcliff, Robby, Ranganath, "Exploiting Object Escape and Locking Information in
#         Partial-Order Reductions for Concurrent Object-Oriented Programs" (FMSD 2004; papers/002),
#         section 6.4, Figure 6 (LDlock), line for line
# Expected: ok
# Smoke test: no (the Processes loop forever, as in the paper)
from movers.lang import *
"""Figure 6 of Dwyer et al. (LDlock): the paper's example where Stoller's locking discipline (LD) wins.

main creates a Sync object and an LDlock object in its locals and hands both to two Process threads in
their constructor; each Process flips the flag ``b`` forever while it holds the Sync's monitor. No reference
leads from the Sync to the LDlock, so WSL^dom cannot see the flag as protected; in the paper, LD can.

A known weakness of movers, kept here so that it shows (docs/reductions.md, "Known weaknesses"): its LD
names a lock as "the accessed object's own lock" or "the lock in a global no step writes", so a lock reached
only through locals and fields, as here, is not recognised: LDlock loses its guessed discipline and the
search restarts. And the locking strategies store more states than ``dwyer-da`` alone: they accept a step
only if it removes no reference through which another thread's object is reachable (so that a bad access
stays visible, reduce/locking.py), a rule ``dwyer-da`` does not need: without it they would store 5 states
here too. ``movers compare examples/ldlock_figure6.py`` gives 5 states for
``dwyer-da`` and 16 for each of ``dwyer-wsl``, ``dwyer-wsldom``, ``dwyer-ld`` and ``dwyer-ld+wsldom``
(tests/test_locking.py pins them). With the lock in a global (tests/test_locking.py, FIGURE_6), LD gains.
"""


class Sync:
    pass


class LDlock:
    def __init__(self):
        self.b = False


class Process(Thread):
    def __init__(self, sync, ldlock):
        super().__init__()
        self.sync = sync
        self.ldlock = ldlock

    def run(self):
        while True:
            with synchronized(self.sync):
                self.ldlock.b = not self.ldlock.b


def main():
    sync = Sync()
    ldlock = LDlock()
    p1 = Process(sync, ldlock)
    p2 = Process(sync, ldlock)
    p1.start()
    p2.start()


Thread(target=main).start()
