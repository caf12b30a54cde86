# Expected: violation (runtime-error)
# Twin of dict_pop_default.py as `if job in pending: del pending[job]`: both threads pass the check and
# the second `del` raises KeyError.
# Raises: KeyError
import threading

pending = {"job1": "queued", "job2": "queued"}
cancelled_by = []


def cancel(job, who):
    if job in pending:
        del pending[job]
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
