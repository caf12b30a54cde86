# Source: the classic livelock of two polite threads (e.g. the "polite people in a corridor" of
#         Herlihy & Shavit, "The Art of Multiprocessor Programming", 2.3, Lock-one/Lock-two
#         discussion): each raises its flag, and while the other's flag is up it lowers its own and
#         raises it again. Both can back off and retry in lockstep for ever, each moving on every pass:
#         a livelock, fair under weak and strong fairness alike, so termination is violated under all
#         three. Nobody ever waits at a blocking operation (the retry loop is busy), so starvation, which
#         concerns threads waiting at an acquire, a join, a blocking get..., holds.
#         SPIN 6.5 (benchmarks/promela/liveness_polite.pml, LTL <> both done): acceptance cycle without
#         fairness and with -f (weak fairness): termination violated.
# Expected: ok
# Liveness termination: none violation, weak violation, strong violation
# Liveness starvation: none ok, weak ok, strong ok
# Smoke test: no (the two threads can livelock)
import threading

want = [False, False]
inside = 0


def polite(i):
    global inside
    j = 1 - i
    want[i] = True
    while want[j]:
        want[i] = False
        want[i] = True
    inside += 1
    assert inside == 1, "both threads in the critical section"
    inside -= 1
    want[i] = False


t0 = threading.Thread(target=polite, args=(0,))
t1 = threading.Thread(target=polite, args=(1,))
t0.start()
t1.start()
