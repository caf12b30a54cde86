# Expected: violation (deadlock)
# Twin of exc_finally_release.py without try/finally: the ValueError skips release(), the caller swallows
# it, and the next thread to take the lock waits for ever.
# CPython: may hang
import threading

table = {}
table_lock = threading.Lock()
errors = []


def update(key, value):
    table_lock.acquire()
    if value < 0:
        raise ValueError(f"negative value for {key}")
    table[key] = value
    table_lock.release()


def worker(key, value):
    try:
        update(key, value)
    except ValueError as e:
        errors.append(str(e))


def main():
    threads = [threading.Thread(target=worker, args=("a", -1)), threading.Thread(target=worker, args=("b", 2))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with table_lock:
        assert table == {"b": 2}, table
    assert errors == ["negative value for a"], errors


if __name__ == "__main__":
    main()
