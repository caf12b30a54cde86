# Expected: violation (runtime-error)
# Twin of exc_worker_caught.py without the try/except: ZeroDivisionError kills a worker, which Python only
# prints; its remaining items are never processed.
# Raises: ZeroDivisionError
import threading

ratios = []


def worker(items):
    for x in items:
        ratios.append(100 // x)


def main():
    threads = [threading.Thread(target=worker, args=(items,)) for items in ([5], [0, 50])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
