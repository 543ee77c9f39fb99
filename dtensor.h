/* dtensor.h -- distributed tensors for MPI codes, in one C99 header.

   PyTorch DTensor's model (a mesh of ranks, per-mesh-dim placements Shard /
   Replicate / Partial, redistribution between any two placements) for C, C++
   and CUDA simulation codes. BSD-3-Clause, see LICENSE.

   HOW TO USE
   ==========
   In exactly one .c file of your program:

       #define DTENSOR_IMPLEMENTATION
       #include "dtensor.h"

   and include "dtensor.h" without the define everywhere else. Compile with
   mpicc, run with mpiexec. Nothing else: no build-system changes, no other
   files. A serial build (no MPI at all) defines DTENSOR_NO_MPI and uses the
   one-rank backend dt_comm_self(); the code needs no #ifdef of its own.

       dt_comm *comm;  dt_mesh *mesh;  dt_tensor *a, *b = NULL;
       dt_comm_mpi(MPI_COMM_WORLD, &comm);                 // dups the comm
       dt_mesh_desc md = {0};  md.ndim = 1;  md.shape[0] = nranks;
       dt_mesh_create(comm, &md, &mesh);
       dt_tensor_desc td = {0};
       td.dtype = DT_F64; td.ndim = 2; td.shape[0] = 1000; td.shape[1] = 7;
       td.placements[0] = dt_shard(0);                     // rows split
       dt_tensor_zeros(mesh, &td, &a);
       double *rows = (double *)dt_tensor_data(a);         // my rows
       dt_placement rep[1] = { dt_replicate() };
       dt_tensor_redistribute(a, rep, &b);                 // allgather
       ...
       dt_tensor_destroy(b); dt_tensor_destroy(a);
       dt_mesh_destroy(mesh); dt_comm_destroy(comm);

   Every function that can fail returns a dt_status (DT_OK == 0) and leaves
   a message naming the call, the argument and the values in dt_last_error().
   The library never aborts, never exits, never calls MPI_Init/MPI_Finalize,
   never touches MPI_COMM_WORLD by itself and prints nothing unless asked
   (DTENSOR_LOG=plan, dt_tensor_print_sharding).

   OPTIONS (define before including)
   =================================
   DTENSOR_IMPLEMENTATION  compile the implementation into this file
   DTENSOR_NO_MPI          no <mpi.h>, no dt_comm_mpi(); the self and custom
                           backends remain
   DTENSOR_STATIC          make every public function static (DT_API)
   DT_API                  linkage of public functions (default: extern)
   DT_MALLOC(sz), DT_FREE(p)
                           your allocator: define both or neither
   DT_ASSERT(c)            internal invariants only (default: assert)
   DT_MAX_DIMS             max tensor rank (default 8, at least 8)
   DT_MAX_MESH_DIMS        max mesh rank (default 4, at least 4)

   ENVIRONMENT
   ===========
   DTENSOR_LOG=plan        print every redistribution plan (its steps, the mesh
                           dim and placements of each) on mesh rank 0, to stderr
                           (read once, at the first redistribution)

   LIFETIMES
   =========
   comm outlives the meshes made from it; a mesh outlives its tensors. A
   mesh keeps the tensor-sized work buffers redistribution needed (pack,
   unpack, the steps of multi-step plans; at most ~1 local shard each) and
   reuses them, so a time loop allocates and page-faults no data buffer
   after its first step (small per-call bookkeeping, O(ranks), and the F32
   staging of F16/BF16 reductions are still allocated); dt_mesh_destroy
   frees them.
   Use a mesh from one thread at a time (its collectives share communicators,
   which MPI requires anyway); dt_last_error() is per thread. A
   tensor made with DT_BORROW does not own its buffer: the caller frees it
   after dt_tensor_destroy.
*/
#ifndef DTENSOR_H
#define DTENSOR_H

/* >>config ---------------------------------------------------------------- */
#define DTENSOR_VERSION_MAJOR 0
#define DTENSOR_VERSION_MINOR 1
#define DTENSOR_VERSION_PATCH 0
#define DTENSOR_VERSION (DTENSOR_VERSION_MAJOR * 10000 + DTENSOR_VERSION_MINOR * 100 + DTENSOR_VERSION_PATCH)

#ifndef DT_MAX_DIMS
#define DT_MAX_DIMS 8
#endif
#ifndef DT_MAX_MESH_DIMS
#define DT_MAX_MESH_DIMS 4
#endif
#if DT_MAX_DIMS < 8 || DT_MAX_MESH_DIMS < 4
#error "dtensor.h: DT_MAX_DIMS must be >= 8 and DT_MAX_MESH_DIMS >= 4"
#endif

#ifndef DT_API
#ifdef DTENSOR_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define DT_API static __attribute__((unused))
#else
#define DT_API static
#endif
#else
#define DT_API extern
#endif
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#ifndef DTENSOR_NO_MPI
#include <mpi.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* >>types ----------------------------------------------------------------- */

typedef enum dt_status {
    DT_OK = 0,
    DT_ERR_ARG,          /* NULL or out-of-range argument                     */
    DT_ERR_SHAPE,        /* bad or overflowing shape, shapes that don't fit    */
    DT_ERR_PLACEMENT,    /* placements that don't fit the tensor or the mesh   */
    DT_ERR_MESH,         /* bad mesh description, tensors on different meshes  */
    DT_ERR_DTYPE,        /* unknown dtype, or dtypes that don't match          */
    DT_ERR_NOMEM,        /* an allocation failed                               */
    DT_ERR_COMM,         /* the communication backend failed                   */
    DT_ERR_UNSUPPORTED,  /* valid, but not implemented (message says what)     */
    DT_ERR_MISMATCH,     /* ranks disagree (collective checks)                 */
    DT_ERR_IO,           /* file input/output                                  */
    DT_ERR_DEVICE        /* device (CUDA) error                                */
} dt_status;

typedef enum dt_dtype { DT_F32, DT_F64, DT_F16, DT_BF16, DT_I32, DT_I64, DT_U8 } dt_dtype;
#define DT_NUM_DTYPES 7

/* Partial(op): the global value is op over the local values along the mesh
   dim. AVG of integers is the exact mean truncated toward zero, computed
   without overflow (quotients and remainders are reduced separately). */
typedef enum dt_reduce { DT_SUM, DT_AVG, DT_MAX, DT_MIN } dt_reduce;

/* A placement per mesh dim. kind 0 is Replicate, so a zero-initialised
   placement array means "replicated everywhere". */
typedef enum dt_placement_kind { DT_REPLICATE = 0, DT_SHARD = 1, DT_PARTIAL = 2 } dt_placement_kind;
typedef struct dt_placement {
    uint8_t kind;    /* dt_placement_kind                                       */
    int8_t dim;      /* Shard: the tensor dim split; negative counts from the end */
    uint8_t reduce;  /* Partial: the dt_reduce op                               */
} dt_placement;

#define DT_SRC_ALL (-1)  /* dt_tensor_distribute: every rank passes the full data */

/* dt_tensor_from_local flags */
#define DT_BORROW 0u     /* wrap the caller's buffer (default)                   */
#define DT_COPY   1u     /* copy the caller's buffer into a new one              */
#define DT_VERIFY 2u     /* collective: check that every rank passed the same
                            desc and a local buffer of the implied shape;
                            DT_ERR_MISMATCH on every rank otherwise             */

/* Communication accounting (CommDebugMode's counterpart). Counts what the
   library asked the backend to move, in the "logical payload" model:
   allgather(v)/alltoall(v)/broadcast/send-recv count the bytes each rank
   hands to / takes from other ranks; allreduce counts (n-1)*bytes each way;
   reduce-scatter counts the blocks sent to and received from other ranks.
   Self-copies and one-rank groups count nothing. */
typedef struct dt_comm_stats {
    uint64_t calls;       /* backend collective / p2p calls on this rank        */
    uint64_t bytes_sent;  /* payload bytes this rank handed to other ranks      */
    uint64_t bytes_recv;  /* payload bytes this rank received from other ranks  */
} dt_comm_stats;

/* A pluggable collective backend (miniaudio's backend callbacks are the
   model). Only `sendrecv` is required: every other callback may be NULL, or
   return DT_ERR_UNSUPPORTED for a call it does not take, and the library then
   does that collective itself over sendrecv (alltoallv by pairwise exchange,
   allgatherv by a ring, allreduce as reduce-scatter + allgather, broadcast
   linear, barrier by dissemination). A callback that declines must decline
   on every rank of the call alike (decide from what all ranks share: the
   counts of allgatherv/reduce_scatter and reduction sizes are the same on
   every rank, alltoallv's are not); otherwise ranks meet in different
   collectives and hang. Without `split`, sub-communicators
   (mesh, mesh dims) are groups of ranks emulated over the parent's sendrecv.
   Callbacks return DT_OK or an error status (DT_ERR_COMM). Byte counts and
   displacements are in bytes; element counts are in elements of `dtype`.
   The library calls reductions only with DT_SUM/DT_MAX/DT_MIN and dtypes
   F32/F64/I32/I64/U8 (it averages itself and reduces F16/BF16 in F32). */
typedef struct dt_comm_desc {
    const char *name;          /* for messages; NULL = "custom"                  */
    int rank, size;            /* this rank, the number of ranks (required)      */
    void *user;                /* passed to every callback                        */
    /* send `sendbytes` to `dest` while receiving `recvbytes` from `source`;
       dest or source -1 means no send / no receive (required when size > 1) */
    dt_status (*sendrecv)(void *user, const void *sendbuf, size_t sendbytes, int dest,
                          void *recvbuf, size_t recvbytes, int source, int tag);
    /* collective: ranks with equal color >= 0 form a new communicator ordered
       by (key, rank); color < 0 gets *new_user = NULL. Optional. */
    dt_status (*split)(void *user, int color, int key, void **new_user, int *new_rank,
                       int *new_size);
    /* recvbuf gets rank j's block at displs[j]; sendbuf may be recvbuf+displs[rank] */
    dt_status (*allgatherv)(void *user, const void *sendbuf, size_t sendbytes, void *recvbuf,
                            const size_t *recvbytes, const size_t *displs);
    dt_status (*alltoallv)(void *user, const void *sendbuf, const size_t *sendbytes,
                           const size_t *sdispls, void *recvbuf, const size_t *recvbytes,
                           const size_t *rdispls);
    /* sendbuf == recvbuf means in place */
    dt_status (*allreduce)(void *user, const void *sendbuf, void *recvbuf, size_t count,
                           dt_dtype dtype, dt_reduce op);
    /* sendbuf holds sum(counts) elements, rank j's block first-to-last; rank j gets
       its counts[j] reduced elements in recvbuf */
    dt_status (*reduce_scatter)(void *user, const void *sendbuf, void *recvbuf,
                                const size_t *counts, dt_dtype dtype, dt_reduce op);
    dt_status (*broadcast)(void *user, void *buf, size_t bytes, int root);
    dt_status (*barrier)(void *user);
    void (*destroy)(void *user); /* frees `user` (and split children's); optional  */
} dt_comm_desc;

typedef struct dt_comm dt_comm;
typedef struct dt_mesh dt_mesh;
typedef struct dt_tensor dt_tensor;

typedef struct dt_mesh_desc {
    int ndim;                            /* 1..DT_MAX_MESH_DIMS                      */
    int shape[DT_MAX_MESH_DIMS];         /* ranks along each dim; product = ranks used */
    const char *names[DT_MAX_MESH_DIMS]; /* optional, unique, e.g. "dp", "tp"        */
    const int *ranks;                    /* optional: the comm ranks in the mesh,
                                            row-major, product(shape) of them; the
                                            others get empty tensors. NULL: all the
                                            comm's ranks, 0..n-1 (product must be n) */
} dt_mesh_desc;

typedef struct dt_tensor_desc {
    dt_dtype dtype;
    int ndim;                                  /* 0..DT_MAX_DIMS                     */
    int64_t shape[DT_MAX_DIMS];                /* global shape                       */
    dt_placement placements[DT_MAX_MESH_DIMS]; /* one per mesh dim; entries past the
                                                  mesh's ndim must stay zero        */
    int device;                                /* 0 = host; dtensor_cuda.h adds    */
    const int64_t *local_shape;                /* optional, dt_tensor_from_local: the
                                                  shape of the caller's buffer; it
                                                  must equal the shape the placements
                                                  imply (checked on every rank with
                                                  DT_VERIFY, locally without)       */
} dt_tensor_desc;

/* >>api ------------------------------------------------------------------- */

/* status and errors */
DT_API const char *dt_status_string(dt_status s);
DT_API const char *dt_last_error(void);       /* thread-local; "" after success-only runs */
DT_API void dt_clear_error(void);

/* dtypes and placements */
DT_API size_t dt_dtype_size(dt_dtype t);      /* 0 for an unknown dtype */
DT_API const char *dt_dtype_name(dt_dtype t); /* "f32", ...; "?" if unknown */
DT_API dt_placement dt_replicate(void);
DT_API dt_placement dt_shard(int tensor_dim);
DT_API dt_placement dt_partial(dt_reduce op);

/* communicators */
#ifndef DTENSOR_NO_MPI
DT_API dt_status dt_comm_mpi(MPI_Comm comm, dt_comm **out);   /* dups comm, MPI_ERRORS_RETURN */
#endif
DT_API dt_status dt_comm_self(dt_comm **out);                  /* one rank, no MPI          */
DT_API dt_status dt_comm_custom(const dt_comm_desc *desc, dt_comm **out);
DT_API void      dt_comm_destroy(dt_comm *c);
DT_API int       dt_comm_rank(const dt_comm *c);
DT_API int       dt_comm_size(const dt_comm *c);
DT_API dt_status dt_comm_barrier(dt_comm *c);
DT_API void      dt_comm_get_stats(const dt_comm *c, dt_comm_stats *s); /* incl. mesh sub-comms */
DT_API void      dt_comm_reset_stats(dt_comm *c);

/* meshes (all creation calls are collective over the comm / parent mesh) */
DT_API dt_status dt_mesh_create(dt_comm *comm, const dt_mesh_desc *desc, dt_mesh **out);
DT_API void      dt_mesh_destroy(dt_mesh *m);
DT_API int       dt_mesh_coordinate(const dt_mesh *m, int *coord); /* 0: rank not in mesh */
DT_API int       dt_mesh_ndim(const dt_mesh *m);
DT_API int       dt_mesh_dim_size(const dt_mesh *m, int dim);     /* 0 if dim out of range */
DT_API int       dt_mesh_size(const dt_mesh *m);                  /* ranks in the mesh    */
DT_API int       dt_mesh_rank(const dt_mesh *m);  /* row-major index in the mesh; -1 outside */
DT_API int       dt_mesh_dim_index(const dt_mesh *m, const char *name); /* -1 if unknown   */
DT_API const char *dt_mesh_dim_name(const dt_mesh *m, int dim);  /* "" if unnamed       */
/* the sub-mesh of the named dims (in the order given) that contains this rank */
DT_API dt_status dt_mesh_slice(const dt_mesh *m, int n, const char *const *names, dt_mesh **out);
/* the mesh with the named dims (adjacent, in mesh order) merged into one named `name` */
DT_API dt_status dt_mesh_flatten(const dt_mesh *m, int n, const char *const *names,
                                 const char *name, dt_mesh **out);

/* tensors */
DT_API dt_status dt_tensor_empty(dt_mesh *m, const dt_tensor_desc *d, dt_tensor **out);
DT_API dt_status dt_tensor_zeros(dt_mesh *m, const dt_tensor_desc *d, dt_tensor **out);
DT_API dt_status dt_tensor_from_local(dt_mesh *m, const dt_tensor_desc *d, void *local,
                                      unsigned flags, dt_tensor **out);
/* src_rank: the mesh rank whose `full` (global row-major array) is sent, each
   rank getting only its shard; DT_SRC_ALL: every rank passes the same full
   data and takes its part with no communication. Partial placements follow
   Replicate -> Partial (SUM: the value on coordinate 0, zeros elsewhere). */
DT_API dt_status dt_tensor_distribute(dt_mesh *m, const dt_tensor_desc *d, const void *full,
                                      int src_rank, dt_tensor **out);
/* one entry per mesh dim. *out NULL: a new tensor; *out non-NULL with the
   target spec (same mesh, dtype, shape, placements): its buffer is reused */
DT_API dt_status dt_tensor_redistribute(const dt_tensor *t, const dt_placement *placements,
                                        dt_tensor **out);
/* the full global tensor into `full` on every mesh rank (collective; ranks
   outside the mesh return DT_OK and leave `full` untouched) */
