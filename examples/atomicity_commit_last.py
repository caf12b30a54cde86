# Source: this project (issue 9, trap "commit() as the last statement of a block")
# Expected: ok
# Atomicity: ok
# Smoke test: yes
from movers.lang import *
"""A block whose last statement is `commit()`: the block commits with its last step, the one that leaves
it (here the release at the end of `with m:`), not with the thread's first step after the block.

Each thread, twice, appends its id to `log` under the lock `m` (`log = 2 * log + i + 1` keeps the order
of the appends), then counts its round in `rounds` outside any block. The critical sections run in some
order, and the serial run on the shadow store must run the blocks in the same order; it does when each
block commits at its release, as `commit()` as the last statement says. The order of the threads' next
steps after their blocks is another matter (thread 0 can release first and thread 1 take its next step
first), so a checker that took the step after the block as the commit point would run the blocks in the
wrong order on the shadow store and report a `log` that differs. Both `movers check` and
`movers check --atomicity commit` say ok (the `# Expected:` and `# Atomicity:` lines).
"""

m = Lock()
log = 0  # the appends so far, in order: log = 2 * log + id + 1
rounds = 0  # rounds finished, by all threads


def worker(i):
    global log, rounds
    for k in range(2):
        with atomic():
            with m:
                t = log
                log = 2 * t + i + 1
            commit()
        rounds += 1


Thread(target=worker, args=(0,)).start()
Thread(target=worker, args=(1,)).start()
