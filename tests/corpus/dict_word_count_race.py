# Expected: violation (assertion)
# Twin of dict_word_count.py without the lock: `counts[word] += 1` reads then writes, so a count is lost.
import threading
from collections import defaultdict

counts = defaultdict(int)


def count_words(text):
    for word in text.split():
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
