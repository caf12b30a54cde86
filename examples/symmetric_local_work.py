# Source: movers' own (issue 27, symmetry under the ample-set reductions): four identical workers, each
#         builds a list of its own, sums it, and adds the sum to a shared total under one lock; the main
#         thread waits on a condition until all four are done and checks the total. The list work is
#         thread-local (dwyer-d takes it alone, Dwyer et al.'s (D)); the workers are interchangeable
#         (--symmetry threads folds their orders): together they store fewer states than either alone.
#         Plain Python: it runs as it is under python3.
# Expected: ok
# Smoke test: yes
import threading

m = threading.Lock()
done = threading.Condition(m)
total = 0
finished = 0


def worker():
    global total, finished
    items = []
    for i in range(2):
        items.append(i + 1)
    s = 0
    for v in items:
        s = s + v
    with m:
        total = total + s
        finished = finished + 1
        done.notify_all()


# The workers are started without keeping their Thread objects (a list of them would tell them apart).
for k in range(4):
    threading.Thread(target=worker).start()
with done:
    while finished < 4:
        done.wait()
    assert total == 12
