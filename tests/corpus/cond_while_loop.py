# Expected: ok
# The classic condition loop: `while not items: cv.wait()` re-checks after every wakeup (notify_all).
import threading

items = []
cv = threading.Condition()
got = []


def consumer():
    with cv:
        while not items:
            cv.wait()
        got.append(items.pop(0))


def producer():
    for x in range(2):
        with cv:
            items.append(x)
            cv.notify_all()


def main():
    threads = [threading.Thread(target=consumer) for _ in range(2)] + [threading.Thread(target=producer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == [0, 1], got


if __name__ == "__main__":
    main()
