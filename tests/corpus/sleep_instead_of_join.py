# Expected: violation (assertion)
# Twin of subclass_run.py that sleeps instead of joining: time.sleep orders nothing, the results may be unset.
import threading
import time


class Summer(threading.Thread):
    def __init__(self, numbers):
        super().__init__(name=f"summer-{len(numbers)}")
        self.numbers = numbers
        self.result = None

    def run(self):
        total = 0
        for n in self.numbers:
            total += n
            time.sleep(0.001)
        self.result = total


def main():
    workers = [Summer([1, 2]), Summer([3])]
    for w in workers:
        w.start()
    time.sleep(0.5)
    assert [w.result for w in workers] == [3, 3]


if __name__ == "__main__":
    main()
