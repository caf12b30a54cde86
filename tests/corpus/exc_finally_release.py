# Expected: ok
# acquire() then try/finally release(): an update that raises ValueError still releases the lock, and the
# caller catches the error.
import threading

table = {}
table_lock = threading.Lock()
errors = []


def update(key, value):
    table_lock.acquire()
    try:
        if value < 0:
            raise ValueError(f"negative value for {key}")
        table[key] = value
    finally:
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
