# Expected: ok
# A task raises ValueError; future.result() re-raises it in main, which catches it and records the message.
from concurrent.futures import ThreadPoolExecutor


def parse(record):
    if record < 0:
        raise ValueError(f"bad record: {record}")
    return record * 2


def main():
    values, errors = [], []
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(parse, r) for r in (4, -1)]
        for f in futures:
            try:
                values.append(f.result())
            except ValueError as e:
                errors.append(str(e))
    assert values == [8], values
    assert errors == ["bad record: -1"], errors
    assert isinstance(futures[1].exception(), ValueError)


if __name__ == "__main__":
    main()
