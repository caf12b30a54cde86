# Source: Dwyer, Hatcliff, Robby, Ranganath, "Exploiting Object Escape and Locking Information in
#         Partial-Order Reductions for Concurrent Object-Oriented Programs" (FMSD 2004; papers/002),
#         section 2.1 and Figure 2(a), Table 1 row "Independent Work 1"
# Expected: ok
# Smoke test: yes
from movers.lang import *
"""Independent Work, version 1 (Dwyer et al., Figure 2(a); Table 1).

The figure's code is not in our copy of the paper; this is rebuilt from the text of sections 2.1 and 8:
the main thread creates the Process threads; each Process builds a linked list of Nodes in its run()
method and then traverses it, incrementing each node's x field. Every list is thread-local at every
state, so the whole run() is a sequence of thread-local steps: the paper's (DA) stores 2 states (the
initial and the final one) at any number of threads and any list length.

Differences from the paper: `main` is a thread of its own (the paper's three threads are main and two
Processes); it starts each Process from a helper whose frame dies in the start step, so that no dead
reference to the Process lingers in main's frame (Bogor gets the same effect from a dead-variable
analysis, the paper's footnote 2). The traversal asserts that each node was incremented once, so that
the bug twin (dwyer_independent_work1_bug.py) has a property to break. The loops are bounded by LENGTH.

Scaling: THREADS Process threads (the paper: 2, i.e. 3 threads with main), LENGTH nodes per list (the
paper's 22 objects suggest lists of about 9). benchmarks/dwyer.py rewrites the lines `THREADS = 2` and
`LENGTH = 3`: keep them.
"""

THREADS = 2
LENGTH = 3


class Node:
    def __init__(self):
        self.x = 0
        self.next = None


class Process(Thread):
    def run(self):
        head = None
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
