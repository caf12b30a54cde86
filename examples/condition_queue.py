# Source: Python's threading.Condition idiom (a one-slot mailbox), the condition-variable counterpart
#         of the wait/notify specialisation of Flanagan & Qadeer (papers/004, section 5) and of the
#         monitors of Dwyer et al. (papers/002, Figure 3). The producer puts 1..N into the slot, the
#         consumer (a Thread subclass with run) takes them and asserts the order; the main thread
#         starts both, joins them and checks, under the lock, that the slot is empty. Plain Python: it runs
#         as it is under python3.
# Expected: ok
# Smoke test: yes
import threading

N = 3
lock = threading.Lock()
cv = threading.Condition(lock)
full = False
slot = 0


def producer():
    global full, slot
    for k in range(N):
        with cv:
            while full:
                cv.wait()
            slot = k + 1
            full = True
            cv.notify_all()


class Consumer(threading.Thread):
    def run(self):
        global full
        for k in range(N):
            with cv:
                while not full:
                    cv.wait()
                assert slot == k + 1, "items out of order"
                full = False
                cv.notify_all()


p = threading.Thread(target=producer)
c = Consumer()
p.start()
c.start()
p.join()
c.join()
with cv:
    assert not full, "an item was left in the slot"
