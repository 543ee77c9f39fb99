/* TEST
   ranks:   1 2 3 4 6 8
   quick:   yes
   needs:   mpi (and a GPU per rank when built by nvcc: make cuda)
   standin: yes
*/
/* test_nccl.cu -- the NCCL backend (dt_comm_nccl) through its dt_comm.

   Every callback of the dt_comm_desc that dt_comm_nccl builds is driven on
   device buffers and checked against closed-form values:
   - allgatherv: uneven blocks with gaps (the grouped-ncclBroadcast path),
     equal blocks (ncclAllGather), in place, a zero-byte block;
   - alltoallv: uneven pieces including zero-byte ones, the bytes between
     pieces untouched;
   - allreduce: every dtype x SUM/MAX/MIN (F16/BF16 natively), AVG of the
     floating dtypes, in place, count 0; integer AVG refused;
   - reduce_scatter: equal counts, uneven counts with a zero count (padded
     through scratch; the rank whose count is the largest receives directly),
     every dtype with SUM, MAX of F16/BF16, all counts zero;
   - I32/I64 allreduce and reduce_scatter sums that overflow: the wrapped
     bits, as on the host (tests/test_transport.c);
   - broadcast, barrier, split (ncclCommSplit, key order, a rank left out),
     start/wait (a ring of messages of different sizes);
   - errors: a bad peer -> DT_ERR_COMM naming ncclSend; bad dtype; NULL args;
   - the user's ncclComm_t survives dt_comm_destroy.
   With 2+ ranks the same collectives also run through the library's
   dt__comm_* wrappers (what the rest of dtensor.h calls), and a split child
   through dt__comm_split. At one rank the wrappers short-cut with host
   memcpy, so only the callbacks are driven there.

   Ranks: with MPI, one rank per GPU (ncclCommInitRank, the id broadcast
   over MPI); built with -DDTENSOR_NO_MPI, one rank (ncclCommInitAll on
   device 0). With no CUDA device (or fewer devices on a node than ranks on
   it) it prints "test_nccl: no CUDA device, SKIPPED" (or why) and exits 77:
   `make cuda` may treat that as a skip, `make test-cuda` never does.
   --quick: smaller buffers (on the stand-in, full is 300007 elements). */
#define DTENSOR_IMPLEMENTATION
#include "dtensor_cuda.h"
#include "dt_test.h"

#define SKIP_EXIT 77

static cudaStream_t stream;

/* ------------------------------------------------------------ device helpers */

/* cudaMemset and cudaMemcpy from pageable memory return before the legacy
   stream has written the device (CUDA documents both), and the test's
   stream is non-blocking: it does not wait for the legacy stream. So the
   buffers are settled before the callbacks read them (the stand-in's
   asynchronous streams caught the race). */
static void settle(void)
{
    CHECK(cudaStreamSynchronize(0) == cudaSuccess, "cudaStreamSynchronize(0): %s",
          cudaGetErrorString(cudaGetLastError()));
}

/* a device buffer of `bytes` filled with the byte `fill` (never NULL: the
   test cannot go on without it) */
static void *dalloc(size_t bytes, int fill)
{
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess || cudaMemset(p, fill, bytes ? bytes : 1) != cudaSuccess ||
        cudaStreamSynchronize(0) != cudaSuccess) {
        fprintf(stderr, "[rank %d] test_nccl: cudaMalloc/cudaMemset/cudaStreamSynchronize of %zu bytes failed\n",
                dtt_rank, bytes);
        exit(1);
    }
    return p;
}

static void upload(void *d, const void *h, size_t bytes)
{
    CHECK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice) == cudaSuccess, "upload of %zu bytes", bytes);
    settle();
}

/* waits for the stream first: the callbacks only enqueue. `room` is the
   host buffer's size: a download larger than it is a failed check, not a
   heap overflow (the first GPU run found one: a reduce-scatter's 16 guard
   bytes downloaded into a buffer sized for the data only) */
static void download(void *h, size_t room, const void *d, size_t bytes)
{
    CHECK(cudaStreamSynchronize(stream) == cudaSuccess, "cudaStreamSynchronize: %s",
          cudaGetErrorString(cudaGetLastError()));
    if (bytes > room) {
        CHECK(0, "download of %zu bytes into a host buffer of %zu", bytes, room);
        return;
    }
    CHECK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost) == cudaSuccess, "download of %zu bytes", bytes);
}

