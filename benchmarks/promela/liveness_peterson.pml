/* Peterson's algorithm for two processes, the twin of examples/liveness_peterson.py: each process
   enters the critical section twice, waiting in a busy-wait loop (each pass a step, as the Python
   loop's test is). Termination is the LTL property "eventually both processes are done".
     spin -a liveness_peterson.pml && gcc -O2 -o pan pan.c && ./pan -a      (no fairness: violated)
     ./pan -a -f                                                           (weak fairness: holds)  */
bool flag[2];
byte turn;
byte crit;
bool done[2];

active [2] proctype P()
{
    byte i = _pid;
    byte j = 1 - _pid;
    byte r = 0;
    do
    :: r < 2 ->
        flag[i] = true;
        turn = j;
        do
        :: (flag[j] && turn == j) -> skip
        :: else -> break
        od;
        crit++;
        assert(crit <= 1);
        crit--;
        flag[i] = false;
        r++
    :: else -> break
    od;
    done[i] = true
}

ltl termination { <> (done[0] && done[1]) }
