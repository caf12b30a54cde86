# Expected: ok
# A memoising cache shared by two threads: the miss check and the fill run under one lock, so the
# expensive function runs once per key.
import threading

cache = {}
cache_lock = threading.Lock()
computed = []


def expensive(key):
    computed.append(key)
    return key.upper()


def get(key):
    with cache_lock:
        if key not in cache:
            cache[key] = expensive(key)
        return cache[key]


def main():
    results = []
    threads = [threading.Thread(target=lambda: results.append(get("alpha"))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["ALPHA", "ALPHA"]
    assert computed == ["alpha"], f"computed {computed}"


if __name__ == "__main__":
    main()
