# Expected: ok
# Two workers increment a shared counter under `with lock:`; main joins them and checks the total.
import threading

N = 2
counter = 0
lock = threading.Lock()


def worker():
    global counter
    for _ in range(N):
        with lock:
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
