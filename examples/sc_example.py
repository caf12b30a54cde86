# Source: Stoller & Cohen, "Optimistic Synchronization-Based State-Space Reduction" (TACAS 2003),
#         section 7, the worked example (papers/000); the model of docs/cli.md's examples.
#         Two workers write x[0] under m0 and x[1] under m1, meet at a barrier (y == 2), then each
#         owns its own element x[i] without a lock.
# Expected: violation (deadlock)
# Statement granularity: ok
# States: 106 with --reduction none, 62 with --reduction optimistic under --granularity statement (the paper's
#         numbers: the paper's steps are statements). At access granularity (the default) `y += 1` is a read
#         and a write, as in CPython: two workers can both read 0, y never reaches 2, and both wait forever.
# Smoke test: no (wait_until on a value cannot block under CPython).
from movers.lang import *

m0, m1 = Lock(), Lock()
x = [0, 1]
y = 0

# x[k] is protected: by m_k, or, after the barrier, owned by thread k (Stoller & Cohen, section 7)
exclusive(x[0], lambda t: m0.owner == t or (y == 2 and t == 0))
exclusive(x[1], lambda t: m1.owner == t or (y == 2 and t == 1))

def worker(i):
    global y
    m0.acquire()
    x[0] = i
    m0.release()
    m1.acquire()
    x[1] = i
    m1.release()
    y += 1
    wait_until(y == 2)
    x[i] = i

Thread(target=worker, args=(0,)).start()
Thread(target=worker, args=(1,)).start()
