# Expected: ok
# A producer puts 1..3 then a None sentinel into a bounded queue.Queue; the consumer sums until None.
import queue
import threading

q = queue.Queue(maxsize=1)
total = 0


def producer():
    for item in range(1, 4):
        q.put(item)
    q.put(None)


def consumer():
    global total
    while True:
        item = q.get()
        if item is None:
            break
        total += item


def main():
    threads = [threading.Thread(target=producer), threading.Thread(target=consumer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert total == 6, total


if __name__ == "__main__":
    main()