DT_API dt_status dt_tensor_gather(const dt_tensor *t, void *full);
DT_API void     *dt_tensor_data(const dt_tensor *t);            /* local shard, row-major */
DT_API const dt_tensor_desc *dt_tensor_get_desc(const dt_tensor *t); /* dims normalised */
DT_API dt_mesh  *dt_tensor_mesh(const dt_tensor *t);
DT_API void      dt_tensor_local_shape(const dt_tensor *t, int64_t *shape);
/* global index of local element 0; an empty part sits at the end of its parent */
DT_API void      dt_tensor_local_offset(const dt_tensor *t, int64_t *offset);
DT_API size_t    dt_tensor_local_numel(const dt_tensor *t);
DT_API void      dt_tensor_destroy(dt_tensor *t);

/* pure layout: the local shape and offset of mesh coordinate `coord` */
DT_API dt_status dt_layout(const dt_mesh *m, const dt_tensor_desc *d, const int *coord,
                           int64_t *local_shape, int64_t *local_offset);

/* debug: a table mesh coordinate -> rank -> global index ranges held. Pure
   (no communication): call it on one rank. */
DT_API dt_status dt_tensor_print_sharding(const dt_tensor *t, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* DTENSOR_H */

/* ======================================================================== */
/*                            IMPLEMENTATION                                */
/* ======================================================================== */
#if defined(DTENSOR_IMPLEMENTATION) && !defined(DTENSOR_IMPLEMENTATION_DONE)
#define DTENSOR_IMPLEMENTATION_DONE

/* >>util ------------------------------------------------------------------
   Allocation, errors, overflow-checked arithmetic, placement names, and the
   element-wise helpers (half conversion, reduction) that the backend's own
   collectives need. */
#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#if defined(DT_MALLOC) && defined(DT_FREE)
#elif !defined(DT_MALLOC) && !defined(DT_FREE)
#define DT_MALLOC(sz) malloc(sz)
#define DT_FREE(p) free(p)
#else
#error "dtensor.h: define both DT_MALLOC and DT_FREE, or neither"
#endif
#ifndef DT_ASSERT
#define DT_ASSERT(c) assert(c)
#endif

#if defined(__cplusplus) && __cplusplus >= 201103L
#define DT__TLS thread_local
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_THREADS__)
#define DT__TLS _Thread_local
#elif defined(_MSC_VER)
#define DT__TLS __declspec(thread)
#else
#define DT__TLS __thread
#endif

#if defined(__GNUC__) || defined(__clang__)
#define DT__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define DT__PRINTF(a, b)
#endif

#ifdef __cplusplus
extern "C" {
#endif

static DT__TLS char dt__errbuf[512];

static dt_status dt__fail(dt_status st, const char *fmt, ...) DT__PRINTF(2, 3);
static dt_status dt__fail(dt_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dt__errbuf, sizeof dt__errbuf, fmt, ap);
    va_end(ap);
    return st;
}

DT_API const char *dt_last_error(void) { return dt__errbuf; }
DT_API void dt_clear_error(void) { dt__errbuf[0] = 0; }

DT_API const char *dt_status_string(dt_status s) {
    switch (s) {
    case DT_OK: return "DT_OK";
    case DT_ERR_ARG: return "DT_ERR_ARG";
    case DT_ERR_SHAPE: return "DT_ERR_SHAPE";
    case DT_ERR_PLACEMENT: return "DT_ERR_PLACEMENT";
    case DT_ERR_MESH: return "DT_ERR_MESH";
    case DT_ERR_DTYPE: return "DT_ERR_DTYPE";
    case DT_ERR_NOMEM: return "DT_ERR_NOMEM";
    case DT_ERR_COMM: return "DT_ERR_COMM";
    case DT_ERR_UNSUPPORTED: return "DT_ERR_UNSUPPORTED";
    case DT_ERR_MISMATCH: return "DT_ERR_MISMATCH";
    case DT_ERR_IO: return "DT_ERR_IO";
    case DT_ERR_DEVICE: return "DT_ERR_DEVICE";
    }
    return "DT_ERR_UNKNOWN";
}

/* malloc(0) may return NULL; a successful empty allocation must not look
   like a failure, so every request is at least one byte. */
static dt_status dt__alloc(const char *fn, size_t bytes, void **out) {
    void *p = DT_MALLOC(bytes ? bytes : 1);
    if (!p) return dt__fail(DT_ERR_NOMEM, "%s: out of memory allocating %zu bytes", fn, bytes);
    *out = p;
    return DT_OK;
}

static int dt__mul_ok(size_t a, size_t b, size_t *r) {
    if (a && b > SIZE_MAX / a) return 0;
    *r = a * b;
    return 1;
}

DT_API size_t dt_dtype_size(dt_dtype t) {
    switch (t) {
    case DT_F32: case DT_I32: return 4;
    case DT_F64: case DT_I64: return 8;
    case DT_F16: case DT_BF16: return 2;
    case DT_U8: return 1;
    }
    return 0;
}

DT_API const char *dt_dtype_name(dt_dtype t) {
    static const char *const names[DT_NUM_DTYPES] = {"f32", "f64", "f16", "bf16", "i32", "i64", "u8"};
    return ((unsigned)t < DT_NUM_DTYPES) ? names[t] : "?";
}

static int dt__dtype_valid(dt_dtype t) { return (unsigned)t < DT_NUM_DTYPES; }
static int dt__dtype_is_half(dt_dtype t) { return t == DT_F16 || t == DT_BF16; }

DT_API dt_placement dt_replicate(void) {
    dt_placement p;
    p.kind = DT_REPLICATE; p.dim = 0; p.reduce = 0;
    return p;
}
DT_API dt_placement dt_shard(int tensor_dim) {
    dt_placement p;
    p.kind = DT_SHARD; p.dim = (int8_t)tensor_dim; p.reduce = 0;
    return p;
}
DT_API dt_placement dt_partial(dt_reduce op) {
    dt_placement p;
    p.kind = DT_PARTIAL; p.dim = 0; p.reduce = (uint8_t)op;
    return p;
}

static const char *dt__reduce_name(int op) {
    static const char *const names[4] = {"sum", "avg", "max", "min"};
    return (op >= 0 && op < 4) ? names[op] : "?";
}

/* "S(0)", "R", "P(sum)" into buf; returns buf */
static char *dt__placement_str(dt_placement p, char *buf, size_t n) {
    if (p.kind == DT_SHARD) snprintf(buf, n, "S(%d)", (int)p.dim);
    else if (p.kind == DT_PARTIAL) snprintf(buf, n, "P(%s)", dt__reduce_name(p.reduce));
    else if (p.kind == DT_REPLICATE) snprintf(buf, n, "R");
    else snprintf(buf, n, "?(kind %d)", (int)p.kind);
    return buf;
}

static char *dt__placements_str(const dt_placement *p, int n, char *buf, size_t cap) {
    size_t len = 0;
    int i;
    buf[0] = 0;
    len += (size_t)snprintf(buf + len, cap - len, "[");
    for (i = 0; i < n && len < cap; i++) {
        char one[24];
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", dt__placement_str(p[i], one, sizeof one));
    }
    if (len < cap) snprintf(buf + len, cap - len, "]");
    return buf;
}

static char *dt__shape_str(const int64_t *s, int n, char *buf, size_t cap) {
    size_t len = 0;
    int i;
    len += (size_t)snprintf(buf, cap, "[");
    for (i = 0; i < n && len < cap; i++) len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "", (long long)s[i]);
    if (len < cap) snprintf(buf + len, cap - len, "]");
    return buf;
}

static int dt__placement_eq(dt_placement a, dt_placement b) {
    return a.kind == b.kind && a.dim == b.dim && a.reduce == b.reduce;
}

/* IEEE half <-> float, round to nearest even. Written out because C99 has no
   half type and the library must not depend on F16C or compiler extensions. */
static uint16_t dt__f32_to_f16(float f) {
    uint32_t x, sign, absx, h, rem;
    memcpy(&x, &f, 4);
    sign = (x >> 16) & 0x8000u;
    absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf, nan (keep it a quiet nan) */
        return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0u));
    if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds past 65504 */
    if (absx < 0x38800000u) {                                     /* half subnormal */
        uint32_t e = absx >> 23, m = (absx & 0x7fffffu) | 0x800000u, shift, half;
        if (absx < 0x33000000u) return (uint16_t)sign;
        shift = 126u - e;
        h = m >> shift;
        rem = m & ((1u << shift) - 1u);
        half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (h & 1u))) h++;
        return (uint16_t)(sign | h);
    }
    h = (absx >> 13) - ((127u - 15u) << 10);
    rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

static float dt__f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
    float f;
    if (e == 0) {
        if (m == 0) x = sign;
        else {
            e = 113;
            while (!(m & 0x400u)) { m <<= 1; e--; }
            x = sign | (e << 23) | ((m & 0x3ffu) << 13);
        }
    } else if (e == 31) x = sign | 0x7f800000u | (m << 13);
    else x = sign | ((e + 112u) << 23) | (m << 13);
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t dt__f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

