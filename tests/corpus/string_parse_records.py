# Expected: ok
# Two threads parse "user:action" records (strip, split, upper) into per-user event lists under a lock.
import threading

events = {}
events_lock = threading.Lock()


def parse(records):
    for record in records:
        user, action = record.strip().split(":")
        with events_lock:
            events.setdefault(user, []).append(action.upper())


def main():
    t1 = threading.Thread(target=parse, args=([" ann:login ", "bob:login"],))
    t2 = threading.Thread(target=parse, args=(["ann:logout"],))
    t1.start()
    t2.start()
    t1.join()
    t2.join()
    assert sorted(events) == ["ann", "bob"]
    assert sorted(events["ann"]) == ["LOGIN", "LOGOUT"], events
    assert events["bob"] == ["LOGIN"]
    assert all(action.isupper() for actions in events.values() for action in actions)


if __name__ == "__main__":
    main()
