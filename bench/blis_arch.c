/* bench/blis_arch.c -- LD_PRELOAD shim: force BLIS's sub-configuration.

   Why: BLIS 0.9.0 (Debian 12's libblis4) picks its kernels from the CPU's
   cpuid family and model, and does not know AMD family 0x1A (Zen 5): it
   falls back to the 'generic' reference kernels (about 3x slower DGEMM than
   its AVX-512 'skx' kernels on such a CPU). Its own override, the
   environment variable BLIS_ARCH_TYPE, aborts in 0.9.0 ("Accessed
   uninitialized context in gks": the variable is checked before the kernel
   contexts are registered).

   This shim replaces bli_arch_query_id(), which libblis.so calls through its
   PLT whenever it looks up the kernel context, so every BLIS call in the
   process -- dt_matmul's bli_dgemm and ScaLAPACK's dgemm_ alike -- uses the
   sub-configuration named by DT_BLIS_ARCH (e.g. skx, zen3, haswell; a name
   bli_arch_string() knows). Unset: BLIS's own choice. Benchmark use only:

       gcc -O2 -shared -fPIC bench/blis_arch.c -o build/libblis_arch.so -ldl
       DT_BLIS_ARCH=skx LD_PRELOAD=$PWD/build/libblis_arch.so mpiexec ... */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *bli_arch_string(int id);
int bli_arch_query_id(void);

int bli_arch_query_id(void) {
    static int id = -1;
    if (id < 0) {
        int (*real)(void) = (int (*)(void))(size_t)dlsym(RTLD_NEXT, "bli_arch_query_id");
        int own = real ? real() : 0;
        const char *want = getenv("DT_BLIS_ARCH");
        id = own;
        if (want && *want) {
            int found = -1;
            for (int i = 0; i < 64; i++) { /* ids run up to 'generic', the last */
                const char *s = bli_arch_string(i);
                if (s && !strcmp(s, want)) { found = i; break; }
                if (s && !strcmp(s, "generic")) break;
            }
            if (found < 0) {
                fprintf(stderr, "blis_arch: DT_BLIS_ARCH=%s is not a BLIS sub-configuration; keeping %s\n", want,
                        bli_arch_string(own));
            } else {
                id = found;
            }
        }
    }
    return id;
}