static float dt__bf16_to_f32(uint16_t h) {
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* F16/BF16 buffers are reduced in F32: widen before, narrow after. */
static void dt__half_to_f32(dt_dtype t, const void *src, float *dst, size_t n) {
    const uint16_t *s = (const uint16_t *)src;
    size_t i;
    if (t == DT_F16) for (i = 0; i < n; i++) dst[i] = dt__f16_to_f32(s[i]);
    else for (i = 0; i < n; i++) dst[i] = dt__bf16_to_f32(s[i]);
}
static void dt__f32_to_half(dt_dtype t, const float *src, void *dst, size_t n) {
    uint16_t *d = (uint16_t *)dst;
    size_t i;
    if (t == DT_F16) for (i = 0; i < n; i++) d[i] = dt__f32_to_f16(src[i]);
    else for (i = 0; i < n; i++) d[i] = dt__f32_to_bf16(src[i]);
}

#define DT__REDUCE_LOOP(T)                                                       \
    do {                                                                         \
        T *a = (T *)acc;                                                         \
        const T *b = (const T *)x;                                               \
        if (op == DT_SUM) for (i = 0; i < n; i++) a[i] = (T)(a[i] + b[i]);       \
        else if (op == DT_MAX) for (i = 0; i < n; i++) a[i] = b[i] > a[i] ? b[i] : a[i]; \
        else for (i = 0; i < n; i++) a[i] = b[i] < a[i] ? b[i] : a[i];           \
    } while (0)

/* acc[i] = op(acc[i], x[i]) for the dtypes the backends reduce */
static void dt__reduce_elems(dt_dtype t, dt_reduce op, void *acc, const void *x, size_t n) {
    size_t i;
    switch (t) {
    case DT_F32: DT__REDUCE_LOOP(float); break;
    case DT_F64: DT__REDUCE_LOOP(double); break;
    case DT_I32: DT__REDUCE_LOOP(int32_t); break;
    case DT_I64: DT__REDUCE_LOOP(int64_t); break;
    case DT_U8: DT__REDUCE_LOOP(uint8_t); break;
    default: DT_ASSERT(0 && "half dtypes are reduced in f32"); break;
    }
}

/* floating Partial(AVG): divide the reduced sum by the number of ranks
   (integers take the exact path below) */
static void dt__divide_elems(dt_dtype t, void *buf, size_t n, int k) {
    size_t i;
    if (t == DT_F64) for (i = 0; i < n; i++) ((double *)buf)[i] /= (double)k;
    else for (i = 0; i < n; i++) ((float *)buf)[i] /= (float)k;
}

/* Integer AVG without overflow: each x is split as q*k + r (C division), the
   q's and the r's are summed separately -- neither sum can overflow -- and
   the mean sum(q) + sum(r)/k is recombined, truncated toward zero. */
static int64_t dt__int_load(dt_dtype t, const void *p, size_t i) {
    if (t == DT_I32) return ((const int32_t *)p)[i];
    if (t == DT_U8) return ((const uint8_t *)p)[i];
    return ((const int64_t *)p)[i];
}

static void dt__avg_split(dt_dtype t, const void *x, size_t n, int k, int64_t *q, int64_t *r) {
    size_t i;
    for (i = 0; i < n; i++) {
        int64_t v = dt__int_load(t, x, i);
        q[i] = v / k;
        r[i] = v % k;
    }
}

static void dt__avg_join(dt_dtype t, const int64_t *q, const int64_t *r, size_t n, int k, void *out) {
    size_t i;
    for (i = 0; i < n; i++) {
        int64_t a = q[i] + r[i] / k, b = r[i] % k;
        if (a > 0 && b < 0) a--;
        else if (a < 0 && b > 0) a++;
        if (t == DT_I32) ((int32_t *)out)[i] = (int32_t)a;
        else if (t == DT_U8) ((uint8_t *)out)[i] = (uint8_t)a;
        else ((int64_t *)out)[i] = a;
    }
}

static int dt__int_avg(dt_dtype t, dt_reduce op) {
    return op == DT_AVG && (t == DT_I32 || t == DT_I64 || t == DT_U8);
}

/* read once: getenv scans the environment, and this sits on every call */
static int dt__log_plans(void) {
    static int on = -1;
    if (on < 0) {
        const char *s = getenv("DTENSOR_LOG");
        on = s && strstr(s, "plan") != NULL;
    }
    return on;
}

/* >>layout ----------------------------------------------------------------
   Where each rank's shard sits in global index space. A shard is a box
   (lo, ext per tensor dim); a local buffer is a row-major array covering a
   box. All data movement is box copies between such arrays. */

typedef struct dt__box {
    int64_t lo[DT_MAX_DIMS];
    int64_t ext[DT_MAX_DIMS];
} dt__box;

typedef struct dt__array { /* a local row-major buffer covering `box` */
    char *data;
    int ndim;
    size_t es;
    dt__box box;
} dt__array;

/* torch.chunk: c = ceil(n/k); part r is [r*c, min(n,(r+1)*c)). An empty part
   is placed at the end of its parent (offset n), so boxes never leave the
   global index space. */
static void dt__chunk(int64_t n, int k, int r, int64_t *off, int64_t *len) {
    int64_t c = (n + k - 1) / k, lo = (int64_t)r * c, hi = lo + c;
    if (lo > n) lo = n;
    if (hi > n) hi = n;
    *off = lo;
    *len = hi - lo;
}

/* The box of mesh coordinate `coord`: mesh dims split in mesh-dim order, so a
   tensor dim sharded by several mesh dims is split by the first, then that
   part by the next, offsets accumulating. */
static void dt__layout_box(int ndim, const int64_t *gshape, int mndim, const int *mshape,
                           const int *coord, const dt_placement *pl, dt__box *b) {
    int d, i;
    for (d = 0; d < ndim; d++) { b->lo[d] = 0; b->ext[d] = gshape[d]; }
    for (i = 0; i < mndim; i++) {
        if (pl[i].kind == DT_SHARD) {
            int64_t off, len;
            d = pl[i].dim;
            dt__chunk(b->ext[d], mshape[i], coord[i], &off, &len);
            b->lo[d] += off;
            b->ext[d] = len;
        }
    }
}

static size_t dt__box_numel(int ndim, const dt__box *b) {
    size_t n = 1;
    int d;
    for (d = 0; d < ndim; d++) n *= (size_t)b->ext[d];
    return n;
}

static size_t dt__box_intersect(int ndim, const dt__box *a, const dt__box *b, dt__box *out) {
    int d;
    size_t n = 1;
    for (d = 0; d < ndim; d++) {
        int64_t lo = a->lo[d] > b->lo[d] ? a->lo[d] : b->lo[d];
        int64_t ha = a->lo[d] + a->ext[d], hb = b->lo[d] + b->ext[d];
        int64_t hi = ha < hb ? ha : hb;
        out->lo[d] = lo;
        out->ext[d] = hi > lo ? hi - lo : 0;
        n *= (size_t)out->ext[d];
    }
    return n;
}

static void dt__box_empty(int ndim, dt__box *b) {
    int d;
    for (d = 0; d < ndim; d++) { b->lo[d] = 0; b->ext[d] = 0; }
}

/* byte stride of each dim of an array */
static void dt__array_strides(const dt__array *a, size_t *stride) {
    int d;
    size_t s = a->es;
    for (d = a->ndim - 1; d >= 0; d--) { stride[d] = s; s *= (size_t)a->box.ext[d]; }
}

static size_t dt__array_offset(const dt__array *a, const size_t *stride, const dt__box *p) {
    size_t off = 0;
    int d;
    for (d = 0; d < a->ndim; d++) off += (size_t)(p->lo[d] - a->box.lo[d]) * stride[d];
    return off;
}

/* Is `piece` one contiguous run of `a`? Then it can be sent or received in
   place, with no pack or unpack: every dim after some k is whole and every
   dim before k has extent 1. */
static int dt__piece_contiguous(const dt__array *a, const dt__box *piece, size_t *byte_off) {
    size_t stride[DT_MAX_DIMS];
    int k = a->ndim - 1, d;
    if (dt__box_numel(a->ndim, piece) == 0) { *byte_off = 0; return 1; }
    while (k > 0 && piece->ext[k] == a->box.ext[k]) k--;
    for (d = 0; d < k; d++)
        if (piece->ext[d] != 1) return 0;
    dt__array_strides(a, stride);
    *byte_off = dt__array_offset(a, stride, piece);
    return 1;
}

/* Copy the global box `p` (inside both arrays) from s to d: the innermost
   dims that are whole in p, s and d fold into one memcpy run. */
static void dt__copy_box(const dt__array *s, const dt__array *d, const dt__box *p) {
    size_t ss[DT_MAX_DIMS], ds[DT_MAX_DIMS], run, so, doff;
    int64_t idx[DT_MAX_DIMS];
    int k = s->ndim - 1, j;
    if (dt__box_numel(s->ndim, p) == 0) return;
    if (s->ndim == 0) { memcpy(d->data, s->data, s->es); return; }
    run = (size_t)p->ext[k];
    while (k > 0 && p->ext[k] == s->box.ext[k] && p->ext[k] == d->box.ext[k]) { k--; run *= (size_t)p->ext[k]; }
    run *= s->es;
    dt__array_strides(s, ss);
    dt__array_strides(d, ds);
    so = dt__array_offset(s, ss, p);
    doff = dt__array_offset(d, ds, p);
    for (j = 0; j < k; j++) idx[j] = 0;
    for (;;) {
        memcpy(d->data + doff, s->data + so, run);
        for (j = k - 1; j >= 0; j--) {
            so += ss[j]; doff += ds[j];
            if (++idx[j] < p->ext[j]) break;
            so -= (size_t)p->ext[j] * ss[j]; doff -= (size_t)p->ext[j] * ds[j];
            idx[j] = 0;
        }
        if (j < 0) break;
    }
}

static void dt__pack(const dt__array *a, const dt__box *piece, void *buf) {
    dt__array b;
    b.data = (char *)buf; b.ndim = a->ndim; b.es = a->es; b.box = *piece;
    dt__copy_box(a, &b, piece);
}

static void dt__unpack(const void *buf, const dt__box *piece, dt__array *a) {
    dt__array b;
    b.data = (char *)buf; b.ndim = a->ndim; b.es = a->es; b.box = *piece;
    dt__copy_box(&b, a, piece);
}

/* >>backend ---------------------------------------------------------------
   A dt_comm is a backend vtable (dt_comm_desc) plus a rank and a size. The
   library talks to it only through the dt__comm_* wrappers below, which
   count traffic in the root communicator's stats, short-cut one-rank groups,
   and fall back to collectives built on sendrecv when the backend lacks one
   (or answers DT_ERR_UNSUPPORTED, as the MPI backend does for counts past
   INT_MAX). A sub-communicator of a backend without `split` is a "group": a
   list of the base communicator's ranks, all of whose traffic is sendrecv
   on the base with rank translation. */

#define DT__TAG 0x6474 /* "dt" */

/* The largest count or displacement a backend collective is handed (MPI
   takes ints). An alltoallv whose pieces could be larger is done over
   sendrecv instead. Every rank of the call must choose the same way -- a
   rank in MPI_Alltoallv and another in MPI_Sendrecv hang -- so the choice
   is made from a bound all ranks compute alike (the largest shard), never
   from a rank's own counts. Overridable only for the tests. */
#ifndef DT__COUNT_MAX
#define DT__COUNT_MAX ((size_t)INT_MAX)
#endif

struct dt_comm {
    dt_comm_desc be;          /* callbacks and user data                       */
    char name[32];
    int rank, size;
    int builtin;              /* self/mpi: the backend wrote its own message   */
    dt_comm *base;            /* group: the comm carrying the traffic          */
    int *members;             /* group: base rank of each member               */
    dt_comm *root;            /* the user-made comm: its stats count it all    */
    dt_comm_stats stats;      /* root only                                     */
    int muted;                /* root only: >0 while control traffic runs      */
};

static void dt__count(dt_comm *c, uint64_t sent, uint64_t recv) {
    dt_comm *r = c->root;
    if (r->muted) return;
    r->stats.calls++;
    r->stats.bytes_sent += sent;
    r->stats.bytes_recv += recv;
}

static dt_status dt__backend_result(dt_comm *c, dt_status st, const char *what) {
    if (st == DT_OK || c->builtin) return st;
    return dt__fail(DT_ERR_COMM, "dt_comm: backend '%s' %s returned %s", c->name, what,
                    dt_status_string(st));
}

static int dt__native(const dt_comm *c) { return c->members == NULL; }

/* point-to-point on any comm (group ranks translated); no accounting */
static dt_status dt__sendrecv(dt_comm *c, const void *sb, size_t sn, int dest, void *rb,
                              size_t rn, int src) {
    if (dest < 0 && src < 0) return DT_OK;
    if (dest == c->rank && src == c->rank) { /* only in degenerate rings */
        if (sn) memcpy(rb, sb, sn);
        return DT_OK;
    }
    if (!dt__native(c)) {
        dest = dest >= 0 ? c->members[dest] : -1;
        src = src >= 0 ? c->members[src] : -1;
        c = c->base;
    }
    if (!c->be.sendrecv) return dt__fail(DT_ERR_COMM, "dt_comm: backend '%s' has no sendrecv", c->name);
    return dt__backend_result(c, c->be.sendrecv(c->be.user, sb, sn, dest, rb, rn, src, DT__TAG), "sendrecv");
}

/* pairwise exchange: in round k every rank sends to rank+k and receives from
   rank-k, so each round is a permutation and nobody waits on a busy peer */
static dt_status dt__emu_alltoallv(dt_comm *c, const void *sb, const size_t *sc, const size_t *sd,
                                   void *rb, const size_t *rc, const size_t *rd) {
    int n = c->size, me = c->rank, k;
    if (rc[me]) memcpy((char *)rb + rd[me], (const char *)sb + sd[me], rc[me]);
    for (k = 1; k < n; k++) {
        int dst = (me + k) % n, src = (me - k + n) % n;
        dt_status st = dt__sendrecv(c, sc[dst] ? (const char *)sb + sd[dst] : NULL, sc[dst], sc[dst] ? dst : -1,
                                    rc[src] ? (char *)rb + rd[src] : NULL, rc[src], rc[src] ? src : -1);
        if (st) return st;
    }
    return DT_OK;
}

/* ring: in step k each rank forwards the block it got in step k-1 */
static dt_status dt__emu_allgatherv(dt_comm *c, const void *sb, size_t sn, void *rb,
                                    const size_t *rc, const size_t *rd) {
    int n = c->size, me = c->rank, k, right = (me + 1) % n, left = (me - 1 + n) % n;
    char *r = (char *)rb;
    if (sn && (const char *)sb != r + rd[me]) memcpy(r + rd[me], sb, sn);
    for (k = 0; k < n - 1; k++) {
        int sblk = (me - k + n) % n, rblk = (me - k - 1 + n) % n;
        dt_status st = dt__sendrecv(c, rc[sblk] ? r + rd[sblk] : NULL, rc[sblk], rc[sblk] ? right : -1,
                                    rc[rblk] ? r + rd[rblk] : NULL, rc[rblk], rc[rblk] ? left : -1);
        if (st) return st;
    }
    return DT_OK;
}

/* every rank receives its block from all, then reduces in rank order 0..n-1,
   so the result does not depend on arrival order */
static dt_status dt__emu_reduce_scatter(dt_comm *c, const void *sb, void *rb, const size_t *counts,
                                        dt_dtype t, dt_reduce op) {
    int n = c->size, me = c->rank, j;
    size_t es = dt_dtype_size(t), mine = counts[me] * es, off = 0;
    size_t *v = NULL;
    char *all = NULL;
    dt_status st;
    if ((st = dt__alloc("dt_comm reduce_scatter", 4 * (size_t)n * sizeof(size_t), (void **)&v))) return st;
    if ((st = dt__alloc("dt_comm reduce_scatter", mine * (size_t)n, (void **)&all))) { DT_FREE(v); return st; }
    for (j = 0; j < n; j++) {
        v[j] = counts[j] * es;               /* send counts */
        v[n + j] = off;                      /* send displs */
        v[2 * n + j] = mine;                 /* recv counts */
        v[3 * n + j] = mine * (size_t)j;     /* recv displs */
        off += v[j];
    }
    st = dt__emu_alltoallv(c, sb, v, v + n, all, v + 2 * n, v + 3 * n);
    if (!st) {
        for (j = 1; j < n; j++) dt__reduce_elems(t, op, all, all + mine * (size_t)j, counts[me]);
        if (mine) memcpy(rb, all, mine);
    }
    DT_FREE(all);
    DT_FREE(v);
    return st;
}

static dt_status dt__emu_allreduce(dt_comm *c, const void *sb, void *rb, size_t count, dt_dtype t,
                                   dt_reduce op) {
    int n = c->size, j;
    size_t es = dt_dtype_size(t), chunk = (count + (size_t)n - 1) / (size_t)n;
    size_t *v = NULL;
    char *part = NULL;
    dt_status st;
    if ((st = dt__alloc("dt_comm allreduce", 3 * (size_t)n * sizeof(size_t), (void **)&v))) return st;
    for (j = 0; j < n; j++) {
        size_t lo = chunk * (size_t)j, hi = lo + chunk;
        if (lo > count) lo = count;
        if (hi > count) hi = count;
        v[j] = hi - lo;             /* element counts   */
        v[n + j] = (hi - lo) * es;  /* byte counts      */
        v[2 * n + j] = lo * es;     /* byte displs      */
    }
    if ((st = dt__alloc("dt_comm allreduce", v[c->rank] * es, (void **)&part))) { DT_FREE(v); return st; }
    st = dt__emu_reduce_scatter(c, sb, part, v, t, op);
    if (!st) st = dt__emu_allgatherv(c, part, v[n + c->rank], rb, v + n, v + 2 * n);
    DT_FREE(part);
    DT_FREE(v);
    return st;
}

static dt_status dt__emu_broadcast(dt_comm *c, void *buf, size_t bytes, int root) {
    int r;
    if (c->rank != root) return dt__sendrecv(c, NULL, 0, -1, buf, bytes, root);
    for (r = 0; r < c->size; r++) {
        dt_status st;
        if (r == root) continue;
        if ((st = dt__sendrecv(c, buf, bytes, r, NULL, 0, -1))) return st;
    }
    return DT_OK;
}

/* dissemination: log2(n) rounds of one-byte tokens */
static dt_status dt__emu_barrier(dt_comm *c) {
    int d;
    char out = 1, in = 0;
    for (d = 1; d < c->size; d *= 2) {
        dt_status st = dt__sendrecv(c, &out, 1, (c->rank + d) % c->size, &in, 1,
                                    (c->rank - d + c->size) % c->size);
        if (st) return st;
    }
    return DT_OK;
}

static size_t dt__sum_except(const size_t *v, int n, int skip) {
    size_t s = 0;
    int j;
    for (j = 0; j < n; j++)
        if (j != skip) s += v[j];
    return s;
}

/* bound: the same on every rank, >= every count and displacement of the call */
static dt_status dt__comm_alltoallv(dt_comm *c, const void *sb, const size_t *sc, const size_t *sd,
                                    void *rb, const size_t *rc, const size_t *rd, size_t bound) {
    if (c->size == 1) {
        if (rc[0]) memcpy((char *)rb + rd[0], (const char *)sb + sd[0], rc[0]);
        return DT_OK;
    }
    dt__count(c, dt__sum_except(sc, c->size, c->rank), dt__sum_except(rc, c->size, c->rank));
    if (dt__native(c) && c->be.alltoallv && bound <= DT__COUNT_MAX) {
        dt_status st = c->be.alltoallv(c->be.user, sb, sc, sd, rb, rc, rd);
        if (st != DT_ERR_UNSUPPORTED) return dt__backend_result(c, st, "alltoallv");
    }
    return dt__emu_alltoallv(c, sb, sc, sd, rb, rc, rd);
}

static dt_status dt__comm_allgatherv(dt_comm *c, const void *sb, size_t sn, void *rb,
                                     const size_t *rc, const size_t *rd) {
    if (c->size == 1) {
        if (sn && (const char *)sb != (char *)rb + rd[0]) memcpy((char *)rb + rd[0], sb, sn);
        return DT_OK;
    }
    dt__count(c, sn * (uint64_t)(c->size - 1), dt__sum_except(rc, c->size, c->rank));
    if (dt__native(c) && c->be.allgatherv) {
        dt_status st = c->be.allgatherv(c->be.user, sb, sn, rb, rc, rd);
        if (st != DT_ERR_UNSUPPORTED) return dt__backend_result(c, st, "allgatherv");
    }
    return dt__emu_allgatherv(c, sb, sn, rb, rc, rd);
}

static dt_status dt__comm_allreduce(dt_comm *c, const void *sb, void *rb, size_t count, dt_dtype t,
                                    dt_reduce op) {
    size_t bytes = count * dt_dtype_size(t);
    if (c->size == 1) {
        if (bytes && sb != rb) memcpy(rb, sb, bytes);
        return DT_OK;
    }
    dt__count(c, bytes * (uint64_t)(c->size - 1), bytes * (uint64_t)(c->size - 1));
    if (dt__native(c) && c->be.allreduce) {
        dt_status st = c->be.allreduce(c->be.user, sb, rb, count, t, op);
        if (st != DT_ERR_UNSUPPORTED) return dt__backend_result(c, st, "allreduce");
    }
    return dt__emu_allreduce(c, sb, rb, count, t, op);
}

static dt_status dt__comm_reduce_scatter(dt_comm *c, const void *sb, void *rb, const size_t *counts,
                                         dt_dtype t, dt_reduce op) {
    size_t es = dt_dtype_size(t);
    if (c->size == 1) {
        if (counts[0] && sb != rb) memcpy(rb, sb, counts[0] * es);
        return DT_OK;
    }
    dt__count(c, dt__sum_except(counts, c->size, c->rank) * es,
              counts[c->rank] * es * (uint64_t)(c->size - 1));
    if (dt__native(c) && c->be.reduce_scatter) {
        dt_status st = c->be.reduce_scatter(c->be.user, sb, rb, counts, t, op);
        if (st != DT_ERR_UNSUPPORTED) return dt__backend_result(c, st, "reduce_scatter");
    }
    return dt__emu_reduce_scatter(c, sb, rb, counts, t, op);
}

static dt_status dt__comm_broadcast(dt_comm *c, void *buf, size_t bytes, int root) {
    if (c->size == 1) return DT_OK;
    dt__count(c, c->rank == root ? bytes * (uint64_t)(c->size - 1) : 0, c->rank == root ? 0 : bytes);
    if (dt__native(c) && c->be.broadcast) {
        dt_status st = c->be.broadcast(c->be.user, buf, bytes, root);
        if (st != DT_ERR_UNSUPPORTED) return dt__backend_result(c, st, "broadcast");
    }
    return dt__emu_broadcast(c, buf, bytes, root);
}

static dt_status dt__comm_barrier(dt_comm *c) {
    if (c->size == 1) return DT_OK;
    dt__count(c, 0, 0);
    if (dt__native(c) && c->be.barrier) {
        dt_status st = c->be.barrier(c->be.user);
        if (st != DT_ERR_UNSUPPORTED) return dt__backend_result(c, st, "barrier");
    }
    return dt__emu_barrier(c);
}

/* Control traffic (mesh set-up, DT_VERIFY) is not what a user measures with
   dt_comm_stats, so it runs muted. Each rank contributes `n` int64 words. */
static dt_status dt__comm_allgather_ctl(dt_comm *c, const int64_t *mine, int n, int64_t *all) {
    size_t *v = NULL;
    int j;
    dt_status st;
    if ((st = dt__alloc("dt_comm", 2 * (size_t)c->size * sizeof(size_t), (void **)&v))) return st;
    for (j = 0; j < c->size; j++) {
        v[j] = (size_t)n * sizeof(int64_t);
        v[c->size + j] = (size_t)j * (size_t)n * sizeof(int64_t);
    }
    c->root->muted++;
    st = dt__comm_allgatherv(c, mine, (size_t)n * sizeof(int64_t), all, v, v + c->size);
    c->root->muted--;
    DT_FREE(v);
    return st;
}

static dt_comm *dt__comm_new(const char *fn, dt_status *st) {
    dt_comm *c = NULL;
    if ((*st = dt__alloc(fn, sizeof(dt_comm), (void **)&c)) != DT_OK || !c) return NULL;
    memset(c, 0, sizeof *c);
    c->root = c;
    return c;
}

/* collective over c: ranks with the same color >= 0 form a new comm ordered
   by (key, rank); color < 0 gets NULL */
static dt_status dt__comm_split(dt_comm *c, int color, int key, dt_comm **out) {
    dt_status st;
    dt_comm *n;
    *out = NULL;
    if (c->size == 1 || (dt__native(c) && c->be.split)) {
        void *user = NULL;
        int nr = 0, ns = 1;
        if (c->size == 1) {
            if (color < 0) return DT_OK;
            user = c->be.user; /* a one-rank comm's split is itself: share, don't own */
        } else {
            c->root->muted++;
            st = c->be.split(c->be.user, color, key, &user, &nr, &ns);
            c->root->muted--;
            if (st) return dt__backend_result(c, st, "split");
            if (color < 0) return DT_OK;
        }
        if (!(n = dt__comm_new("dt_comm split", &st))) {
            if (c->size > 1 && c->be.destroy) c->be.destroy(user);
            return st;
        }
        n->be = c->be;
        n->be.user = user;
        if (c->size == 1) n->be.destroy = NULL;
        memcpy(n->name, c->name, sizeof n->name);
        n->rank = nr;
        n->size = ns;
        n->builtin = c->builtin;
        n->root = c->root;
        *out = n;
        return DT_OK;
    } else {
        /* group: learn everyone's (color, key), keep the ranks of my color */
        int64_t mine[2], *all = NULL;
        int j, cnt = 0, me = -1;
        dt_comm *base = dt__native(c) ? c : c->base;
        mine[0] = color;
        mine[1] = key;
        if ((st = dt__alloc("dt_comm split", 2 * (size_t)c->size * sizeof(int64_t), (void **)&all))) return st;
        if ((st = dt__comm_allgather_ctl(c, mine, 2, all))) { DT_FREE(all); return st; }
        if (color < 0) { DT_FREE(all); return DT_OK; }
        if (!(n = dt__comm_new("dt_comm split", &st))) { DT_FREE(all); return st; }
        for (j = 0; j < c->size; j++) cnt += all[2 * j] == color;
        if ((st = dt__alloc("dt_comm split", (size_t)cnt * sizeof(int), (void **)&n->members))) {
            DT_FREE(n); DT_FREE(all); return st;
        }
        cnt = 0;
        for (j = 0; j < c->size; j++) { /* insertion by (key, rank) keeps it stable */
            int pos;
            if (all[2 * j] != color) continue;
            pos = cnt++;
            while (pos > 0 && all[2 * n->members[pos - 1] + 1] > all[2 * j + 1]) {
                n->members[pos] = n->members[pos - 1];
                pos--;
            }
            n->members[pos] = j;
        }
        for (j = 0; j < cnt; j++) {
            if (n->members[j] == c->rank) me = j;
            n->members[j] = dt__native(c) ? n->members[j] : c->members[n->members[j]];
        }
        DT_FREE(all);
        memcpy(n->name, c->name, sizeof n->name);
        n->rank = me;
        n->size = cnt;
        n->builtin = c->builtin;
        n->base = base;
        n->root = c->root;
        *out = n;
        return DT_OK;
    }
}

static void dt__comm_free(dt_comm *c) {
    if (!c) return;
    if (dt__native(c) && c->be.destroy) c->be.destroy(c->be.user);
    DT_FREE(c->members);
    DT_FREE(c);
}

/* the self backend: one rank; every collective is the size-1 short cut */
static dt_status dt__self_sendrecv(void *user, const void *sb, size_t sn, int dest, void *rb, size_t rn,
                                   int src, int tag) {
    (void)user; (void)tag; (void)rn;
    if (dest == 0 && src == 0 && sn) memcpy(rb, sb, sn);
    return (dest > 0 || src > 0) ? dt__fail(DT_ERR_COMM, "dt_comm_self: peer rank %d does not exist",
                                            dest > 0 ? dest : src)
                                 : DT_OK;
}

static dt_status dt__comm_make(const char *fn, const dt_comm_desc *be, int builtin, dt_comm **out) {
    dt_status st;
    dt_comm *c = dt__comm_new(fn, &st);
    if (!c) return st;
    c->be = *be;
    snprintf(c->name, sizeof c->name, "%s", be->name ? be->name : "custom");
    c->rank = be->rank;
    c->size = be->size;
    c->builtin = builtin;
    *out = c;
    return DT_OK;
}

DT_API dt_status dt_comm_self(dt_comm **out) {
    dt_comm_desc d;
    if (!out) return dt__fail(DT_ERR_ARG, "dt_comm_self: out is NULL");
    memset(&d, 0, sizeof d);
    d.name = "self";
    d.rank = 0;
    d.size = 1;
    d.sendrecv = dt__self_sendrecv;
    return dt__comm_make("dt_comm_self", &d, 1, out);
}

DT_API dt_status dt_comm_custom(const dt_comm_desc *desc, dt_comm **out) {
    if (!out) return dt__fail(DT_ERR_ARG, "dt_comm_custom: out is NULL");
    if (!desc) return dt__fail(DT_ERR_ARG, "dt_comm_custom: desc is NULL");
    if (desc->size < 1 || desc->rank < 0 || desc->rank >= desc->size)
        return dt__fail(DT_ERR_ARG, "dt_comm_custom: rank %d / size %d is not a rank of a communicator",
                        desc->rank, desc->size);
    if (desc->size > 1 && !desc->sendrecv)
        return dt__fail(DT_ERR_ARG, "dt_comm_custom: desc->sendrecv is NULL (required when size %d > 1)",
                        desc->size);
    return dt__comm_make("dt_comm_custom", desc, 0, out);
}

DT_API void dt_comm_destroy(dt_comm *c) { dt__comm_free(c); }
DT_API int dt_comm_rank(const dt_comm *c) { return c ? c->rank : -1; }
DT_API int dt_comm_size(const dt_comm *c) { return c ? c->size : 0; }

DT_API dt_status dt_comm_barrier(dt_comm *c) {
    if (!c) return dt__fail(DT_ERR_ARG, "dt_comm_barrier: comm is NULL");
    return dt__comm_barrier(c);
}

DT_API void dt_comm_get_stats(const dt_comm *c, dt_comm_stats *s) {
    if (!s) return;
    if (!c) { memset(s, 0, sizeof *s); return; }
    *s = c->root->stats;
}

DT_API void dt_comm_reset_stats(dt_comm *c) {
    if (c) memset(&c->root->stats, 0, sizeof c->root->stats);
}

#ifndef DTENSOR_NO_MPI
/* the MPI backend: a dup of the user's communicator with MPI_ERRORS_RETURN,
   so an MPI failure comes back as DT_ERR_COMM instead of killing the job */
/* the piece size long point-to-point messages are cut into (overridable so
   that the tests can drive the big-message paths with small tensors) */
#ifndef DT__MPI_PIECE
#define DT__MPI_PIECE ((size_t)1 << 30)
#endif

typedef struct dt__mpi {
    MPI_Comm comm;
} dt__mpi;

static dt_status dt__mpi_check(int rc, const char *what) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (rc == MPI_SUCCESS) return DT_OK;
    msg[0] = 0;
    MPI_Error_string(rc, msg, &len);
    return dt__fail(DT_ERR_COMM, "dt_comm_mpi: %s failed: %s", what, msg);
}