static unsigned char pattern(int a, int b, size_t i) { return (unsigned char)((a * 37 + b * 11 + (int)i) & 0xff); }

/* ------------------------------------------------------------ the two ways in */

/* via 0: the desc callbacks themselves; via 1: the library's wrappers */
static dt_status do_allgatherv(dt_comm *c, int via, const void *sb, size_t sn, void *rb, const size_t *rc,
                               const size_t *rd)
{
    return via ? dt__comm_allgatherv(c, sb, sn, rb, rc, rd) : c->be.allgatherv(c->be.user, sb, sn, rb, rc, rd);
}

static dt_status do_alltoallv(dt_comm *c, int via, const void *sb, const size_t *sc, const size_t *sd, void *rb,
                              const size_t *rc, const size_t *rd, size_t bound)
{
    return via ? dt__comm_alltoallv(c, sb, sc, sd, rb, rc, rd, bound)
               : c->be.alltoallv(c->be.user, sb, sc, sd, rb, rc, rd);
}

static dt_status do_allreduce(dt_comm *c, int via, const void *sb, void *rb, size_t n, dt_dtype t, dt_reduce op)
{
    return via ? dt__comm_allreduce(c, sb, rb, n, t, op) : c->be.allreduce(c->be.user, sb, rb, n, t, op);
}

static dt_status do_reduce_scatter(dt_comm *c, int via, const void *sb, void *rb, const size_t *counts, dt_dtype t,
                                   dt_reduce op)
{
    return via ? dt__comm_reduce_scatter(c, sb, rb, counts, t, op)
               : c->be.reduce_scatter(c->be.user, sb, rb, counts, t, op);
}

static dt_status do_broadcast(dt_comm *c, int via, void *buf, size_t bytes, int root)
{
    return via ? dt__comm_broadcast(c, buf, bytes, root) : c->be.broadcast(c->be.user, buf, bytes, root);
}

static const char *via_name(int via) { return via ? "wrapper" : "callback"; }

/* ------------------------------------------------------------ allgatherv */

/* blocks of `len(j)` bytes at displacements with `gap` bytes between them;
   gap 0 and equal lengths take the ncclAllGather path */
static void check_allgatherv(dt_comm *c, int via, int uneven, size_t gap, int inplace, size_t scale)
{
    int n = c->size, me = c->rank, j;
    size_t *rc = (size_t *)dtt_malloc(2 * (size_t)n * sizeof(size_t)), *rd = rc + n, total = 0, i;
    unsigned char *h, *want;
    char *d, *sbuf;
    for (j = 0; j < n; j++) {
        rc[j] = uneven ? (j == 1 ? 0 : scale * (size_t)(j + 1) + 3) : scale;
        rd[j] = total + gap;
        total = rd[j] + rc[j];
    }
    total += gap;
    dtt_ctx("allgatherv %s uneven=%d gap=%zu inplace=%d n=%d", via_name(via), uneven, gap, inplace, n);
    h = (unsigned char *)dtt_malloc(total + rc[me] + 1);
    want = (unsigned char *)dtt_malloc(total + 1);
    memset(want, 0xEE, total);
    for (j = 0; j < n; j++)
        for (i = 0; i < rc[j]; i++) want[rd[j] + i] = pattern(j, 1, i);
    d = (char *)dalloc(total, 0xEE);
    sbuf = inplace ? d + rd[me] : (char *)dalloc(rc[me], 0);
    for (i = 0; i < rc[me]; i++) h[i] = pattern(me, 1, i);
    upload(sbuf, h, rc[me]);
    CHECK_OK(do_allgatherv(c, via, sbuf, rc[me], d, rc, rd));
    download(h, total + rc[me] + 1, d, total);
    for (i = 0; i < total; i++)
        if (h[i] != want[i]) {
            CHECK(h[i] == want[i], "byte %zu: got %d want %d", i, h[i], want[i]);
            break;
        }
    if (!inplace) cudaFree(sbuf);
    cudaFree(d);
    free(h);
    free(want);
    free(rc);
}

/* ------------------------------------------------------------ alltoallv */

/* me -> j: ((me + 2j) % 3) * scale bytes (zero for a third of the pairs),
   the receive pieces 5 bytes apart (the gaps must keep their 0xEE) */
