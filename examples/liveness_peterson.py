# Source: Peterson's mutual exclusion algorithm for two threads (G. L. Peterson, "Myths about the
#         mutual exclusion problem", IPL 1981), as in peterson.py, with the liveness questions: each
#         thread enters the critical section twice, waiting in a busy-wait loop. A thread that
#         spins moves (its loop's test is a step), so it never *waits* in the sense of starvation (a
#         thread at an acquire, a join, a blocking get...): the property that shows Peterson's
#         starvation freedom here is termination. Under weak fairness every run ends (a spinning thread
#         leaves its loop once the other, enabled, moves on); without fairness a run where one thread
#         spins for ever while the other never moves is a (non-progress) cycle.
#         No main code after the starts (CPython's interpreter waits for the threads at exit).
#         SPIN 6.5 (benchmarks/promela/liveness_peterson.pml, LTL <> both done): acceptance cycle
#         without fairness, none with -f (weak fairness): termination violated, resp. holds.
# Expected: ok
# Liveness termination: none violation, weak ok, strong ok
# Liveness starvation: none ok, weak ok, strong ok
# Smoke test: yes
import threading

flag = [False, False]
turn = 0
crit = 0


def proc(i):
    global turn, crit
    j = 1 - i
    for _round in range(2):
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