static MPI_Comm dt__mpi_comm(void *user) { return ((dt__mpi *)user)->comm; }

/* messages larger than an int count go in 1 GiB pieces; MPI matches them
   in order per peer, so both sides may run different numbers of rounds */
static dt_status dt__mpi_sendrecv(void *user, const void *sb, size_t sn, int dest, void *rb, size_t rn,
                                  int src, int tag) {
    const size_t piece = DT__MPI_PIECE;
    int first = 1;
    do { /* the first round always runs, so zero-byte messages still match */
        size_t s = sn < piece ? sn : piece, r = rn < piece ? rn : piece;
        int to = dest >= 0 && (first || sn) ? dest : MPI_PROC_NULL;
        int from = src >= 0 && (first || rn) ? src : MPI_PROC_NULL;
        int rc = MPI_Sendrecv(sb, (int)s, MPI_BYTE, to, tag, rb, (int)r, MPI_BYTE, from, tag,
                              dt__mpi_comm(user), MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return dt__mpi_check(rc, "MPI_Sendrecv");
        if (s) { sb = (const char *)sb + s; sn -= s; }
        if (r) { rb = (char *)rb + r; rn -= r; }
        first = 0;
    } while (sn || rn);
    return DT_OK;
}

static int dt__fits_int(const size_t *v, int n) {
    int j;
    for (j = 0; j < n; j++)
        if (v[j] > DT__COUNT_MAX) return 0;
    return 1;
}

/* counts all equal and displacements j*count: the plain collective applies */
static int dt__uniform(const size_t *cnt, const size_t *displ, int n) {
    int j;
    for (j = 0; j < n; j++)
        if (cnt[j] != cnt[0] || (displ && displ[j] != cnt[0] * (size_t)j)) return 0;
    return 1;
}

static dt_status dt__mpi_to_ints(const size_t *a, const size_t *b, int n, int **out) {
    int j, *v = NULL;
    dt_status st = dt__alloc("dt_comm_mpi", 2 * (size_t)n * sizeof(int), (void **)&v);
    if (st) return st;
    for (j = 0; j < n; j++) { v[j] = (int)a[j]; v[n + j] = b ? (int)b[j] : 0; }
    *out = v;
    return DT_OK;
}

static dt_status dt__mpi_allgatherv(void *user, const void *sb, size_t sn, void *rb, const size_t *rc,
                                    const size_t *rd) {
    MPI_Comm comm = dt__mpi_comm(user);
    int n, rcode, *v = NULL;
    const void *send;
    dt_status st;
    MPI_Comm_size(comm, &n);
    if (!dt__fits_int(rc, n) || !dt__fits_int(rd, n)) return DT_ERR_UNSUPPORTED;
    send = sb; /* never MPI_IN_PLACE: that must be chosen on all ranks alike */
    if (dt__uniform(rc, rd, n)) /* rc, rd are the same on every rank */
        return dt__mpi_check(MPI_Allgather(send, (int)sn, MPI_BYTE, rb, (int)rc[0], MPI_BYTE, comm), "MPI_Allgather");
    if ((st = dt__mpi_to_ints(rc, rd, n, &v))) return st;
    rcode = MPI_Allgatherv(send, (int)sn, MPI_BYTE, rb, v, v + n, MPI_BYTE, comm);
    DT_FREE(v);
    return dt__mpi_check(rcode, "MPI_Allgatherv");
}

static dt_status dt__mpi_alltoallv(void *user, const void *sb, const size_t *sc, const size_t *sd, void *rb,
                                   const size_t *rc, const size_t *rd) {
    MPI_Comm comm = dt__mpi_comm(user);
    int n, rcode, *s = NULL, *r = NULL;
    dt_status st;
    MPI_Comm_size(comm, &n);
    /* cannot happen: the library sends larger alltoallvs over sendrecv, on
       all ranks alike (DT__COUNT_MAX); a per-rank decline here would hang */
    if (!dt__fits_int(sc, n) || !dt__fits_int(sd, n) || !dt__fits_int(rc, n) || !dt__fits_int(rd, n))
        return dt__fail(DT_ERR_COMM, "dt_comm_mpi: alltoallv counts exceed the int range");
    /* no MPI_Alltoall shortcut: counts differ per rank, so "uniform" would be
       a per-rank decision and ranks could enter different collectives */
    if ((st = dt__mpi_to_ints(sc, sd, n, &s))) return st;
    if ((st = dt__mpi_to_ints(rc, rd, n, &r))) { DT_FREE(s); return st; }
    rcode = MPI_Alltoallv(sb, s, s + n, MPI_BYTE, rb, r, r + n, MPI_BYTE, comm);
    DT_FREE(s);
    DT_FREE(r);
    return dt__mpi_check(rcode, "MPI_Alltoallv");
}

static int dt__mpi_type(dt_dtype t, MPI_Datatype *out) {
    switch (t) {
    case DT_F32: *out = MPI_FLOAT; return 1;
    case DT_F64: *out = MPI_DOUBLE; return 1;
    case DT_I32: *out = MPI_INT32_T; return 1;
    case DT_I64: *out = MPI_INT64_T; return 1;
    case DT_U8: *out = MPI_UINT8_T; return 1;
    default: return 0;
    }
}

static MPI_Op dt__mpi_op(dt_reduce op) { return op == DT_MAX ? MPI_MAX : op == DT_MIN ? MPI_MIN : MPI_SUM; }

static dt_status dt__mpi_allreduce(void *user, const void *sb, void *rb, size_t count, dt_dtype t, dt_reduce op) {
    MPI_Datatype ty;
    size_t es = dt_dtype_size(t), done = 0;
    if (!dt__mpi_type(t, &ty) || op == DT_AVG) return DT_ERR_UNSUPPORTED;
    while (done < count) { /* int counts: large arrays in pieces */
        size_t k = count - done < DT__COUNT_MAX ? count - done : DT__COUNT_MAX;
        const void *s = sb == rb ? MPI_IN_PLACE : (const void *)((const char *)sb + done * es);
        int rc = MPI_Allreduce(s, (char *)rb + done * es, (int)k, ty, dt__mpi_op(op), dt__mpi_comm(user));
        if (rc != MPI_SUCCESS) return dt__mpi_check(rc, "MPI_Allreduce");
        done += k;
    }
    return DT_OK;
}

static dt_status dt__mpi_reduce_scatter(void *user, const void *sb, void *rb, const size_t *counts, dt_dtype t,
                                        dt_reduce op) {
    MPI_Comm comm = dt__mpi_comm(user);
    MPI_Datatype ty;
    int n, rcode, *v = NULL;
    dt_status st;
    MPI_Comm_size(comm, &n);
    if (!dt__mpi_type(t, &ty) || op == DT_AVG || !dt__fits_int(counts, n)) return DT_ERR_UNSUPPORTED;
    if (dt__uniform(counts, NULL, n))
        return dt__mpi_check(MPI_Reduce_scatter_block(sb, rb, (int)counts[0], ty, dt__mpi_op(op), comm),
                             "MPI_Reduce_scatter_block");
    if ((st = dt__mpi_to_ints(counts, NULL, n, &v))) return st;
    rcode = MPI_Reduce_scatter(sb, rb, v, ty, dt__mpi_op(op), comm);
    DT_FREE(v);
    return dt__mpi_check(rcode, "MPI_Reduce_scatter");
}

static dt_status dt__mpi_broadcast(void *user, void *buf, size_t bytes, int root) {
    size_t done = 0;
    while (done < bytes) {
        size_t k = bytes - done < DT__COUNT_MAX ? bytes - done : DT__COUNT_MAX;
        int rc = MPI_Bcast((char *)buf + done, (int)k, MPI_BYTE, root, dt__mpi_comm(user));
        if (rc != MPI_SUCCESS) return dt__mpi_check(rc, "MPI_Bcast");
        done += k;
    }
    return DT_OK;
}

static dt_status dt__mpi_barrier(void *user) { return dt__mpi_check(MPI_Barrier(dt__mpi_comm(user)), "MPI_Barrier"); }

static dt_status dt__mpi_wrap(MPI_Comm comm, void **out) {
    dt__mpi *m = NULL;
    dt_status st = dt__alloc("dt_comm_mpi", sizeof *m, (void **)&m);
    if (st) return st;
    m->comm = comm;
    *out = m;
    return DT_OK;
}

static dt_status dt__mpi_split(void *user, int color, int key, void **new_user, int *new_rank, int *new_size) {
    MPI_Comm nc;
    dt_status st;
    int rc = MPI_Comm_split(dt__mpi_comm(user), color < 0 ? MPI_UNDEFINED : color, key, &nc);
    *new_user = NULL;
    if (rc != MPI_SUCCESS) return dt__mpi_check(rc, "MPI_Comm_split");
    if (nc == MPI_COMM_NULL) return DT_OK;
    MPI_Comm_set_errhandler(nc, MPI_ERRORS_RETURN);
    MPI_Comm_rank(nc, new_rank);
    MPI_Comm_size(nc, new_size);
    if ((st = dt__mpi_wrap(nc, new_user))) MPI_Comm_free(&nc);
    return st;
}

static void dt__mpi_destroy(void *user) {
    int fin = 0;
    dt__mpi *m = (dt__mpi *)user;
    if (!m) return;
    MPI_Finalized(&fin);
    if (!fin) MPI_Comm_free(&m->comm); /* after MPI_Finalize there is nothing left to free */
    DT_FREE(m);
}

DT_API dt_status dt_comm_mpi(MPI_Comm comm, dt_comm **out) {
    int init = 0, fin = 0, rc;
    MPI_Comm dup;
    dt_comm_desc d;
    dt_status st;
    void *user = NULL;
    if (!out) return dt__fail(DT_ERR_ARG, "dt_comm_mpi: out is NULL");
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin) return dt__fail(DT_ERR_COMM, "dt_comm_mpi: MPI is %s", fin ? "finalized" : "not initialized");
    if (comm == MPI_COMM_NULL) return dt__fail(DT_ERR_ARG, "dt_comm_mpi: comm is MPI_COMM_NULL");
    if ((rc = MPI_Comm_dup(comm, &dup)) != MPI_SUCCESS) return dt__mpi_check(rc, "MPI_Comm_dup");
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    memset(&d, 0, sizeof d);
    d.name = "mpi";
    MPI_Comm_rank(dup, &d.rank);
    MPI_Comm_size(dup, &d.size);
    if ((st = dt__mpi_wrap(dup, &user))) { MPI_Comm_free(&dup); return st; }
    d.user = user;
    d.sendrecv = dt__mpi_sendrecv;
    d.split = dt__mpi_split;
    d.allgatherv = dt__mpi_allgatherv;
    d.alltoallv = dt__mpi_alltoallv;
    d.allreduce = dt__mpi_allreduce;
    d.reduce_scatter = dt__mpi_reduce_scatter;
    d.broadcast = dt__mpi_broadcast;
    d.barrier = dt__mpi_barrier;
    d.destroy = dt__mpi_destroy;
    if ((st = dt__comm_make("dt_comm_mpi", &d, 1, out))) dt__mpi_destroy(user);
    return st;
}
#endif /* DTENSOR_NO_MPI */

