# Expected: violation (runtime-error)
# Twin of event_config_ready.py ignoring what `ready.wait(timeout=...)` returns: after a timeout the
# worker reads a config that is not there yet (KeyError).
# Raises: KeyError
import threading

config = {}
ready = threading.Event()
seen = []


def loader():
    config["url"] = "db://primary"
    ready.set()


def worker():
    ready.wait(timeout=1.0)
    seen.append(config["url"])


def main():
    threads = [threading.Thread(target=worker), threading.Thread(target=loader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == ["db://primary"], seen


if __name__ == "__main__":
    main()
