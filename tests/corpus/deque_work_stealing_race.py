# Expected: violation (runtime-error)
# Twin of deque_work_stealing.py checking `while tasks:` before popping: with one task left both threads
# pass the check and the second pops an empty deque (check-then-act).
# Raises: IndexError
import threading
from collections import deque

tasks = deque([1, 2, 3])
results = []


def owner():
    while tasks:
        t = tasks.pop()
        results.append(t * 10)


def thief():
    while tasks:
        t = tasks.popleft()
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
