# Source: Flanagan, "Verifying Commit-Atomicity Using Model-Checking" (SPIN 2004; papers/003), section 2
#         (procedure acquire) and section 5, benchmark acquire2; Figure 1
# Expected: ok
# Atomicity: ok
# Smoke test: no (the workers loop forever, as in the paper)
from movers.lang import *
"""acquire2 (Flanagan, papers/003, sections 2 and 5; Figure 1): acquire1 with a 100-line critical section.

A mutex `m` implemented by busy waiting on a compare-and-swap (the paper's `acquire`:
`boolean r := true; while (r == true) { CAS(m, false, r); }`), protecting the integer `data`. Each
worker loops forever: acquire, update `data`, release, and the loop body is specified atomic. The
procedure is atomic but not reducible (a failed CAS is not a right mover), which is why the paper checks
it by commit-atomicity: `movers check --atomicity commit` verifies it, `--atomicity reduction` cannot.

The critical section has 100 lines that manipulate `data` (the paper's words; here alternately adding 1
and 2 modulo 3), to calibrate the technique on a large procedure.

Figure 1 (SPIN; states, standard / instrumented): 2 threads 3,335 / 8,278; 3: 12,864 / 58,795;
4: 153,854 / 714,359; 5: 541,601 / SPIN ran out of memory.

Differences from the paper: CAS is `with indivisible():`; `data` counts modulo 3 (Promela's bytes wrap
too, at 256), so that the state space is finite; the commit point is movers' default (the block's first
step that is not a right mover: the first CAS).

Scaling: THREADS workers (benchmarks/atomicity.py rewrites the line `THREADS = 2`: keep it).
"""

THREADS = 2

m = False
data = 0


def acquire():
    global m
    r = True
    while r:
        with indivisible():  # CAS(m, false, r)
            if not m:
                m = True
                r = False


def release():
    global m
    m = False


def worker():
    global data
    while True:
        with atomic():
            acquire()
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            data = (data + 1) % 3
            data = (data + 2) % 3
            release()


for k in range(THREADS):
    Thread(target=worker).start()