static size_t a2a_len(int from, int to, size_t scale) { return (size_t)((from + 2 * to) % 3) * scale; }

static void check_alltoallv(dt_comm *c, int via, size_t scale)
{
    int n = c->size, me = c->rank, j;
    size_t *v = (size_t *)dtt_malloc(4 * (size_t)n * sizeof(size_t)), *sc = v, *sd = v + n, *rc = v + 2 * n,
           *rd = v + 3 * n;
    size_t stot = 0, rtot = 0, bound = 0, i;
    unsigned char *hs, *hr, *want;
    char *ds, *dr;
    for (j = 0; j < n; j++) {
        sc[j] = a2a_len(me, j, scale);
        sd[j] = stot;
        stot += sc[j];
        rc[j] = a2a_len(j, me, scale);
        rd[j] = rtot + 5;
        rtot = rd[j] + rc[j];
    }
    rtot += 5;
    bound = stot > rtot ? stot : rtot;
    dtt_ctx("alltoallv %s n=%d scale=%zu", via_name(via), n, scale);
    hs = (unsigned char *)dtt_malloc(stot + 1);
    hr = (unsigned char *)dtt_malloc(rtot + 1);
    want = (unsigned char *)dtt_malloc(rtot + 1);
    for (j = 0; j < n; j++)
        for (i = 0; i < sc[j]; i++) hs[sd[j] + i] = pattern(me, j, i);
    memset(want, 0xEE, rtot);
    for (j = 0; j < n; j++)
        for (i = 0; i < rc[j]; i++) want[rd[j] + i] = pattern(j, me, i);
    ds = (char *)dalloc(stot, 0);
    dr = (char *)dalloc(rtot, 0xEE);
    upload(ds, hs, stot);
    CHECK_OK(do_alltoallv(c, via, ds, sc, sd, dr, rc, rd, bound));
    download(hr, rtot + 1, dr, rtot);
    for (i = 0; i < rtot; i++)
        if (hr[i] != want[i]) {
            CHECK(hr[i] == want[i], "byte %zu: got %d want %d", i, hr[i], want[i]);
            break;
        }
    cudaFree(ds);
    cudaFree(dr);
    free(hs);
    free(hr);
    free(want);
    free(v);
}

/* ------------------------------------------------------------ reductions */

/* rank r's element at global index g. Small values, so that every partial
   sum is exact in every dtype (bf16: 8 bits) for n <= 8; U8 spans 100..246
   so that MAX/MIN are checked above 127 and SUM wraps mod 256. */
static double rval(dt_dtype t, int r, size_t g)
{
    if (t == DT_U8) return 100.0 + 20.0 * r + (double)(g % 7);
    return -5.0 + r + (double)(g % 7);
}

static double rwant(dt_dtype t, dt_reduce op, int n, size_t g)
{
    double s = 0, mx = rval(t, 0, g), mn = mx;
    int r;
    for (r = 0; r < n; r++) {
        double x = rval(t, r, g);
        s += x;
        if (x > mx) mx = x;
        if (x < mn) mn = x;
    }
    if (t == DT_U8) s = fmod(s, 256.0);
    return op == DT_SUM ? s : op == DT_MAX ? mx : op == DT_MIN ? mn : s / n;
}

static int rclose(dt_dtype t, dt_reduce op, int n, double got, double want)
{
    double eps = t == DT_F32 ? 1.0 / 8388608.0 : t == DT_F64 ? 2.220446049250313e-16
               : t == DT_F16 ? 1.0 / 1024.0 : 1.0 / 128.0;
    if (op != DT_AVG || !dtt_is_float(t)) return got == want; /* exact */
    /* ncclAvg scales by 1/n and sums: a few roundings of values up to ~12 */
    return fabs(got - want) <= 4.0 * eps * (12.0 + n);
}

static void fill_vals(dt_dtype t, int r, size_t g0, size_t count, void *h)
{
    size_t i;
    for (i = 0; i < count; i++) dtt_store_d(t, h, i, rval(t, r, g0 + i));
}

