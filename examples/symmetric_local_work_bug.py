# Source: movers' own (issue 27), the bug twin of symmetric_local_work.py: each worker reads the total under
#         the lock and writes it back under the lock again, so two workers can add to the same old total (a
#         lost update); the main thread's check fails. Found with --symmetry threads under every reduction
#         that claims it, with a trace that is a real run.
#         Plain Python: it runs as it is under python3.
# Expected: violation (assertion)
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
        t = total
    with m:
        total = t + s
        finished = finished + 1
        done.notify_all()


for k in range(4):
    threading.Thread(target=worker).start()
with done:
    while finished < 4:
        done.wait()
    assert total == 12
