/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  own
   args:  --backend mpi | --backend nccl | --backend nccl --graph
   standin: yes
*/
/* test_heat2d_cuda.cu -- examples/heat2d_cuda.cu as a test: its main, at a
   small odd size (uneven and empty shards at 6 and 8 ranks), over plain MPI
   (faces staged through pinned buffers) and NCCL, and over NCCL with the
   steps after the checkpoint replayed from a CUDA graph (--graph; the
   stand-in captures and replays). The example itself
   compares the uninterrupted device run, the device restart on n-1 ranks
   and a serial host run byte for byte and exits 1 unless all agree; and
   the field's fnv1a64 must be the one examples/heat2d.c prints for the
   same size on the host:
       mpiexec.mpich -n 3 build/mpich/heat2d --nx 29 --ny 23 --steps 17 --at 7
         (a) uninterrupted      fnv1a64 0xae45f2ee443d150b  sum 104.700448645212  max 2.66049405657103
   This adds the PASS line. On the stand-in (make standin) device memory is
   unreadable by host code, so a host access to the fields faults. */
#define main heat2d_cuda_main
#include "../examples/heat2d_cuda.cu"
#undef main

int main(int argc, char **argv) {
    char *args[16];
    static char nx[] = "--nx", nxv[] = "29", ny[] = "--ny", nyv[] = "23", st[] = "--steps", stv[] = "17";
    static char at[] = "--at", atv[] = "7", ex[] = "--expect", exv[] = "0xae45f2ee443d150b"; /* heat2d.c's */
    const char *backend = "mpi";
    int i, rc, n = 0, graph = 0;
    for (i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--backend")) backend = argv[i + 1];
        if (!strcmp(argv[i], "--graph")) graph = 1;
    }
    args[n++] = argv[0];
    args[n++] = nx, args[n++] = nxv, args[n++] = ny, args[n++] = nyv;
    args[n++] = st, args[n++] = stv, args[n++] = at, args[n++] = atv, args[n++] = ex, args[n++] = exv;
    args[n++] = (char *)"--backend", args[n++] = (char *)backend;
    if (graph) args[n++] = (char *)"--graph";
    args[n] = NULL;
    rc = heat2d_cuda_main(n, args);
#ifdef DTCU_STANDIN
    if (wrank == 0) printf("%s heat2d_cuda@standin (%s%s) np=%d\n", rc ? "FAIL" : "PASS", backend, graph ? ", graph" : "", wsize);
#else
    if (wrank == 0) printf("%s heat2d_cuda (%s%s) np=%d\n", rc ? "FAIL" : "PASS", backend, graph ? ", graph" : "", wsize);
#endif
    return rc;
}
