# Source: movers (issue 9): a small model with an obvious answer
# Expected: ok
# Atomicity: ok
# Smoke test: no (the workers loop forever)
from movers.lang import *
"""A block that loops: `while True: with atomic():` leaves one block and comes to rest at the start of the
next in a single step (neither `while True` nor `with atomic()` costs a step). Each pass updates `x` under
the lock: atomic. (Reading the phase off the program counter would see the threads in a block for ever
and never compare the stores.)"""

x = 0
m = Lock()


def worker():
    global x
    while True:
        with atomic():
            with m:
                x = (x + 1) % 3


Thread(target=worker).start()
Thread(target=worker).start()
