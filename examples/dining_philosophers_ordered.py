# Source: the classic dining philosophers (Dijkstra), the standard deadlock benchmark of explicit-state
#         model checkers; cf. the Deadlock example of Dwyer et al. (FMSD 2004, papers/002, Tables 1-2).
#         Same as dining_philosophers.py, except that the last philosopher takes its right fork first:
#         the forks are then acquired in a global order, which rules out the circular wait.
# Expected: ok
# Smoke test: yes
from movers.lang import *

N = 3
ROUNDS = 2
forks = [Lock(), Lock(), Lock()]
eating = [False, False, False]


def philosopher(i):
    first = forks[i]
    second = forks[(i + 1) % N]
    if i == N - 1:
        first = forks[(i + 1) % N]
        second = forks[i]
    for r in range(ROUNDS):
        first.acquire()
        second.acquire()
        eating[i] = True
        assert not eating[(i + 1) % N] and not eating[(i + N - 1) % N], "neighbours eat together"
        eating[i] = False
        second.release()
        first.release()


Thread(target=philosopher, args=(0,)).start()
Thread(target=philosopher, args=(1,)).start()
Thread(target=philosopher, args=(2,)).start()
