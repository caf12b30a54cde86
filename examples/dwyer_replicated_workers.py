# Source: Dwyer, Hatcliff, Robby, Ranganath, "Exploiting Object Escape and Locking Information in
#         Partial-Order Reductions for Concurrent Object-Oriented Programs" (FMSD 2004; papers/002),
#         section 8, Tables 1-2 row "Replicated Workers"; the framework is Dwyer and Wallentine's
#         (Concurrency: Practice and Experience 9(11), 1997)
# Expected: ok
# Smoke test: yes
from movers.lang import *
"""Replicated Workers (Dwyer et al., section 8; Tables 1 and 2), a small version of the framework.

Rebuilt from the text of section 8 and the framework's published structure (the paper gives no code):
a main thread, a Coordinator and a pool of Worker threads. The Coordinator is a self-locking object
that owns the work pool (an unsynchronized Pool, protected by the Coordinator's lock: every access
path to it goes through the Coordinator) and detects termination: the computation is over when every
worker is blocked asking for work and the pool is empty. Each Worker repeatedly takes a work item,
computes it into Vectors of its own (new work and results: thread-local objects, as the paper's
"several local vector instances"), and puts the new work back; at the end it hands its result Vector
to a shared, synchronized results Vector. main puts the initial work, waits on the Coordinator for
termination, joins the workers and asserts that every work item was done exactly once. Work item n > 0
produces two items n - 1, so ITEMS items of depth DEPTH make ITEMS * (2 ** (DEPTH + 1) - 1) items.

Differences from the paper: movers has no java.util, so Vector is a small class of our own (fixed
capacity, synchronized methods; an index loop over `element_at` plays the Enumeration); work items are
ints; the framework's barrier between main and the workers is a join; the run is bounded by the work.

Scaling: WORKERS, ITEMS, DEPTH. The paper's 4 threads are main and 3 workers: WORKERS = 3 with ITEMS = 2,
DEPTH = 0 is about 170,000 states and 20 s with `--reduction none` here (WORKERS = 3, ITEMS = 1,
DEPTH = 1 about 580,000 states and a minute), so the default is 2 workers (3 threads, about 27,000
states), and benchmarks/dwyer.py also runs 3 workers. It rewrites the lines `WORKERS = 2`, `ITEMS = 1`
and `DEPTH = 1`: keep them.
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
                notify_all(self)
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
