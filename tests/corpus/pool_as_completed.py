# Expected: ok
# The executor documentation's pattern: a dict from future to name, results gathered with as_completed.
from concurrent.futures import ThreadPoolExecutor, as_completed

SIZES = {"a.txt": 3, "b.txt": 5}


def load(name):
    return SIZES[name] * 10


def main():
    results = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        future_to_name = {pool.submit(load, name): name for name in SIZES}
        for future in as_completed(future_to_name):
            results[future_to_name[future]] = future.result()
    assert results == {"a.txt": 30, "b.txt": 50}, results


if __name__ == "__main__":
    main()
