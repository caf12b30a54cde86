# Expected: violation (deadlock)
# Twin of bank_transfer_ordered.py locking the source first: two opposite transfers wait for each other.
# CPython: may hang
import threading
from dataclasses import dataclass, field


@dataclass
class Account:
    id: int
    balance: int
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)


def transfer(src, dst, amount):
    with src.lock:
        with dst.lock:
            if src.balance >= amount:
                src.balance -= amount
                dst.balance += amount


def main():
    a = Account(1, 100)
    b = Account(2, 100)
    t1 = threading.Thread(target=transfer, args=(a, b, 30))
    t2 = threading.Thread(target=transfer, args=(b, a, 50))
    t1.start()
    t2.start()
    t1.join()
    t2.join()
    assert a.balance + b.balance == 200, "money was created or destroyed"
    assert (a.balance, b.balance) == (120, 80)


if __name__ == "__main__":
    main()
