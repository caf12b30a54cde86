# Expected: ok
# Two withdrawals of 80 from an account holding 100: the balance check and the debit run under one lock.
import threading
from dataclasses import dataclass


@dataclass
class Account:
    owner: str
    balance: int = 0


account_lock = threading.Lock()
outcomes = []


def withdraw(acct, amount):
    with account_lock:
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
