# Expected: ok
# Two workers each write their part, meet at a Barrier, then read the other's part.
import threading

barrier = threading.Barrier(2)
parts = [None, None]
seen = [None, None]


def worker(i):
    parts[i] = f"part{i}"
    barrier.wait()
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
