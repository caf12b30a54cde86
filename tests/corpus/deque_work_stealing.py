# Expected: ok
# Work stealing on a deque: the owner pops tasks from the right, a thief from the left, each ending on
# the IndexError of an empty deque; deque.pop and popleft are atomic, so every task runs once.
import threading
from collections import deque

tasks = deque([1, 2, 3])
results = []


def owner():
    while True:
        try:
            t = tasks.pop()
        except IndexError:
            return
        results.append(t * 10)


def thief():
    while True:
        try:
            t = tasks.popleft()
        except IndexError:
            return
        results.append(t * 10)


def main():
    a = threading.Thread(target=owner)
    b = threading.Thread(target=thief)
    a.start()
    b.start()
    a.join()
    b.join()
    assert sorted(results) == [10, 20, 30], results


if __name__ == "__main__":
    main()
