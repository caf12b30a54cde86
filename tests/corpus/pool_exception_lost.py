# Expected: violation (assertion)
# Twin of pool_exception_result.py that never calls result(): the task's ValueError is silently kept in
# its future and the record is never saved.
from concurrent.futures import ThreadPoolExecutor

saved = []


def save(record):
    if record < 0:
        raise ValueError(f"bad record: {record}")
    saved.append(record * 2)


def main():
    with ThreadPoolExecutor(max_workers=2) as pool:
        for r in (4, -1):
            pool.submit(save, r)
    assert len(saved) == 2, f"saved {saved}"


if __name__ == "__main__":
    main()
