# Source: Dijkstra's dining philosophers (cf. dining_philosophers.py), made deadlock-free the naive
#         way: a philosopher takes its left fork, tries the right one without blocking and, when it is
#         taken, puts the left fork down and starts again. No deadlock, but a livelock: the philosophers
#         can all take their left forks, fail on the right ones and put them down again, in lockstep,
#         for ever; every philosopher moves in that cycle, so it is fair under strong fairness too:
#         termination is violated under every fairness. Starvation (a philosopher waiting at its left
#         fork's acquire in every state of a fair cycle) holds under weak and strong fairness: to be
#         disabled the waiting philosopher needs its left fork held, by the neighbour who took it as a
#         right fork, who then eats and ends; without fairness it may wait while the others livelock.
#         Each philosopher eats once; the forks are named locks (a thread's function per seat) to keep
#         the model small.
#         Compare liveness_philosophers_arbiter.py.
# Expected: ok
# Liveness termination: none violation, weak violation, strong violation
# Liveness starvation: none violation, weak ok, strong ok
# Smoke test: no (the philosophers can livelock)
import threading

fork0 = threading.Lock()
fork1 = threading.Lock()
fork2 = threading.Lock()
meals = [0, 0, 0]


def philosopher0():
    eaten = False
    while not eaten:
        fork0.acquire()
        if fork1.acquire(blocking=False):
            meals[0] += 1
            fork1.release()
            eaten = True
        fork0.release()


def philosopher1():
    eaten = False
    while not eaten:
        fork1.acquire()
        if fork2.acquire(blocking=False):
            meals[1] += 1
            fork2.release()
            eaten = True
        fork1.release()


def philosopher2():
    eaten = False
    while not eaten:
        fork2.acquire()
        if fork0.acquire(blocking=False):
            meals[2] += 1
            fork0.release()
            eaten = True
        fork2.release()


threading.Thread(target=philosopher0).start()
threading.Thread(target=philosopher1).start()
threading.Thread(target=philosopher2).start()
