/* The twin of examples/liveness_spinlock.py: a poller takes and releases a lock on every pass until it
   sees the flag; the setter needs the lock once to set it. The acquire is a blocking guard (enabled
   only while the lock is free), so the setter is not continuously enabled and SPIN's weak fairness
   does not force it to move: termination ("eventually both are done") is violated with and without -f.
   (SPIN has no strong fairness, under which the setter, enabled infinitely often, would get the lock.)
     spin -a liveness_spinlock.pml && gcc -O2 -o pan pan.c && ./pan -a     (no fairness: violated)
     ./pan -a -f                                                           (weak fairness: violated) */
bool locked;
bool flag;
bool seen;
bool done[2];

active proctype poller()
{
    do
    :: !seen ->
        atomic { !locked -> locked = true };
        seen = flag;
        locked = false
    :: else -> break
    od;
    done[0] = true
}

active proctype setter()
{
    atomic { !locked -> locked = true };
    flag = true;
    locked = false;
    done[1] = true
}

ltl termination { <> (done[0] && done[1]) }
