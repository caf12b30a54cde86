# Expected: violation (deadlock)
# Twin of cond_wait_for.py calling `cv.wait()` without checking for items first: a notify sent before a
# consumer waits is lost, and that consumer waits for ever (a lost wakeup).
# CPython: may hang
import threading

items = []
cv = threading.Condition()
got = []


def consumer():
    with cv:
        cv.wait()
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
