# Expected: violation (assertion)
# Twin of sem_connection_pool.py creating the semaphore inside the function: each thread has its own, so
# nothing limits the peak.
import threading
import time

MAX_CONNECTIONS = 2
stats_lock = threading.Lock()
active = 0
peak = 0


def use_connection():
    global active, peak
    pool = threading.BoundedSemaphore(MAX_CONNECTIONS)
    with pool:
        with stats_lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.001)
        with stats_lock:
            active -= 1


def main():
    threads = [threading.Thread(target=use_connection) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert active == 0
    assert 1 <= peak <= MAX_CONNECTIONS, f"peak {peak}"


if __name__ == "__main__":
    main()