static void check_allreduce(dt_comm *c, int via, dt_dtype t, dt_reduce op, size_t count, int inplace)
{
    size_t es = dtt_size(t), i;
    unsigned char *h = (unsigned char *)dtt_malloc(count * es + 1);
    char *ds = (char *)dalloc(count * es, 0), *dr = inplace ? ds : (char *)dalloc(count * es, 0);
    dtt_ctx("allreduce %s %s op=%d count=%zu inplace=%d n=%d", via_name(via), dtt_dtname(t), (int)op, count, inplace,
            c->size);
    fill_vals(t, c->rank, 0, count, h);
    upload(ds, h, count * es);
    CHECK_OK(do_allreduce(c, via, ds, dr, count, t, op));
    download(h, count * es + 1, dr, count * es);
    for (i = 0; i < count; i++) {
        double got = dtt_load_d(t, h, i), want = rwant(t, op, c->size, i);
        if (!rclose(t, op, c->size, got, want)) {
            CHECK(0, "element %zu: got %.17g want %.17g", i, got, want);
            break;
        }
    }
    if (!inplace) cudaFree(dr);
    cudaFree(ds);
    free(h);
}

/* counts[j] elements for rank j: equal, or uneven with a zero count and
   ranks below and at the largest count */
static void check_reduce_scatter(dt_comm *c, int via, dt_dtype t, dt_reduce op, int uneven, size_t scale)
{
    int n = c->size, me = c->rank, j;
    size_t es = dtt_size(t), *counts = (size_t *)dtt_malloc((size_t)n * sizeof(size_t)), total = 0, off = 0, i;
    unsigned char *h;
    char *ds, *dr;
    for (j = 0; j < n; j++) {
        counts[j] = !uneven ? scale : j % 3 == 1 ? 0 : scale * (size_t)(j + 2) + (size_t)j;
        if (j < me) off += counts[j];
        total += counts[j];
    }
    dtt_ctx("reduce_scatter %s %s op=%d uneven=%d n=%d", via_name(via), dtt_dtname(t), (int)op, uneven, n);
    h = (unsigned char *)dtt_malloc(total * es + 16); /* the data, then my block's 16 guard bytes */
    ds = (char *)dalloc(total * es, 0);
    dr = (char *)dalloc(counts[me] * es + 16, 0xEE); /* 16 guard bytes must stay 0xEE */
    fill_vals(t, me, 0, total, h);
    upload(ds, h, total * es);
    CHECK_OK(do_reduce_scatter(c, via, ds, dr, counts, t, op));
    download(h, total * es + 16, dr, counts[me] * es + 16);
    for (i = 0; i < counts[me]; i++) {
        double got = dtt_load_d(t, h, i), want = rwant(t, op, n, off + i);
        if (!rclose(t, op, n, got, want)) {
            CHECK(0, "element %zu (global %zu): got %.17g want %.17g", i, off + i, got, want);
            break;
        }
    }
    for (i = 0; i < 16; i++) CHECK(h[counts[me] * es + i] == 0xEE, "guard byte %zu overwritten", i);
    cudaFree(ds);
    cudaFree(dr);
    free(h);
    free(counts);
}

/* I32/I64 sums that overflow: rank r's element g near the top of the range;
   the reduced bits must be the two's-complement (wrapped) sum, the same
   bits the host paths give (tests/test_transport.c) */
static uint64_t wrap_part(dt_dtype t, int r, size_t g)
{
    return t == DT_I64 ? (uint64_t)(INT64_MAX - 3 * (int64_t)g - 1000 * (int64_t)r)
                       : (uint64_t)(uint32_t)(INT32_MAX - 3 * (int32_t)g - 1000 * r);
}

