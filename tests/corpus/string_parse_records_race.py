# Expected: violation (assertion)
# Twin of string_parse_records.py updating with `events[user] = events.get(user, []) + [...]` and no lock:
# two parsers of ann's records lose one of them.
import threading

events = {}


def parse(records):
    for record in records:
        user, action = record.strip().split(":")
        events[user] = events.get(user, []) + [action.upper()]


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
