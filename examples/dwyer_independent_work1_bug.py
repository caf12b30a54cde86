# Source: dwyer_independent_work1.py (Dwyer et al., FMSD 2004, Figure 2(a)) with a bug injected
# Expected: violation (assertion)
# Smoke test: yes (the assertion fails under CPython too, unless the two threads happen to build their
#             lists at exactly the same time)
from movers.lang import *
"""Independent Work 1 with a bug injected: the list head is a global (Java: a static field of Process)
instead of a local of run().

Every Process now links its nodes in front of the same shared list and traverses it from the shared
head, so a Process increments nodes of the other Process's list too: the assertion `p.x == 1` fails
(violation kind: assertion). The list is no longer thread-local, so the escape-based reductions must
interleave the accesses to `head`; every reduction must report the same kind as `--reduction none`.
"""

THREADS = 2
LENGTH = 3


class Node:
    def __init__(self):
        self.x = 0
        self.next = None


head = None


class Process(Thread):
    def run(self):
        global head
        i = 0
        while i < LENGTH:
            node = Node()
            node.next = head
            head = node
            i += 1
        p = head
        while p is not None:
            p.x = p.x + 1
            assert p.x == 1, "a node of this thread's list was incremented twice"
            p = p.next


def spawn():
    p = Process()
    p.start()


def main():
    for k in range(THREADS):
        spawn()


Thread(target=main).start()
