# Expected: ok
# Thread(target=, args=, kwargs=, name=): each greeter logs its thread's name from current_thread().
import threading

log = []


def greet(person, greeting="hello"):
    log.append(f"{threading.current_thread().name}: {greeting} {person}")


def main():
    threads = [
        threading.Thread(target=greet, args=("ann",), kwargs={"greeting": "hi"}, name="greeter-1"),
        threading.Thread(target=greet, args=("bob",), name="greeter-2"),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(log) == ["greeter-1: hi ann", "greeter-2: hello bob"], log


if __name__ == "__main__":
    main()
