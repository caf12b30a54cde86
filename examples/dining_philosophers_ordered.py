# Source: the classic dining philosophers (Dijkstra), the standard deadlock benchmark of explicit-state
#         model checkers; cf. the Deadlock example of Dwyer et al. (FMSD 2004, papers/002, Tables 1-2).
#         Same as dining_philosophers.py, except that the last philosopher takes its right fork first:
#         the forks are then acquired in a global order, which rules out the circular wait.
#         Plain Python: it runs as it is under python3.
# Expected: ok
# Smoke test: yes
import threading

N = 3
ROUNDS = 2
forks = [threading.Lock() for _ in range(N)]
eating = [False] * N


def philosopher(i):
    first = forks[i]
    second = forks[(i + 1) % N]
    if i == N - 1:
        first, second = second, first
    for r in range(ROUNDS):
        with first:
            with second:
                eating[i] = True
                assert not eating[(i + 1) % N] and not eating[(i - 1) % N], "neighbours eat together"
                eating[i] = False


p0 = threading.Thread(target=philosopher, args=(0,))
p1 = threading.Thread(target=philosopher, args=(1,))
p2 = threading.Thread(target=philosopher, args=(2,))
p0.start()
p1.start()
p2.start()
p0.join()
p1.join()
p2.join()
assert not any(eating)
