/* TEST
   ranks: 1 2 3 4 6 8
   quick: yes
   needs: mpi
   impl:  linked
*/
/* test_mesh_allreduce.c -- dt_mesh_allreduce: a few numbers reduced over
   the whole mesh or some of its dims, in place. On every 1-D and 2-D mesh
   of the ranks, rank (c0, c1) holds v_j = f(c0, c1, j) (j < 3), and the
   result is checked against the closed form over the reduced coordinates:
   SUM, MAX, MIN for I32, I64 and F64 and AVG for F64 (integer AVG is refused), over all dims (ndims 0), dim 0,
   dim 1, and both dims named in reverse order. Bad arguments (a dim out of
   range or twice, an unknown op or dtype, values NULL) fail with the
   values untouched; count 0 is a no-op. */
#include "dtensor.h"
#include "dt_test.h"

/* the value of element j at coordinate (c0, c1): distinct, signed */
static int64_t f(int c0, int c1, int j) { return (int64_t)((7 * c0 + 3 * c1 + 5 * j) % 11) - 4 + 100 * j; }

/* op over the coordinates that share this rank's unreduced ones */
static int64_t expect(const dtt_mesh *m, unsigned mask, int j, dt_reduce op, double *avg)
{
    int n0 = m->shape[0], n1 = m->nd > 1 ? m->shape[1] : 1, a, b, n = 0;
    int64_t acc = 0, v;
    for (a = 0; a < n0; a++)
        for (b = 0; b < n1; b++) {
            if (!(mask & 1u) && a != m->coord[0]) continue;
            if (!(mask & 2u) && m->nd > 1 && b != m->coord[1]) continue;
            v = f(a, b, j);
            if (n == 0) acc = v;
            else if (op == DT_MAX) acc = v > acc ? v : acc;
            else if (op == DT_MIN) acc = v < acc ? v : acc;
            else acc += v;
            n++;
        }
    *avg = (double)acc / n;
    return acc;
}

static void sweep(dtt_mesh *m)
{
    static const dt_dtype types[] = { DT_I32, DT_I64, DT_F64 };
    static const dt_reduce ops[] = { DT_SUM, DT_AVG, DT_MAX, DT_MIN };
    int both_rev[2] = { 1, 0 }, d0[1] = { 0 }, d1[1] = { 1 };
    int ti, oi, sel, j;
    int c1 = m->nd > 1 ? m->coord[1] : 0;
    for (ti = 0; ti < NELEM(types); ti++)
        for (oi = 0; oi < NELEM(ops); oi++)
            for (sel = 0; sel < 4; sel++) {
                int nd = sel == 0 ? 0 : sel == 3 ? 2 : 1;
                const int *dims = sel == 1 ? d0 : sel == 2 ? d1 : sel == 3 ? both_rev : NULL;
                unsigned mask = sel == 0 || sel == 3 ? 3u : sel == 1 ? 1u : 2u;
                int32_t i32[3];
                int64_t i64[3];
                double f64[3];
                void *vals = types[ti] == DT_I32 ? (void *)i32 : types[ti] == DT_I64 ? (void *)i64 : (void *)f64;
                if (m->nd < 2 && sel >= 2) continue;
                if (types[ti] != DT_F64 && ops[oi] == DT_AVG) continue; /* integer AVG truncates per dim */
                for (j = 0; j < 3; j++) {
                    i32[j] = (int32_t)f(m->coord[0], c1, j);
                    i64[j] = f(m->coord[0], c1, j);
                    f64[j] = (double)f(m->coord[0], c1, j);
                }
                dtt_ctx("mesh %s %s op %d sel %d", m->name, dt_dtype_name(types[ti]), (int)ops[oi], sel);
                CHECK_OK(dt_mesh_allreduce(m->mesh, nd, dims, vals, 3, types[ti], ops[oi]));
                for (j = 0; j < 3; j++) {
                    double avg;
                    int64_t want = expect(m, mask, j, ops[oi], &avg);
                    if (types[ti] == DT_I32) CHECK(i32[j] == want, "v[%d] = %d, want %lld", j, i32[j], (long long)want);
                    else if (types[ti] == DT_I64)
                        CHECK(i64[j] == want, "v[%d] = %lld, want %lld", j, (long long)i64[j], (long long)want);
                    else if (ops[oi] == DT_AVG)
                        CHECK(f64[j] > avg - 1e-12 && f64[j] < avg + 1e-12, "v[%d] = %.17g, want %.17g", j, f64[j], avg);
                    else CHECK(f64[j] == (double)want, "v[%d] = %g, want %lld", j, f64[j], (long long)want);
                }
            }
    dtt_ctx("");
}

static void bad_input(dtt_mesh *m)
{
    double v[2] = { 1.5, -2.5 };
    int out_of_range[1] = { 2 }, twice[2] = { 0, 0 };
    CHECK_ST(dt_mesh_allreduce(m->mesh, 1, out_of_range, v, 2, DT_F64, DT_SUM), DT_ERR_ARG);
    CHECK_ERRMSG("dt_mesh_allreduce");
    if (m->nd > 1) CHECK_ST(dt_mesh_allreduce(m->mesh, 2, twice, v, 2, DT_F64, DT_SUM), DT_ERR_ARG);
    CHECK_ST(dt_mesh_allreduce(m->mesh, 1, NULL, v, 2, DT_F64, DT_SUM), DT_ERR_ARG);
    CHECK_ST(dt_mesh_allreduce(m->mesh, 0, NULL, v, 2, DT_F64, (dt_reduce)9), DT_ERR_ARG);
    CHECK_ST(dt_mesh_allreduce(m->mesh, 0, NULL, v, 2, (dt_dtype)99, DT_SUM), DT_ERR_DTYPE);
    CHECK_ST(dt_mesh_allreduce(m->mesh, 0, NULL, NULL, 2, DT_F64, DT_SUM), DT_ERR_ARG);
    CHECK_ST(dt_mesh_allreduce(NULL, 0, NULL, v, 2, DT_F64, DT_SUM), DT_ERR_ARG);
    CHECK_ST(dt_mesh_allreduce(m->mesh, 0, NULL, v, 1, DT_I64, DT_AVG), DT_ERR_DTYPE);
    CHECK(v[0] == 1.5 && v[1] == -2.5, "values changed by failed calls: %g %g", v[0], v[1]);
    CHECK_OK(dt_mesh_allreduce(m->mesh, 0, NULL, NULL, 0, DT_F64, DT_SUM));
}

int main(int argc, char **argv)
{
    dt_comm *comm = NULL;
    dtt_mesh m;
    int fac[64 * DT_MAX_MESH_DIMS], nf, k, one[1];
    dtt_init(&argc, &argv, "mesh_allreduce");
    CHECK_OK(dt_comm_mpi(MPI_COMM_WORLD, &comm));
    if (comm) {
        one[0] = dtt_np;
        if (dtt_mesh_open(&m, comm, 1, one)) {
            sweep(&m);
            bad_input(&m);
            dtt_mesh_close(&m);
        }
        nf = dtt_factorizations(dtt_np, 2, fac, 64);
        for (k = 0; k < nf; k++) {
            if (!dtt_mesh_open(&m, comm, 2, &fac[k * DT_MAX_MESH_DIMS])) continue;
            sweep(&m);
            bad_input(&m);
            dtt_mesh_close(&m);
        }
        dt_comm_destroy(comm);
    }
    return dtt_finish();
}
