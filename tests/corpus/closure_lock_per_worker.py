# Expected: violation (assertion)
# Twin of closure_make_worker.py whose factory makes a new lock for each worker: the locks exclude nothing
# and an update of counts["x"] is lost.
import threading


def make_worker(counts, key):
    lock = threading.Lock()

    def work():
        with lock:
            counts[key] = counts.get(key, 0) + 1

    return work


def main():
    counts = {}
    threads = [threading.Thread(target=make_worker(counts, key)) for key in ("x", "y")]
    threads.append(threading.Thread(target=lambda: make_worker(counts, "x")()))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counts == {"x": 2, "y": 1}, counts


if __name__ == "__main__":
    main()
