# Expected: ok
# Two threads cancel the same pending job with `pending.pop(job, None)`: exactly one of them wins.
import threading

pending = {"job1": "queued", "job2": "queued"}
cancelled_by = []


def cancel(job, who):
    if pending.pop(job, None) is not None:
        cancelled_by.append(who)


def main():
    threads = [threading.Thread(target=cancel, args=("job1", name)) for name in ("ann", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert pending == {"job2": "queued"}
    assert len(cancelled_by) == 1, cancelled_by


if __name__ == "__main__":
    main()
