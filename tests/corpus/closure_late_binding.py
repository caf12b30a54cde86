# Expected: violation (assertion)
# Lambdas created in a loop read the loop variable when they run, not when they were made: a thread that
# starts late sees the last value.
import threading

results = []
threads = []
for i in range(2):
    t = threading.Thread(target=lambda: results.append(i * 10))
    threads.append(t)
    t.start()
for t in threads:
    t.join()
assert sorted(results) == [0, 10], results
