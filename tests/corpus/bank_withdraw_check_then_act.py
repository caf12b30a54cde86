# Expected: violation (assertion)
# Twin of bank_withdraw_locked.py without the lock: both threads pass the balance check (check-then-act).
import threading
from dataclasses import dataclass


@dataclass
class Account:
    owner: str
    balance: int = 0


outcomes = []


def withdraw(acct, amount):
    if acct.balance >= amount:
        acct.balance -= amount
        return True
    return False


def main():
    acct = Account("ann", 100)
    threads = [threading.Thread(target=lambda: outcomes.append(withdraw(acct, 80))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert acct.balance == 20, acct
    assert sorted(outcomes) == [False, True]


if __name__ == "__main__":
    main()
