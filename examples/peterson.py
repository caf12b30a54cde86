# Source: Peterson's mutual exclusion algorithm for two threads (G. L. Peterson, "Myths about the
#         mutual exclusion problem", IPL 1981), a standard benchmark of explicit-state model checkers,
#         with plain shared variables and no locks (Flanagan's dekker benchmark, papers/003 Fig. 1, is
#         its relative). Each thread enters the critical section ROUNDS times; crit counts the threads
#         inside and is asserted to be at most 1. The wait is a busy-wait loop (a cycle in the state
#         space). Plain Python: it runs as it is under python3.
# Expected: ok
# Smoke test: yes
import threading

ROUNDS = 2
flag = [False, False]
turn = 0
crit = 0


def proc(i):
    global turn, crit
    j = 1 - i
    for r in range(ROUNDS):
        flag[i] = True
        turn = j
        while flag[j] and turn == j:
            pass
        crit += 1
        assert crit <= 1, "both threads in the critical section"
        crit -= 1
        flag[i] = False


t0 = threading.Thread(target=proc, args=(0,))
t1 = threading.Thread(target=proc, args=(1,))
t0.start()
t1.start()
t0.join()
t1.join()
assert crit == 0
