# Expected: ok
# Two workers drain a pre-filled queue with get_nowait() and stop on queue.Empty; the sum is exact.
import queue
import threading

jobs = queue.Queue()
for n in (1, 2, 3):
    jobs.put(n)
total = 0
total_lock = threading.Lock()


def worker():
    global total
    while True:
        try:
            n = jobs.get_nowait()
        except queue.Empty:
            return
        with total_lock:
            total += n


def main():
    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert total == 6, total
    assert jobs.empty()


if __name__ == "__main__":
    main()
