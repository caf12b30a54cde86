# Source: the lost update, the textbook data race; it is what Flanagan & Qadeer's counter
#         (papers/004, section 2; fq_counter.py) prevents with the lock mx. Two workers increment count
#         by a read and a separate write, without a lock; the main thread joins both and asserts that
#         both increments took effect. Plain Python: it runs as it is under python3.
# Expected: violation (assertion)
# Smoke test: yes (CPython almost always runs one lucky schedule: exit status 0 or an AssertionError)
import threading

count = 0


def worker():
    global count
    tmp = count
    count = tmp + 1


t0 = threading.Thread(target=worker)
t1 = threading.Thread(target=worker)
t0.start()
t1.start()
t0.join()
t1.join()
assert count == 2, "lost update"
