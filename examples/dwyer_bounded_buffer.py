# Source: Dwyer, Hatcliff, Robby, Ranganath, "Exploiting Object Escape and Locking Information in
#         Partial-Order Reductions for Concurrent Object-Oriented Programs" (FMSD 2004; papers/002),
#         Figure 3 (BBDriver, InOut, BoundedBuffer), Tables 1-2 row "Bounded Buffer"
# Expected: ok
# Smoke test: no (the InOut threads loop forever, as in the paper)
from movers.lang import *
"""Bounded Buffer (Dwyer et al., Figure 3; Tables 1 and 2), line for line.

The main thread (the paper's BBDriver.main) creates two BoundedBuffers of bound 3 (each holds at most 2
objects), adds two objects to the first, and starts two InOut threads that forever take an object from
one buffer and add it to the other: 3 threads. BoundedBuffer is self-locking (every method synchronized;
the paper's weak self-locking discipline, WSL) and its array is reachable only through it (the
dominated discipline, WSL^dom).

Differences from the paper: Java's `new Object()` is an instance of the empty class Item; `this.wait()`
in a try/catch of InterruptedException is `wait(self)` (movers has no interrupts). The InOut threads keep
the paper's `while (true)`: the state space is finite anyway (the buffers' indices are bounded), and the
cycles it makes are what the DFS proviso C3 and the back-edge rule of (DA) are for.

An `if` instead of a `while` around either wait would be harmless in this driver: each buffer has one
taker and no add ever waits (2 objects, capacity 2), and `movers check` verifies that variant too.
dwyer_bounded_buffer_bug.py injects a bug that is not.

Scaling: BOUND (the buffers' bound; capacity BOUND - 1) and ITEMS (objects main adds first; more than
BOUND - 1 blocks main before it starts the InOut threads). benchmarks/dwyer.py rewrites the lines
`BOUND = 3` and `ITEMS = 2`: keep them.
"""

BOUND = 3
ITEMS = 2


class Item:
    pass


class BoundedBuffer:
    def __init__(self, b):
        self.bound = b
        self.buffer = [None] * self.bound
        self.head = 0
        self.tail = self.bound - 1

    @synchronized
    def add(self, o):
        while self.tail == self.head:
            wait(self)
        self.buffer[self.head] = o
        self.head = (self.head + 1) % self.bound
        notify_all(self)

    @synchronized
    def take(self):
        while self.head == (self.tail + 1) % self.bound:
            wait(self)
        self.tail = (self.tail + 1) % self.bound
        notify_all(self)
        return self.buffer[self.tail]


class InOut(Thread):
    def __init__(self, inp, out):
        super().__init__()
        self.inp = inp
        self.out = out

    def run(self):
        while True:
            tmp = self.inp.take()
            self.out.add(tmp)


def main():
    b1 = BoundedBuffer(BOUND)
    b2 = BoundedBuffer(BOUND)
    for k in range(ITEMS):
        b1.add(Item())
    t1 = InOut(b1, b2)
    t1.start()
    t2 = InOut(b2, b1)
    t2.start()


Thread(target=main).start()
