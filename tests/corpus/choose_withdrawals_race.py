# Expected: violation (assertion)
# Twin of choose_withdrawals.py without the lock, in movers.lang style (its Thread): two chosen amounts
# both pass the balance check.
from movers.lang import *

balance = 100


def withdraw():
    global balance
    amount = choose(30, 60, 90)
    if balance >= amount:
        balance -= amount


t1 = Thread(target=withdraw)
t2 = Thread(target=withdraw)
t1.start()
t2.start()
t1.join()
t2.join()
assert balance >= 0, f"overdrawn: {balance}"
