# Source: Dwyer, Hatcliff, Robby, Ranganath, "Exploiting Object Escape and Locking Information in
#         Partial-Order Reductions for Concurrent Object-Oriented Programs" (FMSD 2004), Figure 3
#         (papers/002): class BoundedBuffer, a self-locking (all methods synchronized) FIFO with
#         wait()/notifyAll(). The class is the paper's, method for method (add, take; head, tail and
#         bound as in the figure: BoundedBuffer(3) holds at most 2 items). The driver is simpler than the
#         paper's two InOut threads passing objects around a ring of two buffers: one producer adds
#         1..N, one consumer takes N items and asserts they come out in order.
# Expected: ok
# Smoke test: yes
from movers.lang import *


class BoundedBuffer:
    def __init__(self, b):
        self.bound = b
        self.buffer = [None] * b
        self.head = 0
        self.tail = b - 1

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


N = 4
buf = BoundedBuffer(3)


def producer():
    for k in range(N):
        buf.add(k + 1)


def consumer():
    for k in range(N):
        v = buf.take()
        assert v == k + 1, "items out of order"


Thread(target=producer).start()
Thread(target=consumer).start()
