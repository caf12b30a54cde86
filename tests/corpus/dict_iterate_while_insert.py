# Expected: violation (runtime-error)
# Twin of dict_iterate_snapshot.py iterating the live dict: a concurrent insert raises RuntimeError
# (dictionary changed size during iteration) in the reporter.
# Raises: RuntimeError
import threading

sessions = {"ann": 1}
totals = []


def report():
    total = 0
    for user in sessions:
        total += sessions[user]
    totals.append(total)


def login(user):
    sessions[user] = 2


threads = [threading.Thread(target=report), threading.Thread(target=login, args=("bob",))]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert sessions == {"ann": 1, "bob": 2}
