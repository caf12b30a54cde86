# Expected: ok
# A loader fills a config dict then sets an Event; a worker waits on the Event before reading the config.
import threading

config = {}
ready = threading.Event()
seen = []


def loader():
    config["url"] = "db://primary"
    ready.set()


def worker():
    ready.wait()
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
