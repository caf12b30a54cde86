# Source: Dijkstra's dining philosophers (cf. dining_philosophers.py) with an arbiter (the "waiter"
#         solution, e.g. Downey, "The Little Book of Semaphores", 4.4): a philosopher asks the waiter (a
#         lock) for permission and takes both forks, blocking, while it holds the permission, then lets
#         the waiter go, eats and puts the forks down. Only one philosopher picks up forks at a time, so
#         no circular wait (no deadlock) and, every wait being a blocking acquire, no busy retry (no
#         livelock): every run ends under any fairness, and nobody starves. Each philosopher eats once.
#         Compare liveness_philosophers.py, whose polite retry livelocks.
# Expected: ok
# Liveness termination: none ok, weak ok, strong ok
# Liveness starvation: none ok, weak ok, strong ok
# Smoke test: yes
import threading

waiter = threading.Lock()
fork0 = threading.Lock()
fork1 = threading.Lock()
fork2 = threading.Lock()
meals = [0, 0, 0]


def philosopher0():
    waiter.acquire()
    fork0.acquire()
    fork1.acquire()
    waiter.release()
    meals[0] += 1
    fork1.release()
    fork0.release()


def philosopher1():
    waiter.acquire()
    fork1.acquire()
    fork2.acquire()
    waiter.release()
    meals[1] += 1
    fork2.release()
    fork1.release()


def philosopher2():
    waiter.acquire()
    fork2.acquire()
    fork0.acquire()
    waiter.release()
    meals[2] += 1
    fork0.release()
    fork2.release()


threading.Thread(target=philosopher0).start()
threading.Thread(target=philosopher1).start()
threading.Thread(target=philosopher2).start()
