# Expected: ok
# pool.map over two deposits that update a shared balance under a lock; map returns results in order.
import threading
from concurrent.futures import ThreadPoolExecutor

balance = 0
balance_lock = threading.Lock()


def deposit(amount):
    global balance
    with balance_lock:
        balance += amount
        return balance


def main():
    with ThreadPoolExecutor(max_workers=2) as pool:
        seen = list(pool.map(deposit, [10, 20]))
    assert balance == 30, balance
    assert sorted(seen) in ([10, 30], [20, 30]), seen


if __name__ == "__main__":
    main()
