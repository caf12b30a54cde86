# Source: the deep counter of issue 27 (swarm and simulation for state spaces no machine holds): three
#         workers race for a lock to become the leader, then each counts to N on its own slot of a
#         shared list; the main thread holds the lock while it starts them, joins them all and asserts
#         that the first worker started was the leader: the mistaken belief that threads run in the
#         order they are started. Plain Python: it runs as it is under python3.
#         With N = 200 the full state space has 48N^3 + 240N^2 + 324N + 165 = 393,664,965 states
#         (counted by the full search for N = 2 to 32 and fitted exactly). The depth-first search takes
#         the threads in order, so it explores every interleaving in which worker 0 leads (about a
#         third of them) before any other: hours. A random walk finds the bug in two walks out of
#         three, and a swarm's member that takes the threads in reverse order on its first descent
#         (docs/scaling.md, "Bug hunting: simulation and swarm"). Too large for the exhaustive search
#         of the example tests: tests/test_examples.py checks it with --simulate and --swarm 2.
# Expected: violation (assertion)
# Smoke test: yes (CPython usually wakes worker 0 first: exit status 0 or an AssertionError)
import threading

N = 200
lock = threading.Lock()
leader = -1
counts = [0, 0, 0]


def worker(k):
    global leader
    with lock:
        if leader < 0:
            leader = k
    for _ in range(N):
        counts[k] += 1


threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
with lock:
    for t in threads:
        t.start()
for t in threads:
    t.join()
assert leader == 0, f"worker {leader} led, not worker 0"
