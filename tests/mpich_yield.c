/* mpich_yield.c -- makes MPICH's waiting ranks give up their core (tests only).

   MPICH 4.0 (Debian's ch4:ucx) waits for a message by polling UCX in a
   loop and never yields, so with more ranks than cores a waiting rank
   holds its core until the scheduler preempts it, and every message
   between ranks that share a core costs a time slice: test_redistribute
   --quick takes 14 s at 3 ranks on 2 cores against 0.07 s at 2 ranks, and
   MPIR_CVAR_POLLS_BEFORE_YIELD, MPIR_CVAR_NOLOCAL, UCX_TLS and -bind-to
   change nothing. Preloaded into each rank (LD_PRELOAD, tests/run.sh), this
   wraps ucp_worker_progress, which MPICH's progress loop calls on every
   turn: after 64 turns in a row that made no progress the rank calls
   sched_yield, and the 3-rank run takes 0.17 s. Nothing else changes: the
   same calls return the same results. In a program that does not load UCX
   (Open MPI, another MPICH device) the wrapper is never called. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

typedef unsigned (*dt_yield_progress_fn)(void *worker);

unsigned ucp_worker_progress(void *worker);
unsigned ucp_worker_progress(void *worker) {
    static dt_yield_progress_fn next;
    static unsigned idle;
    unsigned events;
    if (!next) next = (dt_yield_progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (!next) return 0;
    events = next(worker);
    if (events) {
        idle = 0;
    } else if (++idle >= 64) {
        idle = 0;
        sched_yield();
    }
    return events;
}
