# Source: the bank transfer, the textbook lock-ordering example (Goetz et al., "Java Concurrency in Practice",
#         section 10.1.2, written as Python developers write it: a dataclass account with its own lock,
#         threading.Thread workers, the main thread joining and checking). Transfers take the two accounts'
#         locks in a global order (by account id), so two opposite transfers cannot deadlock, and money is
#         conserved. Plain Python: it runs as it is under python3.
# Expected: ok
# Smoke test: yes
import threading
from dataclasses import dataclass, field


@dataclass
class Account:
    id: int
    balance: int
    lock: threading.Lock = field(default_factory=threading.Lock)


def transfer(src, dst, amount):
    first, second = (src, dst) if src.id < dst.id else (dst, src)
    with first.lock:
        with second.lock:
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
