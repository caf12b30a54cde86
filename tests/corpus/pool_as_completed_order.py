# Expected: violation (assertion)
# Twin of pool_as_completed.py assuming as_completed yields futures in submission order.
from concurrent.futures import ThreadPoolExecutor, as_completed

SIZES = {"a.txt": 3, "b.txt": 5}


def load(name):
    return SIZES[name] * 10


def main():
    order = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        future_to_name = {pool.submit(load, name): name for name in SIZES}
        for future in as_completed(future_to_name):
            order.append(future_to_name[future])
    assert order == ["a.txt", "b.txt"], order


if __name__ == "__main__":
    main()