static void check_wrap(dt_comm *c, int via, dt_dtype t, size_t count)
{
    int n = c->size, j;
    size_t es = dtt_size(t), i, *counts = (size_t *)dtt_malloc((size_t)n * sizeof(size_t));
    unsigned char *h = (unsigned char *)dtt_malloc((size_t)n * count * es + 1);
    unsigned char *g = (unsigned char *)dtt_malloc((size_t)n * count * es + 1);
    char *ds = (char *)dalloc((size_t)n * count * es, 0), *dr = (char *)dalloc((size_t)n * count * es, 0);
    dtt_ctx("wrap %s %s count=%zu n=%d", via_name(via), dtt_dtname(t), count, n);
    for (i = 0; i < (size_t)n * count; i++) {
        uint64_t v = wrap_part(t, c->rank, i);
        memcpy(h + i * es, &v, es); /* (little-endian: the low bytes) */
    }
    for (j = 0; j < n; j++) counts[j] = count;
    for (j = 0; j < 2; j++) {
        size_t len = j ? count : (size_t)n * count, at = j ? (size_t)c->rank * count : 0;
        upload(ds, h, (size_t)n * count * es);
        CHECK_OK(j ? do_reduce_scatter(c, via, ds, dr, counts, t, DT_SUM)
                   : do_allreduce(c, via, ds, dr, (size_t)n * count, t, DT_SUM));
        download(g, len * es + 1, dr, len * es);
        for (i = 0; i < len; i++) {
            uint64_t got = 0, want = 0;
            int r;
            for (r = 0; r < n; r++) want += wrap_part(t, r, at + i);
            if (t == DT_I32) want &= 0xffffffffu;
            memcpy(&got, g + i * es, es);
            if (got != want) {
                CHECK(0, "%s element %zu: bits %llx want %llx", j ? "reduce_scatter" : "allreduce", at + i,
                      (unsigned long long)got, (unsigned long long)want);
                break;
            }
        }
    }
    free(g);
    cudaFree(ds);
    cudaFree(dr);
    free(h);
    free(counts);
}

/* ------------------------------------------------------------ broadcast, barrier */

static void check_broadcast(dt_comm *c, int via, size_t bytes)
{
    int root = c->size - 1;
    size_t i;
    unsigned char *h = (unsigned char *)dtt_malloc(bytes + 1);
    char *d = (char *)dalloc(bytes, 0);
    dtt_ctx("broadcast %s bytes=%zu root=%d", via_name(via), bytes, root);
    for (i = 0; i < bytes; i++) h[i] = c->rank == root ? pattern(root, 3, i) : 0;
    upload(d, h, bytes);
    CHECK_OK(do_broadcast(c, via, d, bytes, root));
    download(h, bytes + 1, d, bytes);
    for (i = 0; i < bytes; i++)
        if (h[i] != pattern(root, 3, i)) {
            CHECK(0, "byte %zu: got %d want %d", i, h[i], pattern(root, 3, i));
            break;
        }
    CHECK_OK(do_broadcast(c, via, d, 0, root)); /* zero bytes: nothing */
    cudaFree(d);
    free(h);
}

/* ------------------------------------------------------------ start / wait */

/* me sends 100..249 bytes (depending on me and the peer) to each ring
   neighbour (one message each way per peer; at one rank the neighbour is
   itself) */
static size_t ring_len(int from, int to) { return (size_t)(100 + (10 * from + to) % 150); }

static void check_start_wait(dt_comm *c)
{
    int n = c->size, me = c->rank, right = (me + 1) % n, left = (me - 1 + n) % n, k, m = 0;
    int peers[2];
    dt_message msgs[4];
    char *buf[4];
    void *rq = NULL;
    unsigned char h[256];
    size_t i;
    dtt_ctx("start/wait n=%d", n);
    peers[0] = right;
    peers[1] = left;
    for (k = 0; k < (right == left ? 1 : 2); k++) {
        int p = peers[k];
        msgs[m].bytes = ring_len(me, p); /* send */
        msgs[m].peer = p;
        msgs[m].send = 1;
        buf[m] = (char *)dalloc(msgs[m].bytes, 0);
        for (i = 0; i < msgs[m].bytes; i++) h[i] = pattern(me, p, i);
        upload(buf[m], h, msgs[m].bytes);
        msgs[m].buf = buf[m];
        m++;
        msgs[m].bytes = ring_len(p, me); /* receive */
        msgs[m].peer = p;
        msgs[m].send = 0;
        buf[m] = (char *)dalloc(msgs[m].bytes, 0xEE);
        msgs[m].buf = buf[m];
        m++;
    }
    CHECK_OK(c->be.start(c->be.user, m, msgs, &rq));
    CHECK(rq != NULL, "start returned no request");
    CHECK_OK(c->be.wait(c->be.user, rq)); /* the stream waits for the messages; the host does not */
    CHECK(cudaStreamSynchronize(dt_cuda_stream()) == cudaSuccess, "cudaStreamSynchronize");
    for (k = 0; k < m; k++) {
        if (msgs[k].send) continue;
        CHECK(cudaMemcpy(h, buf[k], msgs[k].bytes, cudaMemcpyDeviceToHost) == cudaSuccess, "download");
        for (i = 0; i < msgs[k].bytes; i++)
            if (h[i] != pattern(msgs[k].peer, me, i)) {
                CHECK(0, "from %d byte %zu: got %d want %d", msgs[k].peer, i, h[i], pattern(msgs[k].peer, me, i));
                break;
            }
    }
    for (k = 0; k < m; k++) cudaFree(buf[k]);
}

