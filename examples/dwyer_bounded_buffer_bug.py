# Source: dwyer_bounded_buffer.py (Dwyer et al., FMSD 2004, Figure 3) with a bug injected
# Expected: violation (runtime-error)
# Smoke test: no (under CPython both InOut threads die of the shim's RuntimeError, Java's
#             IllegalMonitorStateException: exit status 1)
from movers.lang import *
"""Bounded Buffer (Dwyer et al., Figure 3) with a bug injected: `take` has lost its `synchronized`.

Its `wait` and `notifyAll` then run without holding the buffer's monitor, which Java answers with an
IllegalMonitorStateException and movers with a violation of kind runtime-error ("... without holding the
object's monitor") at the first take. The fields `head` and `tail` are no longer accessed under the
buffer's lock either, so the buffer breaks the self-locking discipline that the locking reductions
(dwyer-wsl, dwyer-ld, ...) guess for it: they must refine or report, never miss the error. Every
reduction must report the same kind as `--reduction none`.
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
