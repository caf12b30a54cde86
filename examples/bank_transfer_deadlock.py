# Source: bank_transfer.py with the lock order removed: each transfer locks its source account first,
#         as the naive code does (Goetz et al., "Java Concurrency in Practice", section 10.1.2, the
#         dynamic lock-order deadlock). Two opposite transfers each hold one lock and wait for the other's.
# Expected: violation (deadlock)
# Smoke test: no (CPython may deadlock: each thread holds one lock and waits for the other's)
import threading
from dataclasses import dataclass, field


@dataclass
class Account:
    id: int
    balance: int
    lock: threading.Lock = field(default_factory=threading.Lock)


def transfer(src, dst, amount):
    with src.lock:
        with dst.lock:
            if src.balance >= amount:
                src.balance -= amount
                dst.balance += amount


a = Account(1, 100)
b = Account(2, 50)
t1 = threading.Thread(target=transfer, args=(a, b, 30))
t2 = threading.Thread(target=transfer, args=(b, a, 20))
t1.start()
t2.start()
t1.join()
t2.join()
assert a.balance + b.balance == 150, "money was created or lost"
assert (a.balance, b.balance) == (90, 60)