/* ------------------------------------------------------------ split */

/* an allreduce (SUM of ranks + 1) on a child checks its size and membership */
static void check_child_sum(dt_comm *c, int via, int color, int n)
{
    int32_t one = dtt_rank + 1, got = 0, want = 0, r;
    int32_t *d = (int32_t *)dalloc(sizeof one, 0);
    for (r = 0; r < n; r++)
        if ((r == n - 1 && n > 2 ? -1 : r % 2) == color) want += r + 1;
    upload(d, &one, sizeof one);
    CHECK_OK(do_allreduce(c, via, d, d, 1, DT_I32, DT_SUM));
    download(&got, sizeof got, d, sizeof got);
    CHECK(got == want, "child allreduce: got %d want %d", (int)got, (int)want);
    cudaFree(d);
}

/* color: rank parity, the last rank left out when n > 2; key -rank: the
   child's ranks in reverse parent order */
static void check_split(dt_comm *c)
{
    int n = c->size, me = c->rank, color = me == n - 1 && n > 2 ? -1 : me % 2, r, want_rank = 0, want_size = 0;
    int nr = -1, ns = -1;
    void *child = NULL;
    dt_comm *wc = NULL;
    for (r = 0; r < n; r++) {
        int cr = r == n - 1 && n > 2 ? -1 : r % 2;
        if (cr != color) continue;
        want_size++;
        if (r > me) want_rank++;
    }
    dtt_ctx("split color=%d n=%d", color, n);
    CHECK_OK(c->be.split(c->be.user, color, -me, &child, &nr, &ns));
    if (color < 0) {
        CHECK(child == NULL, "color < 0 must give no child");
    } else if (child) {
        CHECK(nr == want_rank && ns == want_size, "child rank/size %d/%d, want %d/%d", nr, ns, want_rank, want_size);
        {
            /* wrap the child like the library does, to drive it */
            dt_comm tmp;
            memset(&tmp, 0, sizeof tmp);
            tmp.be = c->be;
            tmp.be.user = child;
            tmp.rank = nr;
            tmp.size = ns;
            tmp.root = &tmp;
            check_child_sum(&tmp, 0, color, n);
        }
        c->be.destroy(child); /* ncclCommDestroy of the child's comm */
    } else {
        CHECK(0, "color %d gave no child", color);
    }
    /* the library's split: a native child that owns its comm */
    if (n > 1) {
        CHECK_OK(dt__comm_split(c, color, -me, &wc));
        CHECK((wc == NULL) == (color < 0), "dt__comm_split child %p for color %d", (void *)wc, color);
        if (wc) {
            CHECK(wc->rank == want_rank && wc->size == want_size, "dt__comm_split rank/size %d/%d", wc->rank, wc->size);
            if (wc->size > 1) check_child_sum(wc, 1, color, n);
            dt_comm_destroy(wc);
        }
    }
}

/* ------------------------------------------------------------ errors */

static void check_errors(dt_comm *c)
{
    int32_t *d = (int32_t *)dalloc(64, 0);
    dt_comm *bad = NULL;
    dtt_ctx("errors");
    CHECK_ST(dt_comm_nccl(NULL, stream, &bad), DT_ERR_ARG);
    CHECK(bad == NULL, "no comm on error");
    CHECK_ERRMSG("dt_comm_nccl");
    CHECK_ST(c->be.allreduce(c->be.user, d, d, 4, DT_I32, DT_AVG), DT_ERR_DTYPE);
    CHECK_ERRMSG("dt_comm_nccl");
    CHECK_ST(c->be.allreduce(c->be.user, d, d, 4, (dt_dtype)99, DT_SUM), DT_ERR_DTYPE);
    /* every rank sends to a rank that does not exist: NCCL refuses, the group
       is closed, the message names the call */
    CHECK_ST(c->be.sendrecv(c->be.user, d, 4, c->size, NULL, 0, -1, 0), DT_ERR_COMM);
    CHECK_ERRMSG("ncclSend");
    /* the communicator still works afterwards */
    CHECK_OK(c->be.barrier(c->be.user));
    cudaFree(d);
}

