# Expected: ok
# A reporter sums the sessions while a login adds one: both hold the lock, the reporter iterates a copy.
import threading

sessions = {"ann": 1}
sessions_lock = threading.Lock()
totals = []


def report():
    with sessions_lock:
        snapshot = dict(sessions)
    total = 0
    for user, count in snapshot.items():
        total += count
    totals.append(total)


def login(user):
    with sessions_lock:
        sessions[user] = 2


threads = [threading.Thread(target=report), threading.Thread(target=login, args=("bob",))]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert totals[0] in (1, 3), totals
assert sessions == {"ann": 1, "bob": 2}
