# Expected: violation (assertion)
# Twin of barrier_two_phases.py without the barrier: a worker may read the other's part before it is written.
import threading

parts = [None, None]
seen = [None, None]


def worker(i):
    parts[i] = f"part{i}"
    seen[i] = parts[1 - i]


def main():
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == ["part1", "part0"], seen


if __name__ == "__main__":
    main()
