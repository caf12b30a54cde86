# Expected: ok
# A LifoQueue filled by two threads and emptied by main: the last item put comes out first.
import queue
import threading

stack = queue.LifoQueue()


def push(item):
    stack.put(item)


t1 = threading.Thread(target=push, args=("a",))
t1.start()
t1.join()
t2 = threading.Thread(target=push, args=("b",))
t2.start()
t2.join()
assert stack.qsize() == 2
assert [stack.get(), stack.get()] == ["b", "a"]
assert stack.empty()
