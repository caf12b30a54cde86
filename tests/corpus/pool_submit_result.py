# Expected: ok
# ThreadPoolExecutor as a context manager: submit() two tasks, collect their result()s in order.
from concurrent.futures import ThreadPoolExecutor


def square(x):
    return x * x


def main():
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(square, n) for n in (2, 3)]
        results = [f.result() for f in futures]
    assert results == [4, 9], results
    assert all(f.done() for f in futures)


if __name__ == "__main__":
    main()
