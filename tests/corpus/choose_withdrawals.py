# Expected: ok
# With movers' choose() and @invariant: two locked withdrawals of any of three amounts never overdraw.
import threading

from movers.lang import *

balance = 100
lock = threading.Lock()


@invariant
def never_overdrawn():
    return balance >= 0


def withdraw():
    global balance
    amount = choose(30, 60, 90)
    with lock:
        if balance >= amount:
            balance -= amount


threads = [threading.Thread(target=withdraw) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert 0 <= balance <= 100
