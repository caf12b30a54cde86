# Expected: violation (assertion)
# Twin of cache_locked.py without the lock: both threads see the miss (`if key not in cache`) and compute.
import threading

cache = {}
computed = []


def expensive(key):
    computed.append(key)
    return key.upper()


def get(key):
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
