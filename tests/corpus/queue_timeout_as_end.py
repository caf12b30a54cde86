# Expected: violation (assertion)
# The consumer treats `q.get(timeout=...)` raising queue.Empty as the end of input: a slow producer's
# items are never received.
import queue
import threading
import time

q = queue.Queue()
received = []


def producer():
    for item in range(2):
        time.sleep(0.01)
        q.put(item)


def consumer():
    while len(received) < 2:
        try:
            item = q.get(timeout=1.0)
        except queue.Empty:
            return
        received.append(item)


def main():
    threads = [threading.Thread(target=producer), threading.Thread(target=consumer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert received == [0, 1], received


if __name__ == "__main__":
    main()