/* >>mesh ------------------------------------------------------------------
   A mesh is an N-D arrangement of some of a comm's ranks. Its members get a
   communicator of their own (mesh rank order) and one per mesh dim (the
   ranks that differ only in that coordinate); non-members get none and take
   part in nothing after creation. */

#define DT__NAME_MAX 32
enum { DT__SCRATCH_SEND, DT__SCRATCH_RECV, DT__SCRATCH_STEP0, DT__SCRATCH_STEP1, DT__SCRATCH_SLOTS };

struct dt_mesh {
    dt_comm *root;                         /* the user's comm (stats)            */
    int ndim;
    int shape[DT_MAX_MESH_DIMS];
    char names[DT_MAX_MESH_DIMS][DT__NAME_MAX];
    int size;                              /* ranks in the mesh                  */
    int *ranks;                            /* root-comm rank of each mesh rank   */
    int rank;                              /* my mesh rank, -1 outside           */
    int coord[DT_MAX_MESH_DIMS];
    dt_comm *comm;                         /* members, in mesh-rank order        */
    dt_comm *dim[DT_MAX_MESH_DIMS];        /* members along each mesh dim        */
    void *scratch[DT__SCRATCH_SLOTS];      /* grow-only work buffers, reused so   */
    size_t scratch_cap[DT__SCRATCH_SLOTS]; /* that a time loop allocates (and page-
                                              faults) nothing after its first step */
};

/* slot `k`'s buffer of at least `bytes` (contents undefined) */
static dt_status dt__scratch(dt_mesh *m, int k, size_t bytes, void **out) {
    if (m->scratch_cap[k] < bytes || !m->scratch[k]) {
        void *p = NULL;
        dt_status st = dt__alloc("dt_tensor_redistribute", bytes, &p);
        if (st) return st;
        DT_FREE(m->scratch[k]);
        m->scratch[k] = p;
        m->scratch_cap[k] = bytes;
    }
    *out = m->scratch[k];
    return DT_OK;
}

static void dt__mesh_coord_of(const dt_mesh *m, int r, int *coord) {
    int i;
    for (i = m->ndim - 1; i >= 0; i--) { coord[i] = r % m->shape[i]; r /= m->shape[i]; }
}

static int dt__mesh_rank_of(const dt_mesh *m, const int *coord) {
    int i, r = 0;
    for (i = 0; i < m->ndim; i++) r = r * m->shape[i] + coord[i];
    return r;
}

static void dt__mesh_free(dt_mesh *m) {
    int i;
    if (!m) return;
    for (i = 0; i < DT_MAX_MESH_DIMS; i++) dt__comm_free(m->dim[i]);
    for (i = 0; i < DT__SCRATCH_SLOTS; i++) DT_FREE(m->scratch[i]);
    dt__comm_free(m->comm);
    DT_FREE(m->ranks);
    DT_FREE(m);
}

static dt_status dt__mesh_alloc(const char *fn, int ndim, const int *shape, int size, dt_mesh **out) {
    dt_mesh *m = NULL;
    dt_status st = dt__alloc(fn, sizeof *m, (void **)&m);
    if (st || !m) return st ? st : DT_ERR_NOMEM;
    memset(m, 0, sizeof *m);
    m->ndim = ndim;
    memcpy(m->shape, shape, (size_t)ndim * sizeof(int));
    m->size = size;
    m->rank = -1;
    if ((st = dt__alloc(fn, (size_t)size * sizeof(int), (void **)&m->ranks))) { DT_FREE(m); return st; }
    *out = m;
    return DT_OK;
}

/* Collective over `parent`: the members (color >= 0) get the mesh comm, then
   one comm per mesh dim: same coordinates elsewhere, ordered by coordinate. */
static dt_status dt__mesh_build_comms(dt_mesh *m, dt_comm *parent, int color, int key) {
    dt_status st = dt__comm_split(parent, color, key, &m->comm);
    int i;
    if (st || !m->comm) return st;
    m->rank = m->comm->rank;
    dt__mesh_coord_of(m, m->rank, m->coord);
    for (i = 0; i < m->ndim; i++) {
        int c[DT_MAX_MESH_DIMS];
        memcpy(c, m->coord, sizeof c);
        c[i] = 0;
        if ((st = dt__comm_split(m->comm, dt__mesh_rank_of(m, c), m->coord[i], &m->dim[i]))) return st;
    }
    return DT_OK;
}

static dt_status dt__mesh_check_names(const char *fn, int ndim, const char *const *names) {
    int i, j;
    for (i = 0; i < ndim; i++) {
        if (!names[i] || !names[i][0]) continue;
        if (strlen(names[i]) >= DT__NAME_MAX)
            return dt__fail(DT_ERR_MESH, "%s: names[%d] \"%.16s...\" is longer than %d characters", fn, i,
                            names[i], DT__NAME_MAX - 1);
        for (j = 0; j < i; j++)
            if (names[j] && !strcmp(names[i], names[j]))
                return dt__fail(DT_ERR_MESH, "%s: names[%d] and names[%d] are both \"%s\"", fn, j, i, names[i]);
    }
    return DT_OK;
}

static dt_status dt__mesh_check_desc(dt_comm *comm, const dt_mesh_desc *d, int *count) {
    int i, j;
    int64_t prod = 1;
    dt_status st;
    if (d->ndim < 1 || d->ndim > DT_MAX_MESH_DIMS)
        return dt__fail(DT_ERR_MESH, "dt_mesh_create: desc->ndim = %d, must be 1..%d", d->ndim, DT_MAX_MESH_DIMS);
    for (i = 0; i < d->ndim; i++) {
        if (d->shape[i] < 1)
            return dt__fail(DT_ERR_MESH, "dt_mesh_create: desc->shape[%d] = %d, must be >= 1", i, d->shape[i]);
        prod *= d->shape[i];
        if (prod > INT_MAX) return dt__fail(DT_ERR_MESH, "dt_mesh_create: mesh shape product overflows int");
    }
    if ((st = dt__mesh_check_names("dt_mesh_create", d->ndim, d->names))) return st;
    if (!d->ranks && prod != comm->size)
        return dt__fail(DT_ERR_MESH, "dt_mesh_create: mesh shape has %lld ranks but the communicator has %d "
                        "(pass desc->ranks to use a subset)", (long long)prod, comm->size);
    if (d->ranks) {
        if (prod > comm->size)
            return dt__fail(DT_ERR_MESH, "dt_mesh_create: mesh shape has %lld ranks but the communicator has %d",
                            (long long)prod, comm->size);
        for (i = 0; i < (int)prod; i++) {
            if (d->ranks[i] < 0 || d->ranks[i] >= comm->size)
                return dt__fail(DT_ERR_MESH, "dt_mesh_create: desc->ranks[%d] = %d is not a rank of the %d-rank communicator",
                                i, d->ranks[i], comm->size);
            for (j = 0; j < i; j++)
                if (d->ranks[j] == d->ranks[i])
                    return dt__fail(DT_ERR_MESH, "dt_mesh_create: desc->ranks[%d] and [%d] are both %d", j, i, d->ranks[i]);
        }
    }
    *count = (int)prod;
    return DT_OK;
}

/* a fingerprint of what every rank must agree on; FNV-1a */
static uint64_t dt__hash(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ull; }
    return h;
}

static uint64_t dt__mesh_desc_hash(const dt_mesh_desc *d, int count) {
    uint64_t h = 14695981039346656037ull;
    int i;
    h = dt__hash(h, &d->ndim, sizeof d->ndim);
    h = dt__hash(h, d->shape, (size_t)d->ndim * sizeof(int));
    for (i = 0; i < d->ndim; i++) h = dt__hash(h, d->names[i] ? d->names[i] : "", d->names[i] ? strlen(d->names[i]) + 1 : 1);
    if (d->ranks) h = dt__hash(h, d->ranks, (size_t)count * sizeof(int));
    return h;
}

/* Every rank reports (its local status, its desc hash); if any rank failed
   or disagrees, all fail together instead of some hanging in a split. */
static dt_status dt__agree(dt_comm *c, const char *fn, dt_status local, uint64_t hash) {
    int64_t mine[2], *all = NULL;
    int j;
    dt_status st;
    char saved[sizeof dt__errbuf];
    memcpy(saved, dt__errbuf, sizeof saved);
    mine[0] = local;
    mine[1] = (int64_t)hash;
    if ((st = dt__alloc(fn, 2 * (size_t)c->size * sizeof(int64_t), (void **)&all))) return st;
    if ((st = dt__comm_allgather_ctl(c, mine, 2, all))) { DT_FREE(all); return st; }
    memcpy(dt__errbuf, saved, sizeof saved);
    st = local;
    for (j = 0; j < c->size && !st; j++) {
        if (all[2 * j] != DT_OK)
            st = dt__fail(DT_ERR_MISMATCH, "%s: rank %d rejected its arguments (%s)", fn, j,
                          dt_status_string((dt_status)all[2 * j]));
        else if (all[2 * j + 1] != all[1])
            st = dt__fail(DT_ERR_MISMATCH, "%s: rank %d passed different arguments than rank 0", fn, j);
    }
    DT_FREE(all);
    return st;
}

DT_API dt_status dt_mesh_create(dt_comm *comm, const dt_mesh_desc *desc, dt_mesh **out) {
    dt_mesh *m = NULL;
    int count = 0, i, me = -1;
    dt_status st;
    if (!comm) return dt__fail(DT_ERR_ARG, "dt_mesh_create: comm is NULL");
    if (!out) return dt__fail(DT_ERR_ARG, "dt_mesh_create: out is NULL");
    st = desc ? dt__mesh_check_desc(comm, desc, &count) : dt__fail(DT_ERR_ARG, "dt_mesh_create: desc is NULL");
    if ((st = dt__agree(comm, "dt_mesh_create", st, st ? 0 : dt__mesh_desc_hash(desc, count)))) return st;
    if ((st = dt__mesh_alloc("dt_mesh_create", desc->ndim, desc->shape, count, &m))) return st;
    for (i = 0; i < desc->ndim; i++)
        if (desc->names[i]) snprintf(m->names[i], DT__NAME_MAX, "%s", desc->names[i]);
    for (i = 0; i < count; i++) {
        m->ranks[i] = desc->ranks ? desc->ranks[i] : i;
        if (m->ranks[i] == comm->rank) me = i;
    }
    m->root = comm->root;
    if ((st = dt__mesh_build_comms(m, comm, me >= 0 ? 0 : -1, me))) { dt__mesh_free(m); return st; }
    *out = m;
    return DT_OK;
}

DT_API void dt_mesh_destroy(dt_mesh *m) { dt__mesh_free(m); }

DT_API int dt_mesh_coordinate(const dt_mesh *m, int *coord) {
    if (!m || m->rank < 0) return 0;
    if (coord) memcpy(coord, m->coord, (size_t)m->ndim * sizeof(int));
    return 1;
}
DT_API int dt_mesh_ndim(const dt_mesh *m) { return m ? m->ndim : 0; }
static int dt__mesh_has_dim(const dt_mesh *m, int dim) {
    return m && dim >= 0 && dim < m->ndim && dim < DT_MAX_MESH_DIMS;
}
DT_API int dt_mesh_dim_size(const dt_mesh *m, int dim) { return dt__mesh_has_dim(m, dim) ? m->shape[dim] : 0; }
DT_API int dt_mesh_size(const dt_mesh *m) { return m ? m->size : 0; }
DT_API int dt_mesh_rank(const dt_mesh *m) { return m ? m->rank : -1; }
DT_API const char *dt_mesh_dim_name(const dt_mesh *m, int dim) {
    return dt__mesh_has_dim(m, dim) ? m->names[dim] : "";
}
DT_API int dt_mesh_dim_index(const dt_mesh *m, const char *name) {
    int i;
    if (!m || !name) return -1;
    for (i = 0; i < m->ndim; i++)
        if (m->names[i][0] && !strcmp(m->names[i], name)) return i;
    return -1;
}

/* names -> distinct mesh dim indices */
static dt_status dt__mesh_lookup(const char *fn, const dt_mesh *m, int n, const char *const *names, int *idx) {
    int i, j;
    if (!m) return dt__fail(DT_ERR_ARG, "%s: mesh is NULL", fn);
    if (!names) return dt__fail(DT_ERR_ARG, "%s: names is NULL", fn);
    if (n < 1 || n > m->ndim) return dt__fail(DT_ERR_MESH, "%s: n = %d, the mesh has %d dims", fn, n, m->ndim);
    for (i = 0; i < n; i++) {
        if ((idx[i] = dt_mesh_dim_index(m, names[i])) < 0)
            return dt__fail(DT_ERR_MESH, "%s: the mesh has no dim named \"%s\"", fn, names[i] ? names[i] : "(null)");
        for (j = 0; j < i; j++)
            if (idx[j] == idx[i]) return dt__fail(DT_ERR_MESH, "%s: dim \"%s\" named twice", fn, names[i]);
    }
    return DT_OK;
}

DT_API dt_status dt_mesh_slice(const dt_mesh *m, int n, const char *const *names, dt_mesh **out) {
    int idx[DT_MAX_MESH_DIMS], shape[DT_MAX_MESH_DIMS], keep[DT_MAX_MESH_DIMS] = {0};
    int i, r, size = 1, color = 0, key = 0;
    dt_mesh *s = NULL;
    dt_status st;
    if (!out) return dt__fail(DT_ERR_ARG, "dt_mesh_slice: out is NULL");
    if ((st = dt__mesh_lookup("dt_mesh_slice", m, n, names, idx))) return st;
    for (i = 0; i < n; i++) { shape[i] = m->shape[idx[i]]; size *= shape[i]; keep[idx[i]] = 1; }
    if ((st = dt__mesh_alloc("dt_mesh_slice", n, shape, size, &s))) return st;
    s->root = m->root;
    for (i = 0; i < n; i++) memcpy(s->names[i], m->names[idx[i]], DT__NAME_MAX);
    if (m->rank >= 0) {
        /* my slice: my coordinates on the other dims, all of them on the named */
        for (r = 0; r < size; r++) {
            int c[DT_MAX_MESH_DIMS], sc[DT_MAX_MESH_DIMS];
            memcpy(c, m->coord, sizeof c);
            dt__mesh_coord_of(s, r, sc);
            for (i = 0; i < n; i++) c[idx[i]] = sc[i];
            s->ranks[r] = m->ranks[dt__mesh_rank_of(m, c)];
        }
        for (i = 0; i < m->ndim; i++)
            if (!keep[i]) color = color * m->shape[i] + m->coord[i];
        for (i = 0; i < n; i++) key = key * shape[i] + m->coord[idx[i]];
        if ((st = dt__mesh_build_comms(s, m->comm, color, key))) { dt__mesh_free(s); return st; }
    } else {
        for (r = 0; r < size; r++) s->ranks[r] = -1;
    }
    *out = s;
    return DT_OK;
}

