# Expected: violation (runtime-error)
# Twin of queue_drain_catch_empty.py checking `if not jobs.empty()` before get_nowait(): another worker
# takes the last job in between and get_nowait() raises queue.Empty, killing the worker.
# Raises: Empty
import queue
import threading

jobs = queue.Queue()
jobs.put(1)
done = []


def worker():
    if not jobs.empty():
        done.append(jobs.get_nowait())


def main():
    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert done == [1], done


if __name__ == "__main__":
    main()
