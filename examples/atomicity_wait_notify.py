# Source: movers (issue 9): a small model with an obvious answer
# Expected: ok
# Atomicity: violation (atomicity)
# Smoke test: yes
from movers.lang import *
"""A block with a wait: the consumer's block waits for the producer's item. Run alone (serially, on the
shadow store) it would wait for ever if it committed before the item is there, and more to the point the
block gives up the monitor in the middle: the producer's update comes in between the consumer's two reads
of `count`. Not atomic, and commit-atomicity says why."""

count = 0
seen = 0
c = Condition()


def producer():
    global count
    with c:
        count = count + 1
        c.notify()


def consumer():
    global seen
    with atomic():
        with c:
            before = count
            while count == 0:
                c.wait()
            seen = count - before


Thread(target=producer).start()
Thread(target=consumer).start()
