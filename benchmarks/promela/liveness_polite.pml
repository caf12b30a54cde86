/* Two polite processes, the twin of examples/liveness_polite.py: each raises its flag and, while the
   other's flag is up, lowers its own and raises it again. Both can retry in lockstep for ever: a
   livelock in which both processes move, so weak fairness does not exclude it. Termination is the LTL
   property "eventually both processes are done".
     spin -a liveness_polite.pml && gcc -O2 -o pan pan.c && ./pan -a       (no fairness: violated)
     ./pan -a -f                                                           (weak fairness: violated) */
bool want[2];
byte inside;
bool done[2];

active [2] proctype P()
{
    byte i = _pid;
    byte j = 1 - _pid;
    want[i] = true;
    do
    :: want[j] ->
        want[i] = false;
        want[i] = true
    :: else -> break
    od;
    inside++;
    assert(inside == 1);
    inside--;
    want[i] = false;
    done[i] = true
}

ltl termination { <> (done[0] && done[1]) }
