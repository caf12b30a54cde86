# Expected: violation (runtime-error)
# Twin of lock_acquire_timeout.py ignoring acquire's result: a worker that timed out releases an RLock it
# does not hold (RuntimeError: cannot release un-acquired lock).
# Raises: RuntimeError
import threading
import time

lock = threading.RLock()
done = []


def worker(name):
    lock.acquire(timeout=0.5)
    try:
        done.append(name)
        time.sleep(0.001)
    finally:
        lock.release()


def main():
    threads = [threading.Thread(target=worker, args=(name,)) for name in ("ann", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(done) == ["ann", "bob"]


if __name__ == "__main__":
    main()
