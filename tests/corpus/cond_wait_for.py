# Expected: ok
# Two consumers take items from a list under a Condition with `cv.wait_for(lambda: items)`; the producer
# appends two items, notifying each time.
import threading

items = []
cv = threading.Condition()
got = []


def consumer():
    with cv:
        cv.wait_for(lambda: len(items) > 0)
        got.append(items.pop(0))


def producer():
    for x in range(2):
        with cv:
            items.append(x)
            cv.notify()


def main():
    threads = [threading.Thread(target=consumer) for _ in range(2)] + [threading.Thread(target=producer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == [0, 1], got


if __name__ == "__main__":
    main()