/* ------------------------------------------------------------ main */

static const dt_dtype all_types[] = { DT_F32, DT_F64, DT_F16, DT_BF16, DT_I32, DT_I64, DT_U8 };

static void run_all(dt_comm *c, int via, size_t big)
{
    int k, o;
    /* per dtype below: 16 KiB and 512 KiB plus one element, where NCCL's
       one-rank AVG kernel splits over 2 and 32 blocks and dropped the
       last element (see dtensor_cuda.h, >>nccl, "one rank") */
    size_t counts[] = { 0, 1, 1000, 0, 0, big };
    check_allgatherv(c, via, 0, 0, 0, 1000);   /* ncclAllGather */
    check_allgatherv(c, via, 0, 0, 1, 1000);   /* ... in place */
    check_allgatherv(c, via, 1, 7, 0, 333);    /* broadcasts, gaps, a zero block */
    check_allgatherv(c, via, 1, 7, 1, 333);
    check_allgatherv(c, via, 0, 3, 0, big);    /* equal counts but gaps: broadcasts */
    check_alltoallv(c, via, 1);
    check_alltoallv(c, via, 4097);
    for (k = 0; k < (int)(sizeof all_types / sizeof all_types[0]); k++) {
        dt_dtype t = all_types[k];
        counts[3] = (16u << 10) / dtt_size(t) + 1;
        counts[4] = (512u << 10) / dtt_size(t) + 1;
        for (o = 0; o < 4; o++) {
            dt_reduce op = (dt_reduce)o;
            size_t q;
            if (op == DT_AVG && !dtt_is_float(t)) continue;
            for (q = 0; q < sizeof counts / sizeof counts[0]; q++) check_allreduce(c, via, t, op, counts[q], 0);
        }
        check_allreduce(c, via, t, DT_SUM, 1000, 1);
        check_reduce_scatter(c, via, t, DT_SUM, 0, 1000);
        check_reduce_scatter(c, via, t, DT_SUM, 1, 257);
        check_reduce_scatter(c, via, t, DT_MAX, 1, 3);
        check_reduce_scatter(c, via, t, DT_MIN, 0, 0); /* every count zero */
    }
    check_wrap(c, via, DT_I32, 257);
    check_wrap(c, via, DT_I64, 257);
    check_reduce_scatter(c, via, DT_F32, DT_AVG, 1, big / 8);
    check_reduce_scatter(c, via, DT_F64, DT_AVG, 0, (512u << 10) / 8 + 1); /* the one-rank split, per block */
    check_broadcast(c, via, 1);
    check_broadcast(c, via, big);
    CHECK_OK(via ? dt_comm_barrier(c) : c->be.barrier(c->be.user));
}

/* 1: this run cannot test anything (no device, or ranks on a node share
   one); agreed over all ranks */
