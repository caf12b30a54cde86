# Expected: violation (assertion)
# Twin of thread_local_ids.py keeping the request id on one shared object: another thread overwrites it.
import threading
import time


class Context:
    def __init__(self):
        self.request_id = None


context = Context()
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
