# Expected: ok
# `lock.acquire(timeout=...)`: a worker that gets the lock does its work, one that times out records a skip.
import threading
import time

lock = threading.Lock()
done = []
skipped = []


def worker(name):
    if lock.acquire(timeout=0.5):
        try:
            done.append(name)
            time.sleep(0.001)
        finally:
            lock.release()
    else:
        skipped.append(name)


def main():
    threads = [threading.Thread(target=worker, args=(name,)) for name in ("ann", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(done + skipped) == ["ann", "bob"]


if __name__ == "__main__":
    main()
