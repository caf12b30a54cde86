# Source: Dwyer, Hatcliff, Robby, Ranganath, "Exploiting Object Escape and Locking Information in
#         Partial-Order Reductions for Concurrent Object-Oriented Programs" (FMSD 2004; papers/002),
#         section 8, Tables 1-2 row "Readers Writers"; the pattern is Lea's specific notification
#         (Concurrent Programming in Java, 2nd ed., 2000, section 3.7.3)
# Expected: ok
# Smoke test: yes
from movers.lang import *
"""Readers-Writers with specific notification (Dwyer et al., section 8; Tables 1 and 2).

Rebuilt from the text of section 8, which gives no code: a readers/writer lock in Lea's style, where "the
basic monitor relationships between objects and locks are established dynamically through heap
references using the specific notification pattern". RWLock is a self-locking manager: a request that
cannot be granted at once gets a Ticket, a monitor object of its own, queued in the manager's array, and
the requesting thread waits on its Ticket (not on the manager, whose lock it does not hold then); a
release grants queued Tickets in FIFO order (a writer alone, or a run of readers) and notifies each one
specifically. The Ticket's `granted` flag makes the pattern race-free: a grant that comes before the
wait is not lost. Readers assert that they never see a write in progress (the Data's two fields differ
only inside a write).

Differences from the paper: `main` is a thread of its own; each reader and writer makes one request
(the paper's threads loop forever); Lea's java.util queue is a fixed array of QUEUE slots (a ring).

Scaling: READERS and WRITERS. The paper's 5 threads are main with, we assume, 2 readers and 2 writers
(READERS = 2, WRITERS = 2): about 600,000 states, 20 to 60 s with `--reduction none` here, so the
default is 1 writer (4 threads, about 20,000 states), and benchmarks/dwyer.py also runs the paper's size.
It rewrites the lines `READERS = 2` and `WRITERS = 1`: keep them.
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
        while not self.granted:
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
