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
   DTENSOR_LOG=plan        print every redistribution plan (its steps and the
                           bytes each moves) on mesh rank 0, to stderr

   LIFETIMES
   =========
   comm outlives the meshes made from it; a mesh outlives its tensors. A
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
#define DT_API static
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
   dim. AVG of integers truncates toward zero (sum, then integer division). */
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
   linear, barrier by dissemination). Without `split`, sub-communicators
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
