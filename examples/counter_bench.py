# Source: the scalable benchmark of this project (throughput, states per second): a lock-protected
#         counter, as in Flanagan & Qadeer's counter (papers/004, section 2) and the lock-based
#         reductions of Stoller & Cohen (papers/000). K workers each do L increments under the lock m;
#         the main thread joins them all and asserts count == K * L.
#         The benchmark harness makes variants by replacing the lines `K = 3` and `L = 4`: keep them.
#         It declares no predicate: the reductions infer that m protects count, and the full search
#         measures the plain cost of a step (fq_counter.py exercises declared predicates).
#         Plain Python: it runs as it is under python3.
# Expected: ok
# Smoke test: yes
import threading

K = 3
L = 4

m = threading.Lock()
count = 0


def worker():
    global count
    for i in range(L):
        with m:
            count += 1


workers = [threading.Thread(target=worker) for k in range(K)]
for w in workers:
    w.start()
for w in workers:
    w.join()
with m:
    assert count == K * L, "lost update"
