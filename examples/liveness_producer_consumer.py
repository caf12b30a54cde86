# Source: this project's liveness examples (issue 26): a producer and two consumers that serve for ever
#         through a queue.Queue of one slot (the textbook bounded buffer, Python's queue module). A
#         consumer waits in get() while the queue is empty; when the producer puts an item, either
#         consumer may take it. Under weak fairness the second consumer can starve: the producer and the
#         first consumer hand every item over between them, and the waiting consumer is disabled (the
#         queue empty) at some state of that cycle. Under strong fairness too: get() waits on a Condition
#         and each put()'s notify may wake the other consumer (Python promises no order among waiters;
#         CPython happens to wake the first, and under that order this consumer would be served). A model
#         where get() is one step, enabled whenever the queue holds an item, says ok under strong fairness
#         (tests/test_liveness_examples.py, NAIVE_MODEL). Termination is violated under every fairness: the
#         threads are servers that never end (by design).
# Expected: ok
# Liveness termination: none violation, weak violation, strong violation
# Liveness starvation: none violation, weak violation, strong violation
# Smoke test: no (the threads never end)
import queue
import threading

q = queue.Queue(1)


def producer():
    while True:
        q.put(1)


def consumer():
    while True:
        q.get()
        q.task_done()


threading.Thread(target=producer).start()
threading.Thread(target=consumer).start()
threading.Thread(target=consumer).start()
