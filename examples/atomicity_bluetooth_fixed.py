# Source: Flanagan, "Verifying Commit-Atomicity Using Model-Checking" (SPIN 2004; papers/003), section 5,
#         benchmark bluetooth (the simplified Windows NT Bluetooth driver of Qadeer & Wu's KISS, PLDI 2004)
# Expected: ok
# Atomicity: ok
# Smoke test: no (wait_until on a flag, which the CPython shim cannot wait for)
from movers.lang import *
"""bluetooth, fixed (Flanagan, papers/003, section 5; Figure 1): "After fixing this bug, none of the
benchmarks went wrong under the instrumented semantics".

One thread calls BCSP_PnpStop and the others BCSP_PnpAdd. A dispatch first calls IoIncrement, which
checks `stopping_flag` and then increments `pending_io` with an interlocked increment: two separate
steps, so a stop can slip in between, see `pending_io` drop to zero and let the driver stop while an I/O
is still admitted (atomicity_bluetooth.py). Here the check and the increment are taken under one lock,
and so is the stopper's setting of the flag: IoIncrement and IoDecrement are atomic.

Figure 1 (SPIN; this version; states, standard / instrumented): 2 threads 91 / 116; 3: 568 / 1,187;
4: 4,762 / 16,383; 5: 47,163 / 271,111; 6: 527,668 / SPIN ran out of memory.

Differences from the paper: no code is given; this follows KISS's model (pendingIo starts at 1 for the
stopper's own reference; the stop event is a flag that the stopper waits for). The plain check finds
nothing wrong here (no assertion is written about the driver's use after stop): the bug shows as an
atomicity violation only, as in the paper.

Scaling: THREADS threads in all, one stopper (benchmarks/atomicity.py rewrites the line `THREADS = 2`).
"""

THREADS = 2

m = Lock()
pending_io = 1
stopping_flag = False
stopping_event = False
stopped = False


def io_increment():
    global pending_io
    with atomic():
        with m:
            if stopping_flag:
                ok = False
            else:
                with indivisible():  # InterlockedIncrement/Decrement: one atomic step
                    pending_io = pending_io + 1
                ok = True
    return ok


def io_decrement():
    global pending_io, stopping_event
    with atomic():
        with m:
            with indivisible():  # InterlockedIncrement/Decrement: one atomic step
                pending_io = pending_io - 1
            if pending_io == 0:
                stopping_event = True


def pnp_add():
    if io_increment():
        io_decrement()


def pnp_stop():
    global stopping_flag, stopped
    with m:
        stopping_flag = True
    io_decrement()
    wait_until(stopping_event)
    stopped = True


Thread(target=pnp_stop).start()
for k in range(THREADS - 1):
    Thread(target=pnp_add).start()
