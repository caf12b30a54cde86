# Expected: violation (assertion)
# Twin of pool_submit_result.py reading what the tasks append to a shared list right after submit(),
# inside the `with` block, before anything waited for them.
from concurrent.futures import ThreadPoolExecutor

results = []


def square(x):
    results.append(x * x)


def main():
    with ThreadPoolExecutor(max_workers=2) as pool:
        for n in (2, 3):
            pool.submit(square, n)
        assert sorted(results) == [4, 9], results


if __name__ == "__main__":
    main()
