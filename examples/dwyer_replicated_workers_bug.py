# Source: dwyer_replicated_workers.py (Dwyer et al., FMSD 2004, section 8; Dwyer and Wallentine 1997)
#         with a bug injected
# Expected: violation (deadlock)
# Smoke test: no (a thread may wait forever under CPython too)
from movers.lang import *
"""Replicated Workers with a bug injected: the worker that detects termination wakes the waiting
threads with `notify` where `notify_all` is needed.

Both main (in await_done) and the other worker (in take) may be waiting on the Coordinator when the
last worker finds the pool empty and sets `done`; `notify` wakes only one of them, and the other waits
forever: violation kind deadlock (main waits for that worker in join, or for a notify itself). It needs
that interleaving: when the other worker is not waiting at that moment it sees `done` by itself.
Every reduction must report the same kind as `--reduction none`.
"""

WORKERS = 2
ITEMS = 1
DEPTH = 1
TOTAL = ITEMS * (2 ** (DEPTH + 1) - 1)


class Vector:
    def __init__(self, capacity):
        self.data = [None] * capacity
        self.count = 0

    @synchronized
    def add(self, o):
        self.data[self.count] = o
        self.count += 1

    @synchronized
    def size(self):
        return self.count

    @synchronized
    def element_at(self, i):
        return self.data[i]


class Pool:
    def __init__(self, capacity):
        self.data = [None] * capacity
        self.count = 0

    def add(self, o):
        self.data[self.count] = o
        self.count += 1

    def take(self):
        self.count -= 1
        return self.data[self.count]


class Coordinator:
    def __init__(self, workers):
        self.pool = Pool(TOTAL)
        self.workers = workers
        self.blocked = 0
        self.done = False

    @synchronized
    def take(self):
        self.blocked += 1
        while self.pool.count == 0 and not self.done:
            if self.blocked == self.workers:
                self.done = True
                notify(self)
            else:
                wait(self)
        self.blocked -= 1
        if self.done:
            return None
        w = self.pool.take()
        return w

    @synchronized
    def await_done(self):
        while not self.done:
            wait(self)

    @synchronized
    def put(self, v):
        k = v.size()
        for i in range(k):
            w = v.element_at(i)
            self.pool.add(w)
        if k > 0:
            notify_all(self)


class Worker(Thread):
    def __init__(self, coord, results):
        super().__init__()
        self.coord = coord
        self.results = results

    def run(self):
        mine = Vector(TOTAL)
        w = self.coord.take()
        while w is not None:
            new = Vector(2)
            if w > 0:
                new.add(w - 1)
                new.add(w - 1)
            mine.add(w)
            self.coord.put(new)
            w = self.coord.take()
        self.results.add(mine)


def main():
    coord = Coordinator(WORKERS)
    results = Vector(WORKERS)
    first = Vector(ITEMS)
    for k in range(ITEMS):
        first.add(DEPTH)
    coord.put(first)
    workers = [None] * WORKERS
    for k in range(WORKERS):
        workers[k] = Worker(coord, results)
        workers[k].start()
    coord.await_done()
    for k in range(WORKERS):
        workers[k].join()
    done = 0
    for k in range(WORKERS):
        mine = results.element_at(k)
        n = mine.size()
        done += n
    assert done == TOTAL, "a work item was lost or done twice"


Thread(target=main).start()