DT_API dt_status dt_mesh_flatten(const dt_mesh *m, int n, const char *const *names, const char *name,
                                 dt_mesh **out) {
    int idx[DT_MAX_MESH_DIMS], shape[DT_MAX_MESH_DIMS], i, k = 0, merged = 1;
    dt_mesh *f = NULL;
    dt_status st;
    if (!out) return dt__fail(DT_ERR_ARG, "dt_mesh_flatten: out is NULL");
    if ((st = dt__mesh_lookup("dt_mesh_flatten", m, n, names, idx))) return st;
    for (i = 1; i < n; i++)
        if (idx[i] != idx[0] + i)
            return dt__fail(DT_ERR_MESH, "dt_mesh_flatten: dims to flatten must be adjacent and in mesh order; "
                            "\"%s\" is dim %d, \"%s\" is dim %d", names[i - 1], idx[i - 1], names[i], idx[i]);
    if (name && strlen(name) >= DT__NAME_MAX)
        return dt__fail(DT_ERR_MESH, "dt_mesh_flatten: name is longer than %d characters", DT__NAME_MAX - 1);
    for (i = 0; i < m->ndim; i++) {
        if (i > idx[0] && i < idx[0] + n) continue;
        if (i == idx[0]) {
            int j;
            for (j = 0; j < n; j++) merged *= m->shape[idx[j]];
            shape[k++] = merged;
        } else shape[k++] = m->shape[i];
    }
    /* row-major order is unchanged by merging adjacent dims: same mesh ranks */
    if ((st = dt__mesh_alloc("dt_mesh_flatten", k, shape, m->size, &f))) return st;
    f->root = m->root;
    memcpy(f->ranks, m->ranks, (size_t)m->size * sizeof(int));
    for (i = 0, k = 0; i < m->ndim; i++) {
        if (i > idx[0] && i < idx[0] + n) continue;
        if (i == idx[0]) { if (name) snprintf(f->names[k], DT__NAME_MAX, "%s", name); }
        else memcpy(f->names[k], m->names[i], DT__NAME_MAX);
        k++;
    }
    for (i = 0; i < f->ndim; i++) {
        int j;
        for (j = 0; j < i; j++)
            if (f->names[i][0] && !strcmp(f->names[i], f->names[j])) {
                dt__mesh_free(f);
                return dt__fail(DT_ERR_MESH, "dt_mesh_flatten: name \"%s\" is already a dim of the mesh", name);
            }
    }
    if (m->rank >= 0 && (st = dt__mesh_build_comms(f, m->comm, 0, m->rank))) { dt__mesh_free(f); return st; }
    *out = f;
    return DT_OK;
}

/* >>tensor ----------------------------------------------------------------
   A tensor is a desc (global shape, normalised placements) on a mesh, plus
   this rank's box and buffer. Validation happens here, once, before any
   collective is entered: a call that fails leaves every output untouched. */

struct dt_tensor {
    dt_mesh *mesh;
    dt_tensor_desc desc;  /* shard dims >= 0, unused placements zero, local_shape NULL */
    dt__box box;          /* this rank's part in global coordinates; empty outside the mesh */
    size_t numel, bytes;
    void *data;
    int owns;
};

/* Check placements against the mesh and the tensor rank, writing normalised
   ones (negative shard dims counted from the end, unused fields zero).
   `given` is how many entries the caller's array has. */
static dt_status dt__check_placements(const char *fn, const dt_mesh *m, int ndim, const dt_placement *pl,
                                      int given, dt_placement *norm) {
    int i;
    for (i = 0; i < given; i++) {
        dt_placement p = pl[i];
        char b[24];
        if (i >= m->ndim) {
            if (p.kind || p.dim || p.reduce)
                return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d] = %s but the mesh has %d dim%s", fn, i,
                                dt__placement_str(p, b, sizeof b), m->ndim, m->ndim == 1 ? "" : "s");
            continue;
        }
        if (p.kind == DT_SHARD) {
            int d = p.dim < 0 ? p.dim + ndim : p.dim;
            if (d < 0 || d >= ndim)
                return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d] = Shard(%d) but the tensor has %d dim%s", fn,
                                i, (int)p.dim, ndim, ndim == 1 ? "" : "s");
            norm[i] = dt_shard(d);
        } else if (p.kind == DT_PARTIAL) {
            if (p.reduce > DT_MIN)
                return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d] = Partial with reduce op %d (0..3)", fn, i,
                                (int)p.reduce);
            norm[i] = dt_partial((dt_reduce)p.reduce);
        } else if (p.kind == DT_REPLICATE) {
            norm[i] = dt_replicate();
        } else {
            return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d].kind = %d (0 Replicate, 1 Shard, 2 Partial)", fn,
                            i, (int)p.kind);
        }
    }
    return DT_OK;
}

/* validate a desc and write its normalised copy */
static dt_status dt__check_desc(const char *fn, const dt_mesh *m, const dt_tensor_desc *d, dt_tensor_desc *norm) {
    size_t n, es;
    int i;
    if (!m) return dt__fail(DT_ERR_ARG, "%s: mesh is NULL", fn);
    if (!d) return dt__fail(DT_ERR_ARG, "%s: desc is NULL", fn);
    if (!dt__dtype_valid(d->dtype)) return dt__fail(DT_ERR_DTYPE, "%s: desc->dtype = %d is not a dt_dtype", fn, (int)d->dtype);
    if (d->ndim < 0 || d->ndim > DT_MAX_DIMS)
        return dt__fail(DT_ERR_SHAPE, "%s: desc->ndim = %d, must be 0..%d", fn, d->ndim, DT_MAX_DIMS);
    if (d->device != 0)
        return dt__fail(DT_ERR_DEVICE, "%s: desc->device = %d; dtensor.h alone has host tensors only (device 0)", fn,
                        d->device);
    es = dt_dtype_size(d->dtype);
    n = es;
    for (i = 0; i < d->ndim; i++) {
        if (d->shape[i] < 0)
            return dt__fail(DT_ERR_SHAPE, "%s: desc->shape[%d] = %lld is negative", fn, i, (long long)d->shape[i]);
        if ((uint64_t)d->shape[i] > (uint64_t)SIZE_MAX || !dt__mul_ok(n, (size_t)d->shape[i], &n) ||
            n > (size_t)INT64_MAX)
            return dt__fail(DT_ERR_SHAPE, "%s: desc->shape[0..%d] times %zu-byte %s overflows size_t", fn, i, es,
                            dt_dtype_name(d->dtype));
    }
    memset(norm, 0, sizeof *norm);
    norm->dtype = d->dtype;
    norm->ndim = d->ndim;
    memcpy(norm->shape, d->shape, (size_t)d->ndim * sizeof(int64_t));
    return dt__check_placements(fn, m, d->ndim, d->placements, DT_MAX_MESH_DIMS, norm->placements);
}

static void dt__tensor_box(const dt_mesh *m, const dt_tensor_desc *d, const int *coord, dt__box *b) {
    dt__layout_box(d->ndim, d->shape, m->ndim, m->shape, coord, d->placements, b);
}

/* a tensor around `data` (NULL: allocate, zeroed if `zero`) */
static dt_status dt__tensor_make(const char *fn, dt_mesh *m, const dt_tensor_desc *norm, void *data, int zero,
                                 dt_tensor **out) {
    dt_tensor *t = NULL;
    dt_status st = dt__alloc(fn, sizeof *t, (void **)&t);
    if (st || !t) return st ? st : DT_ERR_NOMEM;
    memset(t, 0, sizeof *t);
    t->mesh = m;
    t->desc = *norm;
    if (m->rank >= 0) {
        dt__tensor_box(m, norm, m->coord, &t->box);
        t->numel = dt__box_numel(norm->ndim, &t->box);
    } else {
        dt__box_empty(norm->ndim, &t->box);
        t->numel = 0;
    }
    t->bytes = t->numel * dt_dtype_size(norm->dtype);
    if (data) {
        t->data = data;
    } else if (t->bytes) {
        if ((st = dt__alloc(fn, t->bytes, &t->data))) { DT_FREE(t); return st; }
        if (zero) memset(t->data, 0, t->bytes);
        t->owns = 1;
    }
    *out = t;
    return DT_OK;
}

static dt_status dt__tensor_create(const char *fn, dt_mesh *m, const dt_tensor_desc *d, int zero, dt_tensor **out) {
    dt_tensor_desc norm;
    dt_status st;
    if (!out) return dt__fail(DT_ERR_ARG, "%s: out is NULL", fn);
    if ((st = dt__check_desc(fn, m, d, &norm))) return st;
    return dt__tensor_make(fn, m, &norm, NULL, zero, out);
}

DT_API dt_status dt_tensor_empty(dt_mesh *m, const dt_tensor_desc *d, dt_tensor **out) {
    return dt__tensor_create("dt_tensor_empty", m, d, 0, out);
}

DT_API dt_status dt_tensor_zeros(dt_mesh *m, const dt_tensor_desc *d, dt_tensor **out) {
    return dt__tensor_create("dt_tensor_zeros", m, d, 1, out);
}

static uint64_t dt__desc_hash(const dt_tensor_desc *d) {
    uint64_t h = 14695981039346656037ull;
    int32_t v[3 + 3 * DT_MAX_MESH_DIMS];
    int i;
    v[0] = (int32_t)d->dtype;
    v[1] = d->ndim;
    v[2] = d->device;
    for (i = 0; i < DT_MAX_MESH_DIMS; i++) {
        v[3 + 3 * i] = d->placements[i].kind;
        v[4 + 3 * i] = d->placements[i].dim;
        v[5 + 3 * i] = d->placements[i].reduce;
    }
    h = dt__hash(h, v, sizeof v);
    return dt__hash(h, d->shape, (size_t)d->ndim * sizeof(int64_t));
}

/* the caller's claimed local shape must be the shape the placements imply */
static dt_status dt__check_local_shape(const dt_mesh *m, const dt_tensor_desc *norm, const int64_t *ls) {
    dt__box b;
    int i;
    char want[160], got[160];
    if (m->rank >= 0) dt__tensor_box(m, norm, m->coord, &b);
    else dt__box_empty(norm->ndim, &b);
    for (i = 0; i < norm->ndim; i++)
        if (ls[i] != b.ext[i])
            return dt__fail(DT_ERR_SHAPE, "dt_tensor_from_local: desc->local_shape = %s but the placements give "
                            "mesh rank %d the shape %s", dt__shape_str(ls, norm->ndim, got, sizeof got), m->rank,
                            dt__shape_str(b.ext, norm->ndim, want, sizeof want));
    return DT_OK;
}

DT_API dt_status dt_tensor_from_local(dt_mesh *m, const dt_tensor_desc *d, void *local, unsigned flags,
                                      dt_tensor **out) {
    const char *fn = "dt_tensor_from_local";
    dt_tensor_desc norm;
    dt_tensor *t = NULL;
    dt_status st;
    if (!out) return dt__fail(DT_ERR_ARG, "%s: out is NULL", fn);
    if (!m) return dt__fail(DT_ERR_ARG, "%s: mesh is NULL", fn);
    st = dt__check_desc(fn, m, d, &norm);
    if (!st && (flags & ~(DT_COPY | DT_VERIFY)))
        st = dt__fail(DT_ERR_ARG, "%s: flags = 0x%x has unknown bits", fn, flags);
    if (!st && d->local_shape) st = dt__check_local_shape(m, &norm, d->local_shape);
    if (!st && !local && m->rank >= 0) {
        dt__box b;
        dt__tensor_box(m, &norm, m->coord, &b);
        if (dt__box_numel(norm.ndim, &b))
            st = dt__fail(DT_ERR_ARG, "%s: local is NULL but mesh rank %d holds %zu elements", fn, m->rank,
                          dt__box_numel(norm.ndim, &b));
    }
    /* DT_VERIFY is collective: every member takes part even after a local
       error, so a bad rank makes all ranks fail instead of the others hanging */
    if ((flags & DT_VERIFY) && m->rank >= 0) {
        dt_status vs = dt__agree(m->comm, fn, st, st ? 0 : dt__desc_hash(&norm));
        if (vs && st) { /* this rank's own error, reported as the mismatch all ranks see */
            char why[sizeof dt__errbuf];
            memcpy(why, dt__errbuf, sizeof why);
            st = dt__fail(DT_ERR_MISMATCH, "%s (DT_VERIFY): this rank's arguments are invalid: %s", fn, why);
        } else {
            st = vs;
        }
    }
    if (st) return st;
    if ((st = dt__tensor_make(fn, m, &norm, (flags & DT_COPY) ? NULL : local, 0, &t))) return st;
    if ((flags & DT_COPY) && t->bytes) memcpy(t->data, local, t->bytes);
    *out = t;
    return DT_OK;
}

DT_API void *dt_tensor_data(const dt_tensor *t) { return t ? t->data : NULL; }
DT_API const dt_tensor_desc *dt_tensor_get_desc(const dt_tensor *t) { return t ? &t->desc : NULL; }
DT_API dt_mesh *dt_tensor_mesh(const dt_tensor *t) { return t ? t->mesh : NULL; }
DT_API size_t dt_tensor_local_numel(const dt_tensor *t) { return t ? t->numel : 0; }
DT_API void dt_tensor_local_shape(const dt_tensor *t, int64_t *shape) {
    if (t && shape) memcpy(shape, t->box.ext, (size_t)t->desc.ndim * sizeof(int64_t));
}
DT_API void dt_tensor_local_offset(const dt_tensor *t, int64_t *offset) {
    if (t && offset) memcpy(offset, t->box.lo, (size_t)t->desc.ndim * sizeof(int64_t));
}

DT_API void dt_tensor_destroy(dt_tensor *t) {
    if (!t) return;
    if (t->owns) DT_FREE(t->data);
    DT_FREE(t);
}

DT_API dt_status dt_layout(const dt_mesh *m, const dt_tensor_desc *d, const int *coord, int64_t *local_shape,
                           int64_t *local_offset) {
    dt_tensor_desc norm;
    dt__box b;
    dt_status st;
    int i;
    if ((st = dt__check_desc("dt_layout", m, d, &norm))) return st;
    if (!coord) return dt__fail(DT_ERR_ARG, "dt_layout: coord is NULL");
    for (i = 0; i < m->ndim; i++)
        if (coord[i] < 0 || coord[i] >= m->shape[i])
            return dt__fail(DT_ERR_ARG, "dt_layout: coord[%d] = %d, the mesh dim has %d ranks", i, coord[i], m->shape[i]);
    dt__tensor_box(m, &norm, coord, &b);
    if (local_shape) memcpy(local_shape, b.ext, (size_t)norm.ndim * sizeof(int64_t));
    if (local_offset) memcpy(local_offset, b.lo, (size_t)norm.ndim * sizeof(int64_t));
    return DT_OK;
}

/* >>redistribute ----------------------------------------------------------
   HOW A REDISTRIBUTION IS PLANNED. The plan is a short list of steps, each
   changing the placement of one mesh dim (or, for the general exchange, of
   all of them at once), chosen from the placements alone so that every rank
   builds the same plan without talking:

   1. Reduce.  Each mesh dim that is Partial and does not stay the same
      Partial is reduced along its mesh-dim communicator: reduce-scatter when
      the target is Shard(d) and no later mesh dim shards d (the result nests
      in mesh-dim order), allreduce otherwise. F16/BF16 are reduced in F32;
      AVG is a SUM followed by a division.
   2. Move.  What is left changes only Replicate/Shard (a Partial that stays
      the same Partial is carried along). In order of preference:
      a. local slices (R -> S, outermost mesh dim first) then allgathers
         (S -> R, innermost first), when every step nests in mesh-dim order;
      b. one all-to-all on one mesh dim (S(i) -> S(j));
      c. otherwise one exchange of box intersections over the whole mesh:
         every rank sends each receiver the part of its box that receiver
         needs, and a replicated piece is sent only by the replica that
         shares the receiver's coordinates on the non-sharded mesh dims.
      Each of a, b, c receives exactly the bytes of the destination box the
      rank did not already hold (the lower bound); c reaches it in a single
      alltoallv round, which is why it is preferred to any chain of steps
      that would move a byte twice.
   3. Re-label.  Replicate -> Partial is local: SUM keeps the value on
      coordinate 0 and zeros elsewhere; AVG/MAX/MIN keep it everywhere.

   Data moves between row-major local buffers. A piece that is one
   contiguous run of its buffer (e.g. Shard(0) blocks) goes to the backend in
   place; only non-contiguous pieces are packed/unpacked. */

