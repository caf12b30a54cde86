# Source: Python's threading.Condition idiom (a one-slot mailbox), the condition-variable counterpart
#         of the wait/notify specialisation of Flanagan & Qadeer (papers/004, section 5) and of the
#         monitors of Dwyer et al. (papers/002, Figure 3). The producer puts 1..N into the slot, the
#         consumer (a Thread subclass with run) takes them and asserts the order.
# Expected: ok
# Smoke test: yes
from movers.lang import *

N = 3
lock = Lock()
cv = Condition(lock)
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


class Consumer(Thread):
    def run(self):
        global full
        for k in range(N):
            with cv:
                while not full:
                    cv.wait()
                assert slot == k + 1, "items out of order"
                full = False
                cv.notify_all()


Thread(target=producer).start()
Consumer().start()
