# Source: Dwyer, Hatcliff, Robby, Ranganath, "Exploiting Object Escape and Locking Information in
#         Partial-Order Reductions for Concurrent Object-Oriented Programs" (FMSD 2004; papers/002),
#         section 2.1 and Figure 2(b), Table 1 row "Independent Work 2"
# Expected: ok
# Smoke test: yes
from movers.lang import *
"""Independent Work, version 2 (Dwyer et al., Figure 2(b); Table 1).

Rebuilt from the text of sections 2.1 and 8 (the figure's code is not in our copy of the paper): as
version 1 (dwyer_independent_work1.py), except that each list is built by the Process's constructor,
which the main thread runs, and traversed by the Process's run(). A static escape analysis sees the list
handled by two threads and gets no reduction (the paper's (S) column equals (B)); a dynamic one sees
that no state has the list reachable by two threads at once: main reaches it only while it runs the
constructor, the Process only once it has been started. (DA) stores 2 states.

Differences from the paper: `main` is a thread of its own; it starts each Process from a helper whose
frame dies in the start step (Bogor's dead-variable analysis, footnote 2, has the same effect: otherwise
main's local would keep the list reachable from main). The traversal asserts that each node was
incremented once. The loops are bounded by LENGTH.

Scaling: THREADS Process threads (the paper: 2, i.e. 3 threads with main), LENGTH nodes per list.
benchmarks/dwyer.py rewrites the lines `THREADS = 2` and `LENGTH = 3`: keep them.
"""

THREADS = 2
LENGTH = 3


class Node:
    def __init__(self):
        self.x = 0
        self.next = None


class Process(Thread):
    def __init__(self, n):
        super().__init__()
        self.head = None
        i = 0
        while i < n:
            node = Node()
            node.next = self.head
            self.head = node
            i += 1

    def run(self):
        p = self.head
        while p is not None:
            p.x = p.x + 1
            assert p.x == 1, "a node of this thread's list was incremented twice"
            p = p.next


def spawn():
    p = Process(LENGTH)
    p.start()


def main():
    for k in range(THREADS):
        spawn()


Thread(target=main).start()
