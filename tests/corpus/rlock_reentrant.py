# Expected: ok
# An inventory whose locked method calls another locked method: an RLock lets the same thread re-enter.
import threading


class Inventory:
    def __init__(self):
        self._lock = threading.RLock()
        self._items = {}

    def add(self, name, n=1):
        with self._lock:
            self._items[name] = self._items.get(name, 0) + n

    def add_many(self, names):
        with self._lock:
            for name in names:
                self.add(name)

    def count(self, name):
        with self._lock:
            return self._items.get(name, 0)


inventory = Inventory()
t1 = threading.Thread(target=inventory.add_many, args=(["apple", "pear"],))
t2 = threading.Thread(target=inventory.add_many, args=(["apple"],))
t1.start()
t2.start()
t1.join()
t2.join()
assert inventory.count("apple") == 2
assert inventory.count("pear") == 1
