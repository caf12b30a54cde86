# Expected: ok
# Two threads count the words of their texts into a shared defaultdict(int) under a lock.
import threading
from collections import defaultdict

counts = defaultdict(int)
counts_lock = threading.Lock()


def count_words(text):
    for word in text.split():
        with counts_lock:
            counts[word] += 1


def main():
    threads = [threading.Thread(target=count_words, args=(text,)) for text in ("to be", "be")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert dict(counts) == {"to": 1, "be": 2}, dict(counts)


if __name__ == "__main__":
    main()
