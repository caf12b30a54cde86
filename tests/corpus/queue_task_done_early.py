# Expected: violation (assertion)
# Twin of queue_task_done_join.py calling task_done() before the work: q.join() returns too early.
import queue
import threading

q = queue.Queue()
results = []


def worker():
    while True:
        item = q.get()
        q.task_done()
        results.append(item * item)


for _ in range(2):
    threading.Thread(target=worker, daemon=True).start()
for item in range(2):
    q.put(item + 1)
q.join()
assert sorted(results) == [1, 4], results
