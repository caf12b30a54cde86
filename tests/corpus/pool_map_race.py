# Expected: violation (assertion)
# Twin of pool_map_locked.py without the lock: two pool workers lose a deposit.
from concurrent.futures import ThreadPoolExecutor

balance = 0


def deposit(amount):
    global balance
    balance += amount
    return balance


def main():
    with ThreadPoolExecutor(max_workers=2) as pool:
        seen = list(pool.map(deposit, [10, 20]))
    assert balance == 30, balance
    assert sorted(seen) in ([10, 30], [20, 30]), seen


if __name__ == "__main__":
    main()
