# Source: movers' own (issue 11, thread symmetry): four identical workers increment a counter under one
#         lock, twice each. No worker can see its own number (no tid(), no .owner), so renaming the
#         threads maps the state graph onto itself: `--symmetry threads` stores one state per orbit
#         (417 states against 7,173; 4! = 24 is the most it could save). The main thread starts them and
#         ends; Python waits for the workers before it exits.
#         Plain Python: it runs as it is under python3.
# Expected: ok
# Smoke test: yes
import threading

m = threading.Lock()
count = 0


def worker():
    global count
    for i in range(2):
        with m:
            t = count
            count = t + 1


# The main thread keeps no list of the workers and does not join them: a list of Thread objects (or a
# join order) tells the workers apart, and --symmetry threads would have no orbit to fold.
for k in range(4):
    threading.Thread(target=worker).start()
