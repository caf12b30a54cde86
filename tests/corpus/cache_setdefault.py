# Expected: ok
# Subscribers register under a topic with `d.setdefault(topic, []).append(name)`: setdefault is atomic.
import threading

subscribers = {}


def subscribe(topic, name):
    subscribers.setdefault(topic, []).append(name)


t1 = threading.Thread(target=subscribe, args=("news", "ann"))
t2 = threading.Thread(target=subscribe, args=("news", "bob"))
t1.start()
t2.start()
t1.join()
t2.join()
assert sorted(subscribers["news"]) == ["ann", "bob"], subscribers
