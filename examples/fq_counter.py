# Source: Flanagan & Qadeer, "Transactions for Software Model Checking" (SoftMC 2003), section 2
#         (papers/004): the counter with incr, decr and read. x counts increments and is protected by
#         mx, y counts decrements and is protected by my; count is a specification variable, updated
#         without a lock (its exclusive predicate is false: accesses to it are non-movers), and read
#         asserts count == x - y. (The paper's decr releases mx, a typo: it must release my.)
#         Closed model: two clients each call a nondeterministically chosen method CALLS times; a main
#         thread joins them and calls read once more.
#         The paper's steps are statements (--granularity statement: verified). At access granularity (the
#         default) `count += 1` is a read and a write, as CPython runs it, and incr and decr update count
#         under different locks: an update is lost and read's assertion fails.
# Expected: violation (assertion)
# Statement granularity: ok
# Smoke test: yes
from movers.lang import *

x = 0
y = 0
count = 0
mx = Lock()
my = Lock()

guarded_by(x, mx)
guarded_by(y, my)

CALLS = 2


def incr():
    global x, count
    mx.acquire()
    tx = x
    count += 1
    x = tx + 1
    mx.release()


def decr():
    global y, count
    my.acquire()
    ty = y
    count -= 1
    y = ty + 1
    my.release()


def read():
    mx.acquire()
    tx = x
    my.acquire()
    ty = y
    assert count == tx - ty, "count differs from x - y"
    my.release()
    mx.release()
    return tx - ty


def client():
    for k in range(CALLS):
        op = choose(0, 1, 2)
        if op == 0:
            incr()
        elif op == 1:
            decr()
        else:
            read()


def main():
    c0.join()
    c1.join()
    read()


c0 = Thread(target=client)
c1 = Thread(target=client)
c0.start()
c1.start()
Thread(target=main).start()
