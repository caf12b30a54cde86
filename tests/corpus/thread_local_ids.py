# Expected: ok
# threading.local() keeps a per-thread request id: each thread reads back its own value after the others ran.
import threading
import time

context = threading.local()
mismatches = []


def handle(request_id):
    context.request_id = request_id
    time.sleep(0.001)
    if context.request_id != request_id:
        mismatches.append(request_id)


def main():
    threads = [threading.Thread(target=handle, args=(rid,)) for rid in ("r1", "r2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mismatches == [], mismatches


if __name__ == "__main__":
    main()