enum { DT__SLICE, DT__GATHER, DT__ALLTOALL, DT__EXCHANGE, DT__ALLREDUCE, DT__REDUCE_SCATTER, DT__TO_PARTIAL };

typedef struct dt__step {
    int kind;
    int mdim;                                /* the mesh dim; -1: whole mesh  */
    dt_placement from[DT_MAX_MESH_DIMS];
    dt_placement to[DT_MAX_MESH_DIMS];
} dt__step;

typedef struct dt__plan {
    int n;
    dt__step s[3 * DT_MAX_MESH_DIMS + 2];
} dt__plan;

typedef struct dt__ctx {                     /* the tensor being moved        */
    dt_mesh *m;
    int ndim;
    const int64_t *gshape;
    dt_dtype dtype;
    size_t es;
} dt__ctx;

static int dt__is(dt_placement p, int kind) { return p.kind == kind; }

static int dt__later_shards(const dt_placement *pl, int mndim, int i, int d) {
    int j;
    for (j = i + 1; j < mndim; j++)
        if (pl[j].kind == DT_SHARD && pl[j].dim == d) return 1;
    return 0;
}

static int dt__placements_eq(const dt_placement *a, const dt_placement *b, int n) {
    int i;
    for (i = 0; i < n; i++)
        if (!dt__placement_eq(a[i], b[i])) return 0;
    return 1;
}

/* append a step changing mesh dim i of *cur to `p` (i = -1: all to `to`) */
static void dt__plan_push(dt__plan *plan, int kind, int i, dt_placement *cur, dt_placement p,
                          const dt_placement *to, int mndim) {
    dt__step *s = &plan->s[plan->n++];
    s->kind = kind;
    s->mdim = i;
    memcpy(s->from, cur, (size_t)mndim * sizeof *cur);
    if (i >= 0) cur[i] = p;
    else memcpy(cur, to, (size_t)mndim * sizeof *cur);
    memcpy(s->to, cur, (size_t)mndim * sizeof *cur);
}

static void dt__plan_move(int mndim, const dt_placement *from, const dt_placement *to, dt__plan *plan) {
    dt_placement cur[DT_MAX_MESH_DIMS];
    int i, ok = 1, ndiff = 0, last = -1, save = plan->n;
    memcpy(cur, from, (size_t)mndim * sizeof *cur);
    for (i = 0; i < mndim; i++)
        if (!dt__placement_eq(from[i], to[i])) {
            ndiff++;
            last = i;
            if (!((dt__is(from[i], DT_REPLICATE) && dt__is(to[i], DT_SHARD)) ||
                  (dt__is(from[i], DT_SHARD) && dt__is(to[i], DT_REPLICATE))))
                ok = 0;
        }
    for (i = 0; ok && i < mndim; i++)
        if (dt__is(cur[i], DT_REPLICATE) && dt__is(to[i], DT_SHARD)) {
            if (dt__later_shards(cur, mndim, i, to[i].dim)) ok = 0;
            else dt__plan_push(plan, DT__SLICE, i, cur, to[i], to, mndim);
        }
    for (i = mndim - 1; ok && i >= 0; i--)
        if (dt__is(cur[i], DT_SHARD) && dt__is(to[i], DT_REPLICATE)) {
            if (dt__later_shards(cur, mndim, i, cur[i].dim)) ok = 0;
            else dt__plan_push(plan, DT__GATHER, i, cur, to[i], to, mndim);
        }
    if (ok) return;
    plan->n = save;
    memcpy(cur, from, (size_t)mndim * sizeof *cur);
    if (ndiff == 1 && dt__is(from[last], DT_SHARD) && dt__is(to[last], DT_SHARD) &&
        !dt__later_shards(from, mndim, last, from[last].dim) && !dt__later_shards(from, mndim, last, to[last].dim))
        dt__plan_push(plan, DT__ALLTOALL, last, cur, to[last], to, mndim);
    else
        dt__plan_push(plan, DT__EXCHANGE, -1, cur, to[0], to, mndim);
}

static void dt__plan_build(int mndim, const dt_placement *src, const dt_placement *dst, dt__plan *plan) {
    dt_placement cur[DT_MAX_MESH_DIMS], target[DT_MAX_MESH_DIMS];
    int i;
    plan->n = 0;
    memcpy(cur, src, (size_t)mndim * sizeof *cur);
    for (i = 0; i < mndim; i++) {
        if (!dt__is(cur[i], DT_PARTIAL) || dt__placement_eq(cur[i], dst[i])) continue;
        if (dt__is(dst[i], DT_SHARD) && !dt__later_shards(cur, mndim, i, dst[i].dim))
            dt__plan_push(plan, DT__REDUCE_SCATTER, i, cur, dst[i], dst, mndim);
        else
            dt__plan_push(plan, DT__ALLREDUCE, i, cur, dt_replicate(), dst, mndim);
    }
    for (i = 0; i < mndim; i++)
        target[i] = dt__is(dst[i], DT_PARTIAL) && !dt__placement_eq(cur[i], dst[i]) ? dt_replicate() : dst[i];
    if (!dt__placements_eq(cur, target, mndim)) dt__plan_move(mndim, cur, target, plan);
    memcpy(cur, target, (size_t)mndim * sizeof *cur);
    for (i = 0; i < mndim; i++)
        if (dt__is(dst[i], DT_PARTIAL) && !dt__placement_eq(cur[i], dst[i])) dt__plan_push(plan, DT__TO_PARTIAL, i, cur, dst[i], dst, mndim);
}

static void dt__plan_log(const dt__ctx *x, const dt_placement *src, const dt_placement *dst, const dt__plan *p) {
    static const char *const kinds[] = {"slice (local)", "allgather", "all-to-all", "exchange boxes (alltoallv)",
                                        "allreduce", "reduce-scatter", "to partial (local)"};
    char a[160], b[160], sh[160];
    int k, mnd = x->m->ndim;
    fprintf(stderr, "dtensor plan: %s%s %s -> %s: %d step%s\n", dt_dtype_name(x->dtype),
            dt__shape_str(x->gshape, x->ndim, sh, sizeof sh), dt__placements_str(src, mnd, a, sizeof a),
            dt__placements_str(dst, mnd, b, sizeof b), p->n, p->n == 1 ? "" : "s");
    for (k = 0; k < p->n; k++) {
        const dt__step *s = &p->s[k];
        char dim[48];
        if (s->mdim < 0) snprintf(dim, sizeof dim, "whole mesh");
        else snprintf(dim, sizeof dim, "mesh dim %d%s%s", s->mdim, x->m->names[s->mdim][0] ? " " : "",
                      x->m->names[s->mdim]);
        fprintf(stderr, "  %d. %-26s on %-16s %s -> %s\n", k + 1, kinds[s->kind], dim,
                dt__placements_str(s->from, mnd, a, sizeof a), dt__placements_str(s->to, mnd, b, sizeof b));
    }
}

static void dt__box_at(const dt__ctx *x, const dt_placement *pl, const int *coord, dt__box *b) {
    dt__layout_box(x->ndim, x->gshape, x->m->ndim, x->m->shape, coord, pl, b);
}

static void dt__array_at(const dt__ctx *x, const dt_placement *pl, void *data, dt__array *a) {
    a->data = (char *)data;
    a->ndim = x->ndim;
    a->es = x->es;
    dt__box_at(x, pl, x->m->coord, &a->box);
}

/* The one data-movement engine. Over group g, this rank sends send[j] (a
   box inside `in`) to member j and receives recv[j] (a box inside `out`)
   from it; recv[me] is a local copy. gather: every member sends its whole
   `in`, so one allgatherv carries it (send is unused). Pieces that are
   contiguous in their buffer travel in place; the rest are packed. */
static dt_status dt__exchange(dt_mesh *m, dt_comm *g, const dt__array *in, dt__array *out, const dt__box *send,
                              const dt__box *recv, int gather, size_t bound) {
    int n = g->size, me = g->rank, j, nd = in->ndim, direct_s = 1, direct_r = 1;
    size_t es = in->es, *v = NULL, *sc, *sd, *rc, *rd, off;
    char *sbuf = NULL, *rbuf = NULL;
    dt_status st;
    if ((st = dt__alloc("dt_tensor_redistribute", 4 * (size_t)n * sizeof(size_t), (void **)&v))) return st;
    sc = v; sd = v + n; rc = v + 2 * n; rd = v + 3 * n;
    for (j = 0; j < n; j++) {
        rc[j] = (gather || j != me) ? dt__box_numel(nd, &recv[j]) * es : 0;
        rd[j] = 0;
        if (rc[j] && direct_r && !dt__piece_contiguous(out, &recv[j], &rd[j])) direct_r = 0;
        sc[j] = (!gather && j != me) ? dt__box_numel(nd, &send[j]) * es : 0;
        sd[j] = 0;
        if (sc[j] && direct_s && !dt__piece_contiguous(in, &send[j], &sd[j])) direct_s = 0;
    }
    if (!direct_r) {
        for (j = 0, off = 0; j < n; j++) { rd[j] = off; off += rc[j]; }
        if ((st = dt__scratch(m, DT__SCRATCH_RECV, off, (void **)&rbuf))) goto done;
    }
    if (!direct_s) {
        for (j = 0, off = 0; j < n; j++) { sd[j] = off; off += sc[j]; }
        if ((st = dt__scratch(m, DT__SCRATCH_SEND, off, (void **)&sbuf))) goto done;
        for (j = 0; j < n; j++)
            if (sc[j]) dt__pack(in, &send[j], sbuf + sd[j]);
    }
    if (gather)
        st = dt__comm_allgatherv(g, in->data, dt__box_numel(nd, &in->box) * es, direct_r ? out->data : rbuf, rc, rd);
    else
        st = dt__comm_alltoallv(g, direct_s ? in->data : sbuf, sc, sd, direct_r ? out->data : rbuf, rc, rd, bound);
    if (st) goto done;
    if (!gather) dt__copy_box(in, out, &recv[me]);
    if (!direct_r)
        for (j = 0; j < n; j++)
            if (rc[j]) dt__unpack(rbuf + rd[j], &recv[j], out);
done:
    DT_FREE(v);
    return st;
}

static dt_status dt__boxes(int n, dt__box **send, dt__box **recv) {
    dt__box *b = NULL;
    dt_status st = dt__alloc("dt_tensor_redistribute", 2 * (size_t)n * sizeof(dt__box), (void **)&b);
    if (st || !b) return st ? st : DT_ERR_NOMEM;
    memset(b, 0, 2 * (size_t)n * sizeof(dt__box));
    *send = b;
    *recv = b + n;
    return DT_OK;
}

/* The largest shard a step reads or writes, the same on every rank: with
   torch.chunk sizes, part 0 of every split is the largest, so it is the
   shard at coordinate (0, ..., 0). Counts and displacements stay below it. */
static size_t dt__step_bound(const dt__ctx *x, const dt__step *s) {
    int zero[DT_MAX_MESH_DIMS] = {0};
    dt__box a, b;
    size_t na, nb;
    dt__box_at(x, s->from, zero, &a);
    dt__box_at(x, s->to, zero, &b);
    na = dt__box_numel(x->ndim, &a);
    nb = dt__box_numel(x->ndim, &b);
    return (na > nb ? na : nb) * x->es;
}

/* One mesh dim, S -> R (allgather) or S(i) -> S(j) (all-to-all): member j
   is sent my box's share of its destination box and sends me its box's
   share of mine. For a gather that share is the whole box, as allgather
   needs. */
static dt_status dt__run_along(const dt__ctx *x, const dt__step *s, const dt__array *in, dt__array *out) {
    dt_comm *g = x->m->dim[s->mdim];
    dt__box *send, *recv, b;
    int c[DT_MAX_MESH_DIMS], j;
    dt_status st = dt__boxes(g->size, &send, &recv);
    if (st) return st;
    memcpy(c, x->m->coord, sizeof c);
    for (j = 0; j < g->size; j++) {
        c[s->mdim] = j;
        dt__box_at(x, s->to, c, &b);
        dt__box_intersect(x->ndim, &in->box, &b, &send[j]);
        dt__box_at(x, s->from, c, &b);
        dt__box_intersect(x->ndim, &b, &out->box, &recv[j]);
    }
    st = dt__exchange(x->m, g, in, out, send, recv, s->kind == DT__GATHER, dt__step_bound(x, s));
    DT_FREE(send);
    return st;
}

/* any change at once over the whole mesh; peers are the ranks that agree
   with this one on every mesh dim the source does not shard, so each
   destination piece has exactly one sender */
static dt_status dt__run_exchange(const dt__ctx *x, const dt__step *s, const dt__array *in, dt__array *out) {
    dt_mesh *m = x->m;
    dt__box *send, *recv, b;
    int c[DT_MAX_MESH_DIMS], j, i;
    dt_status st = dt__boxes(m->size, &send, &recv);
    if (st) return st;
    for (j = 0; j < m->size; j++) {
        int peer = 1;
        dt__mesh_coord_of(m, j, c);
        for (i = 0; i < m->ndim; i++)
            if (!dt__is(s->from[i], DT_SHARD) && c[i] != m->coord[i]) peer = 0;
        if (!peer) {
            dt__box_empty(x->ndim, &send[j]);
            dt__box_empty(x->ndim, &recv[j]);
            continue;
        }
        dt__box_at(x, s->to, c, &b);
        dt__box_intersect(x->ndim, &in->box, &b, &send[j]);
        dt__box_at(x, s->from, c, &b);
        dt__box_intersect(x->ndim, &b, &out->box, &recv[j]);
    }
    st = dt__exchange(m, m->comm, in, out, send, recv, 0, dt__step_bound(x, s));
    DT_FREE(send);
    return st;
}

static dt_reduce dt__backend_op(dt_reduce op) { return op == DT_AVG ? DT_SUM : op; }

static dt_status dt__run_allreduce(const dt__ctx *x, const dt__step *s, const dt__array *in, dt__array *out) {
    dt_comm *g = x->m->dim[s->mdim];
    dt_reduce op = (dt_reduce)s->from[s->mdim].reduce;
    size_t n = dt__box_numel(x->ndim, &in->box);
    float *f = NULL;
    dt_status st;
    if (dt__int_avg(x->dtype, op)) {
        int64_t *qr = NULL;
        if ((st = dt__alloc("dt_tensor_redistribute", 2 * n * sizeof(int64_t), (void **)&qr))) return st;
        dt__avg_split(x->dtype, in->data, n, g->size, qr, qr + n);
        st = dt__comm_allreduce(g, qr, qr, 2 * n, DT_I64, DT_SUM);
        if (!st) dt__avg_join(x->dtype, qr, qr + n, n, g->size, out->data);
        DT_FREE(qr);
        return st;
    }
    if (!dt__dtype_is_half(x->dtype)) {
        st = dt__comm_allreduce(g, in->data, out->data, n, x->dtype, dt__backend_op(op));
        if (!st && op == DT_AVG) dt__divide_elems(x->dtype, out->data, n, g->size);
        return st;
    }
    if ((st = dt__alloc("dt_tensor_redistribute", n * sizeof(float), (void **)&f))) return st;
    dt__half_to_f32(x->dtype, in->data, f, n);
    st = dt__comm_allreduce(g, f, f, n, DT_F32, dt__backend_op(op));
    if (!st && op == DT_AVG) dt__divide_elems(DT_F32, f, n, g->size);
    if (!st) dt__f32_to_half(x->dtype, f, out->data, n);
    DT_FREE(f);
    return st;
}

/* P -> S(d) along one mesh dim: the members' destination boxes tile this
   rank's box; they are sent in member order (in place when contiguous) */
