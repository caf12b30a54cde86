# Expected: violation (runtime-error)
# Twin of lock_nonblocking.py ignoring what `acquire(blocking=False)` returns: two threads flush at once,
# and one pops an empty buffer (IndexError) or releases a lock that is no longer held (RuntimeError).
# Raises: IndexError RuntimeError
import threading

flushing = threading.Lock()
buffer = ["a", "b"]
flushed = []


def flush():
    flushing.acquire(blocking=False)
    try:
        while buffer:
            flushed.append(buffer.pop(0))
    finally:
        flushing.release()


def main():
    threads = [threading.Thread(target=flush) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert flushed == ["a", "b"], flushed
    assert not flushing.locked()


if __name__ == "__main__":
    main()
