# Source: this project's liveness examples (issue 26): a thread that polls a flag under a lock, taking
#         and releasing the lock on every pass (the spin of a test-and-set lock around a test), and a
#         thread that needs the lock once to set the flag. threading.Lock is not fair: the setter waits
#         at its acquire, enabled whenever the poller is between two passes, disabled while the poller
#         holds the lock. Under weak fairness the poller may win the lock every time: the setter starves
#         (it waits at its acquire in every state of the cycle and is disabled in some) and the poller
#         never ends. Under strong fairness the setter, enabled infinitely often, gets the lock: no
#         starvation, and every run ends. SPIN 6.5 (benchmarks/promela/liveness_spinlock.pml, LTL <> both
#         done): acceptance cycle without fairness and with -f (weak fairness); SPIN has no strong one.
# Expected: ok
# Liveness termination: none violation, weak violation, strong ok
# Liveness starvation: none violation, weak violation, strong ok
# Smoke test: yes
import threading

lock = threading.Lock()
done = False
seen = False


def poller():
    global seen
    while not seen:
        with lock:
            seen = done


def setter():
    global done
    with lock:
        done = True


t0 = threading.Thread(target=poller)
t1 = threading.Thread(target=setter)
t0.start()
t1.start()