static dt_status dt__run_reduce_scatter(const dt__ctx *x, const dt__step *s, const dt__array *in, dt__array *out) {
    dt_comm *g = x->m->dim[s->mdim];
    dt_reduce op = (dt_reduce)s->from[s->mdim].reduce;
    int n = g->size, j, c[DT_MAX_MESH_DIMS], half = dt__dtype_is_half(x->dtype), direct = !half;
    size_t *counts = NULL, total = 0, off, mine;
    dt__box *pieces = NULL, *unused;
    char *sbuf = NULL;
    float *fsend = NULL, *frecv = NULL;
    const void *send;
    dt_status st;
    if ((st = dt__alloc("dt_tensor_redistribute", (size_t)n * sizeof(size_t), (void **)&counts))) return st;
    if ((st = dt__boxes(n, &pieces, &unused))) { DT_FREE(counts); return st; }
    memcpy(c, x->m->coord, sizeof c);
    for (j = 0; j < n; j++) {
        c[s->mdim] = j;
        dt__box_at(x, s->to, c, &pieces[j]);
        counts[j] = dt__box_numel(x->ndim, &pieces[j]);
        if (direct && (!dt__piece_contiguous(in, &pieces[j], &off) || off != total * x->es)) direct = 0;
        total += counts[j];
    }
    mine = counts[g->rank];
    send = in->data;
    if (!direct) {
        if ((st = dt__scratch(x->m, DT__SCRATCH_SEND, total * x->es, (void **)&sbuf))) goto done;
        for (j = 0, off = 0; j < n; j++) { dt__pack(in, &pieces[j], sbuf + off); off += counts[j] * x->es; }
        send = sbuf;
    }
    if (dt__int_avg(x->dtype, op)) { /* each member's block becomes [q..., r...] in i64 */
        int64_t *qs = NULL, *qr = NULL;
        if ((st = dt__alloc("dt_tensor_redistribute", 2 * total * sizeof(int64_t), (void **)&qs))) goto done;
        if ((st = dt__alloc("dt_tensor_redistribute", 2 * mine * sizeof(int64_t), (void **)&qr))) { DT_FREE(qs); goto done; }
        for (j = 0, off = 0; j < n; j++) {
            dt__avg_split(x->dtype, (const char *)send + off * x->es, counts[j], n, qs + 2 * off, qs + 2 * off + counts[j]);
            off += counts[j];
            counts[j] *= 2;
        }
        st = dt__comm_reduce_scatter(g, qs, qr, counts, DT_I64, DT_SUM);
        if (!st) dt__avg_join(x->dtype, qr, qr + mine, mine, n, out->data);
        DT_FREE(qr);
        DT_FREE(qs);
    } else if (half) {
        if ((st = dt__alloc("dt_tensor_redistribute", total * sizeof(float), (void **)&fsend))) goto done;
        if ((st = dt__alloc("dt_tensor_redistribute", mine * sizeof(float), (void **)&frecv))) goto done;
        dt__half_to_f32(x->dtype, send, fsend, total);
        st = dt__comm_reduce_scatter(g, fsend, frecv, counts, DT_F32, dt__backend_op(op));
        if (!st && op == DT_AVG) dt__divide_elems(DT_F32, frecv, mine, n);
        if (!st) dt__f32_to_half(x->dtype, frecv, out->data, mine);
    } else {
        st = dt__comm_reduce_scatter(g, send, out->data, counts, x->dtype, dt__backend_op(op));
        if (!st && op == DT_AVG) dt__divide_elems(x->dtype, out->data, mine, n);
    }
done:
    DT_FREE(frecv);
    DT_FREE(fsend);
    DT_FREE(pieces);
    DT_FREE(counts);
    return st;
}

/* Replicate -> Partial(SUM): only coordinate 0 keeps the value (exact for
   every dtype, unlike dividing by n); AVG/MAX/MIN keep it everywhere */
static void dt__to_partial(const dt_mesh *m, int i, dt_placement p, void *data, size_t bytes) {
    if (dt__is(p, DT_PARTIAL) && p.reduce == DT_SUM && m->coord[i] != 0 && bytes) memset(data, 0, bytes);
}

static dt_status dt__step_run(const dt__ctx *x, const dt__step *s, const dt__array *in, dt__array *out) {
    switch (s->kind) {
    case DT__SLICE: dt__copy_box(in, out, &out->box); return DT_OK;
    case DT__GATHER: case DT__ALLTOALL: return dt__run_along(x, s, in, out);
    case DT__EXCHANGE: return dt__run_exchange(x, s, in, out);
    case DT__ALLREDUCE: return dt__run_allreduce(x, s, in, out);
    case DT__REDUCE_SCATTER: return dt__run_reduce_scatter(x, s, in, out);
    }
    return dt__fail(DT_ERR_UNSUPPORTED, "dt_tensor_redistribute: internal: step kind %d", s->kind);
}

/* Run `plan` on this mesh member: from `src` (placed as src_pl) into `dst`
   (placed as the plan's end). Steps between write into two alternating
   scratch buffers of the mesh. */
static dt_status dt__plan_run(const dt__ctx *x, const dt__plan *plan, const dt_placement *src_pl, const void *src,
                              void *dst) {
    dt__array cur, next;
    int k, last_move = -1;
    dt_status st;
    size_t bytes;
    for (k = 0; k < plan->n; k++)
        if (plan->s[k].kind != DT__TO_PARTIAL) last_move = k;
    dt__array_at(x, src_pl, (void *)src, &cur);
    for (k = 0; k <= last_move; k++) {
        void *buf = dst;
        dt__array_at(x, plan->s[k].to, NULL, &next);
        if (k < last_move &&
            (st = dt__scratch(x->m, k % 2 ? DT__SCRATCH_STEP1 : DT__SCRATCH_STEP0,
                              dt__box_numel(x->ndim, &next.box) * x->es, &buf)))
            return st;
        next.data = (char *)buf;
        if ((st = dt__step_run(x, &plan->s[k], &cur, &next))) return st;
        cur = next;
    }
    bytes = dt__box_numel(x->ndim, &cur.box) * x->es;
    if (last_move < 0 && bytes && dst != src) memcpy(dst, src, bytes);
    for (k = last_move + 1; k < plan->n; k++) dt__to_partial(x->m, plan->s[k].mdim, plan->s[k].to[plan->s[k].mdim], dst, bytes);
    return DT_OK;
}

static void dt__ctx_of(const dt_tensor *t, dt__ctx *x) {
    x->m = t->mesh;
    x->ndim = t->desc.ndim;
    x->gshape = t->desc.shape;
    x->dtype = t->desc.dtype;
    x->es = dt_dtype_size(t->desc.dtype);
}

static dt_status dt__redistribute_into(const dt_tensor *t, const dt_placement *dst_pl, void *dst) {
    dt__ctx x;
    dt__plan plan;
    if (t->mesh->rank < 0) return DT_OK;
    dt__ctx_of(t, &x);
    dt__plan_build(t->mesh->ndim, t->desc.placements, dst_pl, &plan);
    if (t->mesh->rank == 0 && dt__log_plans()) dt__plan_log(&x, t->desc.placements, dst_pl, &plan);
    return dt__plan_run(&x, &plan, t->desc.placements, t->data, dst);
}

static dt_status dt__check_tensor(const char *fn, const dt_tensor *t) {
    return t ? DT_OK : dt__fail(DT_ERR_ARG, "%s: tensor is NULL", fn);
}

/* does *out already have the spec `want`? (dtype, shape, mesh, placements) */
static dt_status dt__check_out(const char *fn, const dt_tensor *o, const dt_mesh *m, const dt_tensor_desc *want) {
    char a[160], b[160];
    if (o->mesh != m) return dt__fail(DT_ERR_MESH, "%s: *out lives on another mesh than the input", fn);
    if (o->desc.dtype != want->dtype)
        return dt__fail(DT_ERR_DTYPE, "%s: *out is %s, the result is %s", fn, dt_dtype_name(o->desc.dtype),
                        dt_dtype_name(want->dtype));
    if (o->desc.ndim != want->ndim || memcmp(o->desc.shape, want->shape, (size_t)want->ndim * sizeof(int64_t)))
        return dt__fail(DT_ERR_SHAPE, "%s: *out has shape %s, the result has %s", fn,
                        dt__shape_str(o->desc.shape, o->desc.ndim, a, sizeof a),
                        dt__shape_str(want->shape, want->ndim, b, sizeof b));
    if (!dt__placements_eq(o->desc.placements, want->placements, m->ndim))
        return dt__fail(DT_ERR_PLACEMENT, "%s: *out has placements %s, the result has %s", fn,
                        dt__placements_str(o->desc.placements, m->ndim, a, sizeof a),
                        dt__placements_str(want->placements, m->ndim, b, sizeof b));
    return DT_OK;
}

DT_API dt_status dt_tensor_redistribute(const dt_tensor *t, const dt_placement *placements, dt_tensor **out) {
    const char *fn = "dt_tensor_redistribute";
    dt_tensor_desc want;
    dt_tensor *o = NULL;
    dt_status st;
    int i;
    if ((st = dt__check_tensor(fn, t))) return st;
    if (!placements) return dt__fail(DT_ERR_ARG, "%s: placements is NULL", fn);
    if (!out) return dt__fail(DT_ERR_ARG, "%s: out is NULL", fn);
    want = t->desc;
    if ((st = dt__check_placements(fn, t->mesh, t->desc.ndim, placements, t->mesh->ndim, want.placements))) return st;
    for (i = 0; i < t->mesh->ndim; i++)
        if (dt__is(t->desc.placements[i], DT_SHARD) && dt__is(want.placements[i], DT_PARTIAL))
            return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d]: Shard(%d) -> Partial(%s) is not a redistribution "
                            "(a shard cannot become a partial sum without changing the value)", fn, i,
                            (int)t->desc.placements[i].dim, dt__reduce_name(want.placements[i].reduce));
    if (*out) {
        if ((st = dt__check_out(fn, *out, t->mesh, &want))) return st;
        if (*out == t) return DT_OK; /* same spec: nothing to do */
        return dt__redistribute_into(t, want.placements, (*out)->data);
    }
    if ((st = dt__tensor_make(fn, t->mesh, &want, NULL, 0, &o))) return st;
    if ((st = dt__redistribute_into(t, want.placements, o->data))) {
        dt_tensor_destroy(o);
        return st;
    }
    *out = o;
    return DT_OK;
}

DT_API dt_status dt_tensor_gather(const dt_tensor *t, void *full) {
    dt_placement rep[DT_MAX_MESH_DIMS];
    dt_status st;
    size_t n = 1;
    int i;
    if ((st = dt__check_tensor("dt_tensor_gather", t))) return st;
    for (i = 0; i < t->desc.ndim; i++) n *= (size_t)t->desc.shape[i];
    if (!full && n && t->mesh->rank >= 0) return dt__fail(DT_ERR_ARG, "dt_tensor_gather: full is NULL");
    memset(rep, 0, sizeof rep);
    return dt__redistribute_into(t, rep, full);
}

/* From a full array on mesh rank `src` (or on every rank): each rank gets
   its own box, replicas included, in one alltoallv in which only `src`
   sends. Partial targets then follow Replicate -> Partial. */
DT_API dt_status dt_tensor_distribute(dt_mesh *m, const dt_tensor_desc *d, const void *full, int src_rank,
                                      dt_tensor **out) {
    const char *fn = "dt_tensor_distribute";
    dt_tensor_desc norm;
    dt_placement rep[DT_MAX_MESH_DIMS];
    dt_tensor *t = NULL;
    dt__ctx x;
    dt__array in, mine;
    dt__box *send = NULL, *recv = NULL;
    int i, j, c[DT_MAX_MESH_DIMS];
    dt_status st;
    if (!out) return dt__fail(DT_ERR_ARG, "%s: out is NULL", fn);
    if (!m) return dt__fail(DT_ERR_ARG, "%s: mesh is NULL", fn);
    st = dt__check_desc(fn, m, d, &norm);
    if (!st && (src_rank < DT_SRC_ALL || src_rank >= m->size))
        st = dt__fail(DT_ERR_ARG, "%s: src_rank = %d, must be DT_SRC_ALL (-1) or a mesh rank 0..%d", fn, src_rank,
                      m->size - 1);
    if (!st && !full && (src_rank == DT_SRC_ALL || src_rank == m->rank) && m->rank >= 0) {
        size_t n = 1;
        for (i = 0; i < norm.ndim; i++) n *= (size_t)norm.shape[i];
        if (n) st = dt__fail(DT_ERR_ARG, "%s: full is NULL on the source rank %d", fn, m->rank);
    }
    if (src_rank != DT_SRC_ALL && m->rank >= 0) { /* all ranks enter the scatter, or none */
        uint64_t h = st ? 0 : dt__desc_hash(&norm) ^ (uint64_t)(int64_t)src_rank;
        if ((st = dt__agree(m->comm, fn, st, h))) return st;
    }
    if (st) return st;
    if ((st = dt__tensor_make(fn, m, &norm, NULL, 0, &t))) return st;
    if (m->rank < 0) { *out = t; return DT_OK; }
    dt__ctx_of(t, &x);
    for (i = 0; i < m->ndim; i++) rep[i] = dt__is(norm.placements[i], DT_PARTIAL) ? dt_replicate() : norm.placements[i];
    in.data = (char *)full;
    in.ndim = norm.ndim;
    in.es = x.es;
    for (i = 0; i < norm.ndim; i++) { in.box.lo[i] = 0; in.box.ext[i] = norm.shape[i]; }
    dt__array_at(&x, rep, t->data, &mine);
    for (i = 0, j = 1; i < m->ndim; i++) j &= dt__is(rep[i], DT_REPLICATE);
    if (src_rank == DT_SRC_ALL) {
        dt__copy_box(&in, &mine, &mine.box);
    } else if (j) { /* everyone gets everything: a broadcast */
        if (m->rank == src_rank && t->bytes) memcpy(t->data, full, t->bytes);
        if ((st = dt__comm_broadcast(m->comm, t->data, t->bytes, src_rank))) { dt_tensor_destroy(t); return st; }
    } else {
        if ((st = dt__boxes(m->size, &send, &recv))) { dt_tensor_destroy(t); return st; }
        for (j = 0; j < m->size; j++) {
            dt__mesh_coord_of(m, j, c);
            if (m->rank == src_rank) dt__box_at(&x, rep, c, &send[j]);
            else dt__box_empty(x.ndim, &send[j]);
            if (j == src_rank) recv[j] = mine.box;
            else dt__box_empty(x.ndim, &recv[j]);
        }
        st = dt__exchange(m, m->comm, &in, &mine, send, recv, 0, dt__box_numel(x.ndim, &in.box) * x.es);
        DT_FREE(send);
        if (st) { dt_tensor_destroy(t); return st; }
    }
    for (i = 0; i < m->ndim; i++) dt__to_partial(m, i, norm.placements[i], t->data, t->bytes);
    *out = t;
    return DT_OK;
}

/* >>debug -----------------------------------------------------------------
   visualize_sharding's counterpart: one line per mesh coordinate with the
   rank there and the global index ranges it holds, computed from the layout
   alone (no communication), so any one rank can print it. */

DT_API dt_status dt_tensor_print_sharding(const dt_tensor *t, FILE *f) {
    const dt_mesh *m;
    char a[160], sh[160];
    int r, i, c[DT_MAX_MESH_DIMS];
    dt_status st;
    if ((st = dt__check_tensor("dt_tensor_print_sharding", t))) return st;
    if (!f) return dt__fail(DT_ERR_ARG, "dt_tensor_print_sharding: f is NULL");
    m = t->mesh;
    fprintf(f, "dtensor %s%s on mesh (", dt_dtype_name(t->desc.dtype),
            dt__shape_str(t->desc.shape, t->desc.ndim, sh, sizeof sh));
    for (i = 0; i < m->ndim; i++)
        fprintf(f, "%s%s%s%d", i ? ", " : "", m->names[i], m->names[i][0] ? "=" : "", m->shape[i]);
    fprintf(f, ") placements %s\n", dt__placements_str(t->desc.placements, m->ndim, a, sizeof a));
    fprintf(f, "  %-14s %-5s %-28s %s\n", "mesh coord", "rank", "global index ranges", "local shape");
    for (r = 0; r < m->size; r++) {
        dt__box b;
        char co[64], rg[256];
        size_t len = 0;
        dt__mesh_coord_of(m, r, c);
        dt__tensor_box(m, &t->desc, c, &b);
        len = (size_t)snprintf(co, sizeof co, "(");
        for (i = 0; i < m->ndim && len < sizeof co; i++) len += (size_t)snprintf(co + len, sizeof co - len, "%s%d", i ? "," : "", c[i]);
        if (len < sizeof co) snprintf(co + len, sizeof co - len, ")");
        len = (size_t)snprintf(rg, sizeof rg, "[");
        for (i = 0; i < t->desc.ndim && len < sizeof rg; i++)
            len += (size_t)snprintf(rg + len, sizeof rg - len, "%s%lld:%lld", i ? ", " : "", (long long)b.lo[i],
                                    (long long)(b.lo[i] + b.ext[i]));
        if (len < sizeof rg) snprintf(rg + len, sizeof rg - len, "]");
        fprintf(f, "  %-14s %-5d %-28s %s\n", co, m->ranks[r], rg, dt__shape_str(b.ext, t->desc.ndim, sh, sizeof sh));
    }
    return DT_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* DTENSOR_IMPLEMENTATION */
