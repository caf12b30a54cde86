# Source: Flanagan, "Verifying Commit-Atomicity Using Model-Checking" (SPIN 2004; papers/003), section 5,
#         benchmark dekker; Figure 1
# Expected: ok
# Atomicity: ok
# Smoke test: no (the two processes loop forever)
from movers.lang import *
"""dekker (Flanagan, papers/003, section 5; Figure 1): Dekker's mutual exclusion for two processes, with
each pass through entry protocol, critical section and exit protocol specified atomic.

Figure 1 (SPIN; states, standard / instrumented): 2 threads 3,104 / 3,601.

Differences from the paper (which gives no code): the textbook algorithm (flags, turn); the critical
section updates `data` modulo 3. The commit point is marked with `commit()` at the entry of the critical
section, where the process has won: with movers' default (the block's first step that is not a right
mover, raising the flag) the serial order would be the order in which the processes *ask*, and the
process that asks second may enter first, so the check would go wrong although each pass is atomic.

Scaling: Dekker's algorithm is for two processes: THREADS = 2 only.
"""

THREADS = 2

flag = [False, False]
turn = 0
data = 0


def process(i):
    global turn, data
    while True:
        with atomic():
            flag[i] = True
            while flag[1 - i]:
                if turn != i:
                    flag[i] = False
                    while turn != i:
                        pass
                    flag[i] = True
            commit()
            data = (data + 1) % 3
            turn = 1 - i
            flag[i] = False


for k in range(THREADS):
    Thread(target=process, args=(k,)).start()
