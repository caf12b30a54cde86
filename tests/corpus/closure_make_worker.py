# Expected: ok
# A factory returns nested functions closing over a dict, a lock and a key; a lambda is a thread target too.
import threading


def make_worker(counts, lock, key):
    def work():
        with lock:
            counts[key] = counts.get(key, 0) + 1

    return work


def main():
    counts = {}
    lock = threading.Lock()
    threads = [threading.Thread(target=make_worker(counts, lock, key)) for key in ("x", "y")]
    threads.append(threading.Thread(target=lambda: make_worker(counts, lock, "x")()))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counts == {"x": 2, "y": 1}, counts


if __name__ == "__main__":
    main()
