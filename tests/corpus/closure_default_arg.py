# Expected: ok
# Twin of closure_late_binding.py binding the loop variable as a default argument (`lambda i=i: ...`).
import threading

results = []
threads = []
for i in range(2):
    t = threading.Thread(target=lambda i=i: results.append(i * 10))
    threads.append(t)
    t.start()
for t in threads:
    t.join()
assert sorted(results) == [0, 10], results
