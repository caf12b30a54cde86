# Expected: ok
# A try-lock: `acquire(blocking=False)` lets a thread skip a flush another thread is already doing.
import threading

flushing = threading.Lock()
buffer = ["a", "b"]
flushed = []


def flush():
    if not flushing.acquire(blocking=False):
        return
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
