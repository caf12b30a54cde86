# Source: Flanagan, "Verifying Commit-Atomicity Using Model-Checking" (SPIN 2004; papers/003), section 2
#         (procedure do_transaction) and section 5, benchmark transaction; Figure 1
# Expected: ok
# Atomicity: ok
# Smoke test: no (the workers loop forever)
from movers.lang import *
"""transaction (Flanagan, papers/003, sections 2 and 5; Figure 1): an optimistic transaction with retry.

`data` is protected by `mutex`; a transaction reads `data` under the mutex, computes f(data) without
holding it (the "long computation"), and writes the result under the mutex if `data` has not changed,
else retries. Each transaction is specified atomic. It is atomic, but not reducible (the serial
executions never retry, the others may): commit-atomicity verifies it with its commit point at the
successful write, marked by `commit()`.

Figure 1 (SPIN; states, standard / instrumented): 2 threads 836 / 4,730; 3: 25,557 / 532,457;
4: 826,627 / SPIN ran out of memory.

Differences from the paper: the paper's `while (true) { atomic { do_transaction(); } }` calls the
procedure inside the block; here its body is written inside the block, because `commit()` must be
written inside `with atomic():` itself (it marks the successful write); `return` became `break`. The
mutex is a `Lock` (the paper's is a boolean with the CAS acquire of acquire1). f(t) = (t + 1) % 3.

Scaling: THREADS workers (benchmarks/atomicity.py rewrites the line `THREADS = 2`: keep it).
"""

THREADS = 2

mutex = Lock()
data = 0


def worker():
    global data
    while True:
        with atomic():
            while True:
                with mutex:
                    t = data
                fdata = (t + 1) % 3
                with mutex:
                    if t == data:
                        commit()
                        data = fdata
                        break


for k in range(THREADS):
    Thread(target=worker).start()