static int must_skip(int ndev, int *dev)
{
    int skip = ndev < 1, any = 0;
    *dev = 0;
#ifndef DTENSOR_NO_MPI
    {
        MPI_Comm local;
        int lrank = 0, lsize = 1;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
        MPI_Comm_rank(local, &lrank);
        MPI_Comm_size(local, &lsize);
        MPI_Comm_free(&local);
        if (!skip && lsize > ndev) { /* NCCL refuses two ranks on one GPU */
            if (dtt_rank == 0)
                printf("test_nccl: %d ranks on a node but %d CUDA device(s), SKIPPED\n", lsize, ndev);
            skip = 1;
        }
        *dev = lrank;
        MPI_Allreduce(&skip, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
#else
    any = skip;
#endif
    if (any && ndev < 1 && dtt_rank == 0) printf("test_nccl: no CUDA device, SKIPPED\n");
    return any;
}

static int init_nccl(int dev, ncclComm_t *nc)
{
    ncclResult_t rc;
#ifndef DTENSOR_NO_MPI
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    if (dtt_rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) fprintf(stderr, "ncclGetUniqueId failed\n");
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (cudaSetDevice(dev) != cudaSuccess) return 0;
    rc = ncclCommInitRank(nc, dtt_np, id, dtt_rank);
#else
    if (cudaSetDevice(dev) != cudaSuccess) return 0;
    rc = ncclCommInitAll(nc, 1, &dev);
#endif
    if (rc != ncclSuccess) fprintf(stderr, "[rank %d] NCCL init failed: %s\n", dtt_rank, ncclGetErrorString(rc));
    return rc == ncclSuccess;
}

#ifdef DTCU_STANDIN
/* The stand-in's streams are asynchronous (tests/standin/cuda_runtime.h):
   an allreduce's result reaches the device in stream order, so a read that
   does not wait for the dt_comm's stream sees the old bytes -- the check
   that a missing cudaStreamSynchronize after a collective fails a test. Here
   the read is cudaMemcpy on the legacy stream, which does not wait for the
   test's non-blocking stream. On a GPU that read is a race: stand-in only. */
static void check_stream_order(dt_comm *c)
{
    int32_t ones[64], h[64], *ds, *dr;
    int i, stale = 1, done = 1;
    if (!dtcu_standin_deferred()) return; /* DTCU_STANDIN_EAGER=1: nothing is ever stale */
    dtt_ctx("stream order (stand-in) n=%d", c->size);
    ds = (int32_t *)dalloc(sizeof ones, 0);
    dr = (int32_t *)dalloc(sizeof ones, 0);
    for (i = 0; i < 64; i++) ones[i] = 1;
    upload(ds, ones, sizeof ones);
    CHECK_OK(c->be.allreduce(c->be.user, ds, dr, 64, DT_I32, DT_SUM));
    CHECK(cudaMemcpy(h, dr, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess, "early download");
    for (i = 0; i < 64; i++) stale &= h[i] == 0;
    CHECK(stale, "a read that did not wait for the stream saw %d (the old 0 expected)", (int)h[0]);
    download(h, sizeof h, dr, sizeof h);
    for (i = 0; i < 64; i++) done &= h[i] == c->size;
    CHECK(done, "after cudaStreamSynchronize: %d (want %d)", (int)h[0], c->size);
    cudaFree(dr);
    cudaFree(ds);
}
#endif

int main(int argc, char **argv)
{
    int ndev = 0, dev = 0, count = 0;
    ncclComm_t nc = NULL;
    dt_comm *c = NULL;
    size_t big;
    dtt_init(&argc, &argv, "nccl");
    if (cudaGetDeviceCount(&ndev) != cudaSuccess) ndev = 0;
    if (must_skip(ndev, &dev)) {
#ifndef DTENSOR_NO_MPI
        MPI_Finalize();
#endif
        return SKIP_EXIT;
    }
    /* odd sizes: no alignment luck. The stand-in moves every byte through
       MPI and its queues on the CPU: its full size checks the same paths
       at a tenth of the bytes (CI time), a GPU's at the full size */
#ifdef DTCU_STANDIN
    big = dtt_quick ? 100003 : 300007;
#else
    big = dtt_quick ? 100003 : 3000017;
#endif
    if (!init_nccl(dev, &nc)) {
        CHECK(0, "NCCL initialisation on device %d", dev);
        return dtt_finish();
    }
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess, "cudaStreamCreate");
    CHECK_OK(dt_comm_nccl(nc, stream, &c));
    if (c) {
        dtt_ctx("dt_comm_nccl");
        CHECK(dt_comm_rank(c) == dtt_rank && dt_comm_size(c) == dtt_np, "rank/size %d/%d", dt_comm_rank(c),
              dt_comm_size(c));
        CHECK(c->be.device == DT_CUDA && c->be.native_half == 1, "device %d native_half %d", c->be.device,
              c->be.native_half);
        CHECK(dt_cuda_stream() == stream, "dt_comm_nccl must make its stream dt_cuda_stream()");
        run_all(c, 0, big);
        if (c->size > 1) run_all(c, 1, big);
        check_start_wait(c);
#ifdef DTCU_STANDIN
        check_stream_order(c);
#endif
        check_split(c);
        check_errors(c);
        dt_comm_destroy(c);
    }
    /* the user's communicator is still the user's */
    dtt_ctx("after dt_comm_destroy");
    CHECK(ncclCommCount(nc, &count) == ncclSuccess && count == dtt_np, "ncclCommCount after dt_comm_destroy");
    ncclCommDestroy(nc);
    cudaStreamDestroy(stream);
    return dtt_finish();
}
