# Source: dwyer_independent_work2.py (Dwyer et al., FMSD 2004, Figure 2(b)) with a bug injected
# Expected: violation (assertion)
# Smoke test: yes (under CPython the assertion fails only when a Process starts traversing after main
#             has built the next list)
from movers.lang import *
"""Independent Work 2 with a bug injected: run() traverses the list most recently built, kept in a
global (Java: a static field `Process.last` that the constructor sets), instead of its own `self.head`.

When a Process starts its traversal after main has built the next Process's list, two Processes traverse
the same list and the assertion `p.x == 1` fails (violation kind: assertion). The failure needs that
interleaving: a Process that runs to its end before main builds the next list is correct. The lists
escape through the global, so the escape-based reductions must interleave; every reduction must report
the same kind as `--reduction none`.
"""

THREADS = 2
LENGTH = 3


class Node:
    def __init__(self):
        self.x = 0
        self.next = None


last = None


class Process(Thread):
    def __init__(self, n):
        global last
        super().__init__()
        self.head = None
        i = 0
        while i < n:
            node = Node()
            node.next = self.head
            self.head = node
            i += 1
        last = self.head

    def run(self):
        p = last
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
