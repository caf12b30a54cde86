# Source: dwyer_readers_writers.py (Dwyer et al., FMSD 2004, section 8; Lea's specific notification)
#         with a bug injected
# Expected: violation (deadlock)
# Smoke test: no (a thread may wait forever under CPython too)
from movers.lang import *
"""Readers-Writers with a bug injected: Ticket.await_grant waits without looking at its condition
(`wait(self)` where the model has `while not self.granted: wait(self)`).

Specific notification is race-free only because of that check: a thread that got a Ticket waits on it
after leaving the manager's monitor, so another thread's release may grant the Ticket, and notify it,
before the wait. Without the check, that notify finds no waiter and is lost, and the thread waits
forever: violation kind deadlock. It needs that interleaving: a grant that comes after the wait wakes
the thread. The manager's data stay under its lock, so the deadlock is the only violation. Every
reduction must report the same kind as `--reduction none`.
"""

READERS = 2
WRITERS = 1
QUEUE = READERS + WRITERS


class Ticket:
    def __init__(self, write):
        self.write = write
        self.granted = False

    @synchronized
    def await_grant(self):
        wait(self)

    @synchronized
    def grant(self):
        self.granted = True
        notify(self)


class RWLock:
    def __init__(self):
        self.readers = 0
        self.writing = False
        self.queue = [None] * QUEUE
        self.first = 0
        self.size = 0

    @synchronized
    def request(self, write):
        if self.size == 0 and not self.writing and (self.readers == 0 or not write):
            if write:
                self.writing = True
            else:
                self.readers += 1
            return None
        t = Ticket(write)
        self.queue[(self.first + self.size) % QUEUE] = t
        self.size += 1
        return t

    @synchronized
    def finish(self, write):
        if write:
            self.writing = False
        else:
            self.readers -= 1
        while self.size > 0 and not self.writing:
            t = self.queue[self.first]
            if t.write and self.readers > 0:
                return
            self.queue[self.first] = None
            self.first = (self.first + 1) % QUEUE
            self.size -= 1
            if t.write:
                self.writing = True
            else:
                self.readers += 1
            t.grant()


class Data:
    def __init__(self):
        self.a = 0
        self.b = 0


def reader(rw, data):
    t = rw.request(False)
    if t is not None:
        t.await_grant()
    assert data.a == data.b, "a reader saw a write in progress"
    rw.finish(False)


def writer(rw, data):
    t = rw.request(True)
    if t is not None:
        t.await_grant()
    data.a += 1
    data.b += 1
    rw.finish(True)


def main():
    rw = RWLock()
    data = Data()
    for k in range(READERS):
        Thread(target=reader, args=(rw, data)).start()
    for k in range(WRITERS):
        Thread(target=writer, args=(rw, data)).start()


Thread(target=main).start()
