# Expected: ok
# Workers compute 100 // x and catch ZeroDivisionError for a bad item, recording an error message.
import threading

ratios = []
errors = []


def worker(items):
    for x in items:
        try:
            ratios.append(100 // x)
        except ZeroDivisionError:
            errors.append(f"bad item {x}")


def main():
    threads = [threading.Thread(target=worker, args=(items,)) for items in ([5], [0, 50])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(ratios) == [2, 20], ratios
    assert errors == ["bad item 0"], errors


if __name__ == "__main__":
    main()
