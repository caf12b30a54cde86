# Expected: ok
# A threading.Thread subclass overrides run() and stores its result; main joins before reading it.
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
    for w in workers:
        w.join()
    assert [w.result for w in workers] == [3, 3]
    assert not any(w.is_alive() for w in workers)


if __name__ == "__main__":
    main()
