# Expected: violation (assertion)
# Twin of queue_lifo.py starting both pushers before joining either: the pops' order is the order the
# threads happened to run in.
import queue
import threading

stack = queue.LifoQueue()


def push(item):
    stack.put(item)


t1 = threading.Thread(target=push, args=("a",))
t2 = threading.Thread(target=push, args=("b",))
t1.start()
t2.start()
t1.join()
t2.join()
assert stack.qsize() == 2
assert [stack.get(), stack.get()] == ["b", "a"]
assert stack.empty()
