# Source: the classic dining philosophers (Dijkstra), the standard deadlock benchmark of explicit-state
#         model checkers; cf. the Deadlock example of Dwyer et al. (FMSD 2004, papers/002, Tables 1-2),
#         threads that share objects only to lock them. Three philosophers each take their left fork,
#         then their right fork. When all three hold their left fork, nobody can proceed.
# Expected: violation (deadlock)
# Smoke test: no (it may hang under CPython)
from movers.lang import *

N = 3
ROUNDS = 2
forks = [Lock(), Lock(), Lock()]
eating = [False, False, False]


def philosopher(i):
    first = forks[i]
    second = forks[(i + 1) % N]
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
