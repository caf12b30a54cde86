# Expected: ok
# The queue documentation's pattern: daemon workers loop on q.get() / q.task_done(); main q.join()s.
import queue
import threading

q = queue.Queue()
results = []


def worker():
    while True:
        item = q.get()
        results.append(item * item)
        q.task_done()


for _ in range(2):
    threading.Thread(target=worker, daemon=True).start()
for item in range(2):
    q.put(item + 1)
q.join()
assert sorted(results) == [1, 4], results
