# Expected: violation (deadlock)
# Twin of queue_task_done_join.py whose worker forgets q.task_done(): q.join() never returns.
# CPython: may hang
import queue
import threading

q = queue.Queue()
results = []


def worker():
    while True:
        item = q.get()
        results.append(item * item)


for _ in range(2):
    threading.Thread(target=worker, daemon=True).start()
for item in range(2):
    q.put(item + 1)
q.join()
assert sorted(results) == [1, 4], results
