# Expected: violation (assertion)
# Twin of log_messages.py that expects the lines in start order: threads need not finish in that order.
import threading

log = []


def worker(i):
    log.append(f"worker {i}: done")


def main():
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report = "; ".join(log)
    assert report == "worker 0: done; worker 1: done", report


if __name__ == "__main__":
    main()
