# Expected: violation (assertion)
# Twin of counter_lock.py without the lock: `counter += 1` is a read then a write, so an update is lost.
import threading

N = 2
counter = 0


def worker():
    global counter
    for _ in range(N):
        counter += 1


def main():
    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter == 2 * N, f"expected {2 * N}, got {counter}"


if __name__ == "__main__":
    main()
