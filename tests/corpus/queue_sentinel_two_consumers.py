# Expected: violation (deadlock)
# Twin of queue_sentinel.py with two consumers but one sentinel: the second consumer waits for ever.
# CPython: may hang
import queue
import threading

q = queue.Queue(maxsize=1)
received = []


def producer():
    for item in range(1, 3):
        q.put(item)
    q.put(None)


def consumer():
    while True:
        item = q.get()
        if item is None:
            break
        received.append(item)


def main():
    threads = [threading.Thread(target=producer)] + [threading.Thread(target=consumer) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(received) == [1, 2], received


if __name__ == "__main__":
    main()
