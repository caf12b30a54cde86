# Expected: violation (assertion)
# Twin of cache_setdefault.py spelled as check-then-create: a second `subscribers[topic] = []` drops a name.
import threading

subscribers = {}


def subscribe(topic, name):
    if topic not in subscribers:
        subscribers[topic] = []
    subscribers[topic].append(name)


t1 = threading.Thread(target=subscribe, args=("news", "ann"))
t2 = threading.Thread(target=subscribe, args=("news", "bob"))
t1.start()
t2.start()
t1.join()
t2.join()
assert sorted(subscribers["news"]) == ["ann", "bob"], subscribers
