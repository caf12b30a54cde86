# Source: movers' own (issue 11, thread symmetry): four identical workers increment a counter under one
#         lock, twice each. No worker can see its own number (no tid(), no .owner), so renaming the
#         threads maps the state graph onto itself: `--symmetry threads` stores one state per orbit
#         (3,667 states against 80,613; 4! = 24 is the most it could save).
# Expected: ok
# Smoke test: yes
from movers.lang import *

m = Lock()
count = 0


def worker():
    global count
    for i in range(2):
        with m:
            t = count
            count = t + 1


for k in range(4):
    Thread(target=worker).start()
