# Expected: ok
# Twin of event_wait_timeout_ignored.py that checks the result of `ready.wait(timeout)`: both outcomes
# are handled.
import threading

config = {}
ready = threading.Event()
seen = []


def loader():
    config["url"] = "db://primary"
    ready.set()


def worker():
    if ready.wait(timeout=1.0):
        seen.append(config["url"])
    else:
        seen.append("timed out")


def main():
    threads = [threading.Thread(target=worker), threading.Thread(target=loader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen in (["db://primary"], ["timed out"]), seen
    assert ready.is_set()


if __name__ == "__main__":
    main()
