# Expected: ok
# Workers append f-string log lines to a shared list; main sorts them and joins them into one report.
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
    report = "; ".join(sorted(log))
    assert report == "worker 0: done; worker 1: done", report


if __name__ == "__main__":
    main()
