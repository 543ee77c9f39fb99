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
   mpicc, link BLIS (-lblis, for the local GEMM of the matmul ops; or define
   DTENSOR_NO_BLIS and link nothing), run with mpiexec. Nothing else: no
   build-system changes, no other files. A serial build (no MPI at all) defines DTENSOR_NO_MPI and uses the
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
       dt_tensor *c = NULL;
       dt_sum(a, 0, NULL, 0, &c);       // ops pick a sharding strategy: here the
       ...                              // local sums, labelled Partial(SUM)
       dt_tensor_destroy(c); dt_tensor_destroy(b); dt_tensor_destroy(a);
       dt_mesh_destroy(mesh); dt_comm_destroy(comm);

   Every function that can fail returns a dt_status (DT_OK == 0) and leaves
   a message naming the call, the argument and the values in dt_last_error().
   The library never aborts, never exits, never calls MPI_Init/MPI_Finalize,
   never touches MPI_COMM_WORLD by itself and prints nothing unless asked
   (DTENSOR_LOG=plan, dt_tensor_print_sharding).

   Each public declaration says what calling it involves, as PETSc's manual
   pages say "Collective" / "Not collective": `collective`: every rank of
   the mesh (or comm) must call it, in the same order, with matching
   arguments (it may communicate; every op, redistribution, gather, halo
   exchange, RNG seeding and file I/O, and the create/destroy calls that
   make or free communicators); `local`: reads or writes this rank's own
   state only and never waits for another rank (accessors, tensor
   creation without data from elsewhere, destroying a tensor); `pure`: a
   function of its arguments alone (placements, dtype names, dt_layout).

   MAP
   ===
   The file is sections behind banners you can grep, `>>name`, in this order
   (inside a section, sub-banners: a comment that opens with `---- name ----`).
   Public part (always compiled):
     >>config        version, DT_MAX_DIMS & co., DT_API, the ABI link check
     >>types         dt_status, dt_dtype, dt_placement, the desc structs, dt_comm_desc
     >>api           every public declaration, documented (collective/local/pure)
   Implementation (DTENSOR_IMPLEMENTATION):
     >>math          element math written once for host and GPU (DT__HD): half and
                     bfloat16 conversion, Philox, Box-Muller, exp, NaN-aware
                     max/min and wrapping integer arithmetic (the registry's words)
     >>registry      THE OP REGISTRY: one line per op (DT__UNARY_OPS,
                     DT__BINARY_OPS, DT__TABLE_OPS) and per op family
                     (DT__FAMILIES), and how to add one; the words the lines use
                     (op flags, Partial maps and rules, reduce kernels); what they
                     generate: kernel ids, op ids, dt__op_table (each op's family,
                     kernel and Partial rules), family traits, element functions
     >>util          the BLAS selection and its headers (DTENSOR_BLAS), allocation,
                     thread-local errors, checked size arithmetic, placement/shape
                     strings, grow-only buffers, the environment switches
                     (DTENSOR_LOG, DTENSOR_CHECK), the element-wise reduction
     >>layout        boxes: the global indices each rank holds under each split
                     rule; strided box copies (pack, unpack, fill)
     >>kernels       local compute behind a per-device table (dt__kernels): the
                     vectorised loops of pointwise, reduce, softmax, norm, permute,
                     embedding and cross-entropy kernels
     >>gemm          the local GEMM: BLAS calls, or cache-blocked loops for small,
                     strided and integer blocks; F16/BF16 widened to F32
     >>philox        Philox4x32-10 random fills (AVX2/AVX-512 generators chosen at
                     run time, the same values on every path)
     >>device        where a shard's bytes live (dt__device: host, DT_CUDA), the
                     host's kernel table, and the dispatchers that run a kernel on
                     a device's buffers
     >>backend       dt_comm: the vtable (MPI, self, custom), collectives emulated
                     over sendrecv, groups, split-phase start/wait, accounting, muting;
                     `---- shm ----`: the per-mesh MPI-3 shared arena (windows, the
                     block allocator, a step's two synchronisations)
     >>agree         cross-rank agreement on a call's arguments (DTENSOR_CHECK)
     >>mesh          dt_mesh: its sub-communicators, slices, flattening, work
                     buffers; dt__consistent (agreement on a mesh)
     >>tensor        dt_tensor: desc normalisation, creation, from_local (strides,
                     ghost room), accessors, contiguous copies, destroy
     >>checks        the argument checks the sections below share
     >>redistribute  plans (reduce, move, re-label) and their execution;
                     distribute, gather, redistribute; `---- the transport ----`:
                     how an exchange travels, chosen once (dt__transport_of) from
                     what every rank shares (the step's bound, dt__step_bound;
                     the backend; the element size), named by DTENSOR_LOG=plan;
                     `---- shm ----`: a step's single-copy path through the
                     arena (dt__shm_step)
     >>propagate     how an op chooses its sharding: one combination per mesh dim
                     (alpha-beta cost), the per-mesh strategy cache, dt_explain
     >>ops           the public ops: the call and its argument checks; per op
                     family its shape inference and its runner side by side;
                     dt__families (from DT__FAMILIES), dt__dispatch
     >>rng           the mesh's Philox offset and the random ops
     >>halo          ghost cells: halo plans, exchanges, dt_stencil_apply
     >>io            .npy checkpoints, RNG state files, ScaLAPACK interop
                     (dt_tensor_scalapack_desc: a tensor's BLACS descriptor;
                     dt_tensor_desc_from_scalapack: a descriptor's spec)
     >>debug         dt_tensor_print_sharding
     >>fortran       the dt_f_* entry points dtensor.f90 binds to: Fortran-order
                     descs, placements, shapes and dims reversed into C order
   dtensor_cuda.h: >>cuda-api, >>cuda-device (memory, stream), >>cuda-kernels
   (the DT_CUDA kernel table, calling >>math), >>nccl (the NCCL backend).
   dtensor_layers.h: >>layers-api, >>layers (the tensor-parallel layers, on
   the public API alone).

   WORDS, one meaning each: to `run` is to execute (dt__run, dt__plan_run);
   a `span` is a stretch of elements contiguous in memory (dt__copy_spans,
   dt__chain_spans); to `stage` is to copy through a buffer in the other
   memory, host for a device or device for a host (dt__stage_in,
   dt__redistribute_staged); strided storage goes through a contiguous copy
   (dt__contig_copy); to `check` is to validate arguments (dt__check_*,
   dt__call_check); to `infer` is to compute a result's shape and dim map
   (dt__infer_<family>); every function that unwinds on failure has one
   cleanup label, `done`.

   THE RULE. A section names only what is defined above it or in itself --
   functions, macros, enumerators and types; code higher up reaches code
   below only through a pointer handed to it (a device's kernel table, a
   tensor's halo_free, the family's shape inference that dt__dispatch hands
   to dt__propagate). A section reads any struct but
   writes or frees only its own fields: those of the structs it defines and
   those another struct keeps for it, marked with its name (dt_mesh's op
   cache, >>propagate; its RNG state, >>rng). A comm's backend calls, group
   translation, accounting and muting are >>backend's alone (dt__comm_*),
   and so is MPI itself (MPI-IO aside, >>io's): other sections ask what a
   backend can do (DT__CAP_*, dt__comm_ordered_messages), never which
   functions it has.
   tests/lint/layering.py checks the first and last sentences on dtensor.h
   and dtensor_cuda.h in every `make strict` and `make lint`, and
   tests/lint/ctags_check.sh that Universal Ctags sees the same functions.

   ONE OP, AS IT RUNS: dt_matmul(a, b, &c)
     dt_matmul -> dt__matmul                                         >>ops
       dt__call_init, dt__call_in (a, b), dt__call_check: one mesh, one dtype,
       the op allowed; a refusal goes through dt__call_refused, which makes
       every rank fail alike (dt__consistent)
       dt__dispatch: f = dt__families[DT__F_MATMUL]
         dt__propagate(c, f->infer)                                  >>propagate
           dt__key_build: the mesh's strategy cache; on a miss only:
             dt__infer_matmul (result shape, dim map; >>ops, handed in),
             dt__choose (dt__opts_build per mesh dim from
             dt__op_table[DT__OP_MATMUL], the cheapest by dt__move_cost),
             dt__sizes_unnest, dt__public_out
         dt__out_prepare: dt__tensor_make (>>tensor) or, for a given *out,
           dt__check_out_spec (>>checks)
         dt__consistent, with DTENSOR_CHECK only (dt__agree_ex)    >>mesh, >>agree
         dt__run
           dt__move_inputs: each input whose placement must change goes
             through dt__redistribute_into                           >>redistribute
               dt__plan_build_shaped, dt__plan_run -> dt__comm_alltoallv,
               dt__comm_allgatherv, ... (MPI or the user's backend)  >>backend
           f->run = dt__run_matmul -> dev->kernels()->gemm: dt__k_gemm
             (BLAS, or the loops for small or strided blocks)        >>gemm
           (where the strategy gathers k, 2-D meshes: dt__summa_choose,
           then dt__summa_run streams k in panels over dt__comm_start /
           dt__comm_test / dt__comm_wait and the same gemm: no gather;
           a mesh dim where all three are Replicate splits k in layers,
           dt__summa_layers, summed by dt__summa_layers_sum)
         *out = the result with the propagated spec (Partial(SUM) when the
           contracted dim was sharded)
     Sections entered (a and b row-sharded on 2 ranks, F64, a strategy-cache
     miss, checks off; 10, from 11 before the family table; checked by
     tests/lint/walk.sh --check in make lint): ops tensor propagate util
     layout mesh redistribute backend device gemm

   OPTIONS (define before including)
   =================================
   DTENSOR_IMPLEMENTATION  compile the implementation into this file
   DTENSOR_IMPLEMENTATION_LINKED
                           ignore DTENSOR_IMPLEMENTATION in this file: the
                           program links an implementation compiled once
                           elsewhere (cc -x c -DDTENSOR_IMPLEMENTATION -c
                           dtensor.h, with the same options), so that many
                           single-file programs share one object
   DTENSOR_NO_MPI          no <mpi.h>, no dt_comm_mpi(); the self and custom
                           backends remain
   DTENSOR_STATIC          make every public function static (DT_API)
   DT_API                  linkage of public functions (default: extern)
   DT_MALLOC(sz), DT_FREE(p)
                           your allocator: define both or neither
   DT_ASSERT(c)            internal invariants only (default: assert)
   DT_MAX_DIMS             max tensor rank (default 8, at least 8)
   DT_MAX_MESH_DIMS        max mesh rank (default 4, at least 4)
   DT_OP_CACHE             strategy-cache entries per mesh (default 256)
   DTENSOR_BLAS            the local GEMM (F32/F64; F16/BF16 widened to F32):
                           blis (default: bli_?gemm_ex, general strides; <blis.h>
                           or <blis/blis.h>, or DTENSOR_BLIS_HEADER; -lblis),
                           cblas (cblas_?gemm from DTENSOR_CBLAS_HEADER, default
                           <cblas.h>: OpenBLAS, MKL's <mkl_cblas.h>, libsci,
                           netlib), f77 (sgemm_/dgemm_, declared here, no header),
                           none (built-in loops; DTENSOR_NO_BLIS means the same).
                           cblas/f77 take strides with a unit dim (transposes);
                           other strides are packed. DTENSOR_BLAS_INT: their
                           integer (default int). DTENSOR_BLAS_WEAK (GCC/Clang,
                           ELF): weak BLAS symbols, a program links without the
                           BLAS and multiplies with the loops (with --as-needed,
                           Debian's default, link -Wl,--no-as-needed -lblis);
                           blis then goes through BLIS's Fortran interface
                           (no blis.h: it links at -O0 too)
   DTENSOR_NO_SIMD         no AVX2/AVX-512 Philox generators (x86-64 GCC/Clang
                           builds pick one at run time; the values are the same)

   Build every file of a program with the same DT_MAX_DIMS, DT_MAX_MESH_DIMS
   and DTENSOR_NO_MPI (they change the public structs and the API; give
   the sizes as plain decimal numbers) and the same dtensor.h version. A
   file compiled with different values fails to link with an undefined
   reference to dtensor_abi_mismatch_check_v<version>_DT_MAX_DIMS_<n>_
   DT_MAX_MESH_DIMS_<n>_{with,without}_MPI, the values that file used (GCC,
   Clang, nvcc and other compilers defining __GNUC__; DTENSOR_STATIC builds
   have one file and no check). The other options only affect the
   implementation's file.

   ENVIRONMENT
   ===========
   DTENSOR_CHECK=1         cross-rank consistency checks: ranks that pass
                           different arguments to a collective call all get
                           DT_ERR_MISMATCH instead of hanging or computing
                           garbage (read once; see dt_set_checks)
   DTENSOR_LOG=ops         print every op's chosen strategy (see dt_explain)
   DTENSOR_LOG=plan        print every redistribution plan (its steps, the mesh
                           dim and placements of each) on mesh rank 0, to stderr
                           (read once, at the first redistribution)
   DTENSOR_LOG=shm         print when DTENSOR_SHM=auto made a mesh's shared
                           arena, and its size when the node's room made it
                           smaller than asked, or none (words combine:
                           DTENSOR_LOG=plan,shm)
   DTENSOR_SIMD=avx2|none  cap the Philox generator's vector width (read once;
                           the random values do not change, only the speed)
   DTENSOR_SHM=auto|1|0    single-copy redistribution inside a node through an
                           MPI-3 shared arena per mesh. auto (the default):
                           the arena is made at the mesh's first
                           redistribution of a host tensor averaging
                           DTENSOR_SHM_AUTO_MIN bytes a rank; 1: made with the
                           mesh; 0: never (see dt_comm_set_shm, which
                           overrides it; read at each dt_mesh_create)
   DTENSOR_SHM_AUTO_MIN=bytes
                           that average (default 1048576)
   DTENSOR_SHM_ARENA=bytes the arena's size per rank (default 268435456); where
                           the node's shared memory (/dev/shm, or Open MPI's
                           osc_sm_backing_directory) has less than twice the
                           arenas free, each rank gets its share of half of
                           it, and below 1 MiB a rank the mesh keeps the MPI
                           path (DTENSOR_LOG=shm says which, on rank 0)
   DTENSOR_SHM_MIN=bytes   the smallest shard put in the arena (default 65536)
   DTENSOR_IO_CHUNK=bytes  the pinned host buffer a device tensor's .npy
                           save/load goes through, piece by piece (default
                           8388608; read at each call)
   DTENSOR_MATMUL_BUDGET=bytes
                           the working memory a rank may use while dt_matmul
                           streams the contracted dim in panels (SUMMA; see
                           dt_mesh_set_matmul_budget, which overrides it).
                           Unset or 0: a quarter of the largest rank's a + b +
                           result shard bytes, at least 65536. Read at each call
   DTENSOR_PIPE_CHUNK=bytes
                           a redistribution's exchange whose parts exceed
                           twice this, over a backend that starts messages
                           (MPI), runs pipelined: pieces cut into parts of
                           about this size, packed, sent, placed round by
                           round (default 0: never; measured no faster on
                           one node, see docs/guide.md). Read once
   DTENSOR_EXCHANGE=alltoallv
                           over dt_comm_mpi, a host redistribution's piece
                           exchange goes as one MPI_Alltoallv of packed
                           pieces; unset: posted (MPI_Irecv straight into
                           out where a piece is one stretch of it, MPI_Isend,
                           the own piece placed meanwhile, each piece placed
                           as it arrives; docs/guide.md). Read once
   DTENSOR_EXCHANGE_TYPES=N
                           in the posted exchange, a strided piece whose
                           contiguous runs are >= N bytes moves as an MPI
                           derived datatype of the tensor's storage (no pack,
                           no unpack); 0: every strided piece packed. Unset:
                           256 under Open MPI, 0 under MPICH (its datatype
                           engine was slower than the pack; bench/README.md).
                           Read once
   DTENSOR_MATMUL=stream|gather|auto
                           where the strategy gathers a matmul operand along the
                           contracted dim: stream it in panels, gather it whole,
                           or (auto, the default) gather only when the gathered
                           blocks fit the budget and 256 KiB (latency wins
                           there); DTENSOR_LOG=ops says which. Read once
   DTENSOR_MATMUL_LAYERS=on|off|auto
                           where a streamed matmul's a, b and result are all
                           Replicate over a mesh dim: its copies split k and
                           sum their results (2.5D), or each computes the
                           product whole; auto (default): the cost model of
                           docs/guide.md decides. Read once
   DTENSOR_HALO_TYPES=N    halo faces of >= N bytes that are strided (columns)
                           move as MPI derived datatypes, straight from the
                           interior and into the ghost cells, instead of
                           packed; 0: never. Read by each dt_tensor_set_halo,
                           dt_comm_mpi only. Unset: 4096 under Open MPI, 0
                           (packing) under MPICH, as measured (bench/README.md)

   LIFETIMES
   =========
   comm outlives the meshes made from it; a mesh outlives its tensors. A
   mesh keeps the tensor-sized work buffers redistribution needed (pack,
   unpack, the steps of multi-step plans; at most ~1 local shard each) and
   reuses them, so a time loop allocates and page-faults no data buffer
   after its first step (small per-call bookkeeping, O(ranks), the F32
   F32 copies of F16/BF16 reductions and the receive buffers of collectives the
   library emulates over sendrecv are still allocated); dt_mesh_destroy
   frees them.
   A streamed matmul (dt_mesh_set_matmul_budget) allocates its panels for
   the call and frees them before it returns: it leaves nothing held.
   A tensor made with DT_BORROW does not own its buffer: the caller frees it
   after dt_tensor_destroy.
   With the shared path on (dt_comm_set_shm), dt_mesh_destroy frees the
   mesh's shared arena only if no rank still has a tensor in it; a tensor
   that outlives its mesh keeps the window mapped until MPI_Finalize.

   THREADS AND MPI'S THREAD LEVEL
   ==============================
   dtensor starts no threads and calls MPI only inside its own calls, from
   the thread that made the call. Call it from one thread at a time (a mesh's
   collectives share communicators; process-wide settings such as
   dt_set_checks are not locked); dt_last_error() is per thread. So the
   level MPI_Init_thread must provide is the program's, never more:
     MPI_THREAD_SINGLE      (what MPI_Init gives) the program has one thread
     MPI_THREAD_FUNNELED    other threads exist (OpenMP, a threaded BLAS) and
                            dtensor and MPI are called from the main thread
     MPI_THREAD_SERIALIZED  dtensor is called from several threads, one at a
                            time (the caller serialises them)
   dt_comm_mpi checks what is cheap: MPI initialised and not yet finalized,
   and, below MPI_THREAD_SERIALIZED, that it runs on MPI's main thread
   (otherwise DT_ERR_COMM, naming the level). Other threads of the program
   may make their own MPI calls meanwhile only under MPI_THREAD_MULTIPLE,
   on communicators dtensor does not use.
*/
#ifndef DTENSOR_H
#define DTENSOR_H

/* >>config ---------------------------------------------------------------- */
/* the version (CHANGELOG.md; the Makefile, dtensor.pc and the CMake package
   read it from these lines); dt_version() returns the implementation's */
#define DTENSOR_VERSION_MAJOR 0
#define DTENSOR_VERSION_MINOR 5
#define DTENSOR_VERSION_PATCH 0
#define DT__VERSION_STR_(x) #x
#define DT__VERSION_STR(x) DT__VERSION_STR_(x)
#define DTENSOR_VERSION_STRING \
    DT__VERSION_STR(DTENSOR_VERSION_MAJOR) "." DT__VERSION_STR(DTENSOR_VERSION_MINOR) "." DT__VERSION_STR(DTENSOR_VERSION_PATCH) /* "0.5.0" */
#define DTENSOR_VERSION (DTENSOR_VERSION_MAJOR * 10000 + DTENSOR_VERSION_MINOR * 100 + DTENSOR_VERSION_PATCH)

#ifndef DT_MAX_DIMS
#define DT_MAX_DIMS 8
#endif
#ifndef DT_MAX_MESH_DIMS
#define DT_MAX_MESH_DIMS 4
#endif
#ifndef DT_OP_CACHE
#define DT_OP_CACHE 256 /* strategy-cache entries per mesh (bounded; oldest evicted) */
#endif
#if DT_MAX_DIMS < 8 || DT_MAX_MESH_DIMS < 4
#error "dtensor.h: DT_MAX_DIMS must be >= 8 and DT_MAX_MESH_DIMS >= 4"
#endif

/* The ABI check (OPTIONS): every file that includes this header refers to
   one symbol whose name spells the version and the options that shape the
   public types and API, and the implementation defines it, so files built
   with different values fail to link, naming the symbol, e.g.
   dtensor_abi_mismatch_check_v0_4_0_DT_MAX_DIMS_8_DT_MAX_MESH_DIMS_4_with_MPI.
   The reference is a static pointer kept by __attribute__((used)) (GCC,
   Clang and compilers that define __GNUC__, nvcc's host side included);
   other compilers skip it. DTENSOR_STATIC builds (one file) skip it too. */
#ifdef DTENSOR_NO_MPI
#define DT__ABI_MPI without_MPI
#else
#define DT__ABI_MPI with_MPI
#endif
#define DT__ABI_NAME_(a, b, c, d, m, mpi) dtensor_abi_mismatch_check_v##a##_##b##_##c##_DT_MAX_DIMS_##d##_DT_MAX_MESH_DIMS_##m##_##mpi
#define DT__ABI_NAME(a, b, c, d, m, mpi) DT__ABI_NAME_(a, b, c, d, m, mpi)
#define DT__ABI_SYM DT__ABI_NAME(DTENSOR_VERSION_MAJOR, DTENSOR_VERSION_MINOR, DTENSOR_VERSION_PATCH, \
                                 DT_MAX_DIMS, DT_MAX_MESH_DIMS, DT__ABI_MPI)
#ifndef DTENSOR_STATIC
#ifdef __cplusplus
#define DT__ABI_LINKAGE extern "C"
#else
#define DT__ABI_LINKAGE extern
#endif
#if defined(__GNUC__) || defined(__clang__)
/* visibility: still exported from a shared library built with -fvisibility=hidden;
   retain: kept by the linker's --gc-sections too (GCC 11+, Clang 13+, ELF) */
#if defined(__has_attribute) && !defined(__CUDACC__)
#if __has_attribute(retain)
#define DT__ABI_KEEP __attribute__((used, retain, unused))
#endif
#endif
#ifndef DT__ABI_KEEP
#define DT__ABI_KEEP __attribute__((used, unused))
#endif
DT__ABI_LINKAGE __attribute__((visibility("default"))) const int DT__ABI_SYM;
static const int *const dt__abi_ref DT__ABI_KEEP = &DT__ABI_SYM;
#else
DT__ABI_LINKAGE const int DT__ABI_SYM;
#endif
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

typedef enum dt_dtype { DT_F32, DT_F64, DT_F16, DT_BF16, DT_I32, DT_I64, DT_U8,
    DT_C64, DT_C128 /* complex: interleaved (re, im) pairs of F32 / F64, C99 _Complex layout */ } dt_dtype;
#define DT_NUM_DTYPES 9
/* The complex dtypes are stored as C99 float/double _Complex, Fortran
   complex(c_float_complex/c_double_complex) and std::complex<float/double>
   are: the real part, then the imaginary part. The library computes on the
   pairs itself (no _Complex in the header: C++ and CUDA lack it). They
   move through every redistribution, gather and view; Partial(SUM/AVG)
   combine both parts; Partial(MAX/MIN) and the ops with no complex meaning
   (ordering, softmax, norms, ...) are DT_ERR_DTYPE. README lists the ops. */

/* Partial(op): the global value is op over the local values along the mesh
   dim. AVG of integers is the exact mean truncated toward zero, computed
   without overflow (quotients and remainders are reduced separately). An op
   on an integer Partial(AVG) input reduces it first (over a mesh dim of
   more than one rank), unless the op only moves data or negates (views,
   cat, copy, neg): trunc(mean(3x)) is not 3 trunc(mean(x)), so no other op
   may carry the parts through and truncate at the end.
   Several Partial mesh dims with different ops (e.g. [P(max), P(sum)]) are
   reduced in mesh-dim order, dim 0 first: [P(max), P(sum)] -> [R, R] is
   sum over dim 1 of (max over dim 0). A redistribution that keeps one of
   them Partial reduces the others first, which changes the order ([P(max),
   P(sum)] -> [P(max), R] leaves max over dim 0 of (sum over dim 1)); SUM and
   floating AVG commute with each other (integer AVG truncates at each
   reduction), MAX and MIN with nothing else, so mix those only where the
   order is the one you mean. */
typedef enum dt_reduce { DT_SUM, DT_AVG, DT_MAX, DT_MIN } dt_reduce;

/* A placement per mesh dim. kind 0 is Replicate, so a zero-initialised
   placement array means "replicated everywhere". */
typedef enum dt_placement_kind { DT_REPLICATE = 0, DT_SHARD = 1, DT_PARTIAL = 2 } dt_placement_kind;
/* How a Shard splits its extent n over the k ranks of its mesh dim (part c
   belongs to mesh coordinate c):
     DT_SPLIT_CHUNK     torch.chunk (dt_shard): parts of ceil(n/k), the last
                        ones short or empty (10 over 4: 3,3,3,1);
     DT_SPLIT_BALANCED  n/k + (c < n%k), PETSc's PETSC_DECIDE and most MPI
                        codes (10 over 4: 3,3,2,2);
     DT_SPLIT_SIZES     sizes[c] elements, given by the caller (zeros allowed;
                        they sum to n);
     DT_SPLIT_CYCLIC    blocks of `block` elements (the last one short) dealt
                        round-robin, block i to coordinate (src + i) mod k
                        (src = 0 unless dt_shard_cyclic_src), the local part
                        being the owned blocks in order: ScaLAPACK's
                        block-cyclic layout (NUMROC sizes; src is its
                        RSRC/CSRC). A part is then a set of boxes, not one box.
   Offsets are the running sum of the earlier parts. Several mesh dims
   sharding one tensor dim nest in mesh-dim order: a later mesh dim applies its
   rule to positions 0..n'-1 of the part the earlier ones left (n' its local
   extent, in local order); cyclic blocks count from that part's first
   element; a sizes array must sum to n' for every coordinate of the earlier
   mesh dims (else DT_ERR_PLACEMENT). Every combination is implemented. */
typedef enum dt_split_rule { DT_SPLIT_CHUNK = 0, DT_SPLIT_BALANCED = 1, DT_SPLIT_SIZES = 2, DT_SPLIT_CYCLIC = 3 } dt_split_rule;

typedef struct dt_placement {
    uint8_t kind;    /* dt_placement_kind                                       */
    int8_t dim;      /* Shard: the tensor dim split; negative counts from the end */
    uint8_t reduce;  /* Partial: the dt_reduce op                               */
    uint8_t split;   /* Shard: the dt_split_rule; 0 = torch.chunk           */
    int32_t src;     /* DT_SPLIT_CYCLIC: the mesh coordinate holding block 0
                        (ScaLAPACK's RSRC/CSRC), 0..k-1; 0 (default) for every
                        other rule. Sits in what was padding: the struct's
                        size and the other fields' offsets are unchanged      */
    int64_t block;   /* DT_SPLIT_CYCLIC: elements per block, > 0                 */
    const int64_t *sizes; /* DT_SPLIT_SIZES: one size per coordinate of the mesh
                             dim. Copied by every call that takes the placement
                             (tensor creation, redistribute, dt_layout, ops), so
                             the caller may free it after the call; a tensor's
                             own desc points at the tensor's copy.              */
} dt_placement;

#define DT_SRC_ALL (-1)  /* dt_tensor_distribute: every rank passes the full data */

/* devices (dt_tensor_desc.device, dt_comm_desc.device) */
#define DT_HOST 0        /* host memory                                           */
#define DT_CUDA 1        /* CUDA device memory: include dtensor_cuda.h              */
#define DT_ANY_MEMORY (-1) /* dt_comm_desc.device: the backend takes any pointer  */

/* dt_tensor_from_local flags */
#define DT_BORROW 0u     /* wrap the caller's buffer (default)                   */
#define DT_COPY   1u     /* copy the caller's buffer into a new one              */
#define DT_VERIFY 2u     /* collective: check that every rank passed the same
                            desc and a local buffer of the implied shape;
                            DT_ERR_MISMATCH on every rank otherwise             */
#define DT_INFER_SIZES 4u /* collective: every rank's desc->local_shape is the
                            truth; each tensor dim split by one mesh dim becomes
                            dt_shard_sizes of the gathered sizes (one small
                            allgather), whatever rule the desc names there     */

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
    /* of bytes_recv: what dt_matmul's streamed (SUMMA, 2.5D) calls received,
       panels and layer sums; and the sum over those calls of a lower bound
       on it (each rank doing 1/p of the multiply-adds, starting from its
       shards: docs/guide.md "Matmul at scale") */
    uint64_t matmul_bytes_recv;
    uint64_t matmul_bound;
} dt_comm_stats;

/* one message of dt_comm_desc.start */
typedef struct dt_message {
    void *buf;      /* send: the bytes to send; receive: where they land        */
    size_t bytes;
    int peer;       /* the other rank (in the comm the callback belongs to)     */
    int send;       /* 1: send to peer; 0: receive from peer                    */
    /* which kind of the library's exchanges the message belongs to (halo,
       redistribution, matmul panels; 0..32767, set by the library): a
       backend must match a receive only with a send of the same tag, so
       that exchanges of different kinds in flight together cannot take
       each other's messages (dt_comm_mpi: the MPI tag; NCCL has none:
       over dt_comm_nccl begin every exchange in one order on all ranks) */
    int tag;
} dt_message;

/* A pluggable collective backend (miniaudio's backend callbacks are the
   model). Only `sendrecv` is required: every other callback may be NULL, or
   return DT_ERR_UNSUPPORTED for a call it does not take, and the library then
   does that collective itself over sendrecv (alltoallv by pairwise exchange,
   allgatherv by a ring, allreduce as reduce-scatter + allgather, broadcast
   linear, barrier by dissemination), receiving into a buffer of its own
   that is copied to the caller's only once every message has arrived (a
   failed sendrecv leaves the caller's buffer, e.g. a reused *out, as it
   was; the cost is that copy and a per-call allocation of the received
   bytes). A callback that declines must decline
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
    /* the op planner's cost model (>>propagate): seconds per message and per
       byte moved; 0 = default (5e-6 s, 2e-10 s/B: 5 GB/s) */
    double alpha, beta;
    /* split-phase point-to-point (halo exchanges): start the `n` messages
       in `msgs` (at most one send and one receive per peer; a zero-byte
       message is never passed) and return a handle in *request that `wait`
       completes (and frees). Optional, both or neither: without them the
       library runs the messages over sendrecv, in rounds that cannot
       deadlock, inside the start call (so no overlap). */
    dt_status (*start)(void *user, int n, const dt_message *msgs, void **request);
    dt_status (*wait)(void *user, void *request);
    /* the memory the callbacks' buffers may be in: DT_HOST (0, default),
       DT_CUDA (device pointers only: NCCL), or DT_ANY_MEMORY (CUDA-aware MPI).
       Tensors in other memory are staged through host buffers. */
    int device;
    /* 1: allreduce / reduce_scatter take F16 and BF16 (NCCL); 0: the library
       reduces them in F32 */
    int native_half;
    /* optional, with start/wait: move a started request's messages forward
       without blocking (MPI_Testall), *done = 1 once all have completed
       (`wait` is still called, to free it). The library calls it between
       pieces of its own work while the messages fly (a streamed matmul's
       GEMM), so that a backend without a progress thread overlaps. */
    dt_status (*test)(void *user, void *request, int *done);
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
    int device;                                /* DT_HOST (0) or, with dtensor_cuda.h,
                                                  DT_CUDA: where the shard's bytes
                                                  live                              */
    const int64_t *local_shape;                /* dt_tensor_from_local: the shape of
                                                  the caller's buffer (see there);
                                                  the truth under DT_INFER_SIZES    */
    const int64_t *local_ghost;                /* dt_tensor_from_local (DT_BORROW
                                                  only): ghost room in the caller's
                                                  buffer, ndim widths, one per tensor
                                                  dim, on both sides. NULL (default):
                                                  none. See "ghosted arrays" at
                                                  dt_tensor_from_local             */
    const int64_t *local_strides;              /* dt_tensor_from_local (DT_BORROW or
                                                  DT_COPY): the element strides of
                                                  the caller's storage, ndim of them,
                                                  each >= 1 (0 allowed where it
                                                  addresses nothing: a dim of extent
                                                  1, an empty part), no two at one
                                                  address (a padded leading dim, a
                                                  column-major array, one field of
                                                  an array of structs). NULL
                                                  (default): row-major. See
                                                  "strided storage" there          */
    const void *local_alloc;                   /* dt_tensor_from_local with local_ghost
                                                  or local_strides (required there):
                                                  the start of the caller's
                                                  allocation that `local` lies in
                                                  (what malloc returned, the
                                                  array's name), so the wrap can
                                                  check it reads inside it. NULL
                                                  (default): not given           */
    int64_t local_alloc_bytes;                 /* the size of that allocation in
                                                  bytes (0: not given)             */
} dt_tensor_desc;

/* >>api ------------------------------------------------------------------- */

/* status and errors */
DT_API const char *dt_version(void);         /* pure: the implementation's
                                                 DTENSOR_VERSION_STRING, "0.5.0" */
DT_API const char *dt_status_string(dt_status s);  /* pure */
DT_API const char *dt_last_error(void);       /* local; thread-local; "" after success-only runs */
DT_API void dt_clear_error(void);  /* local */
/* for code built on the public API (dtensor_layers.h, your own layers):
   make dt_last_error() the printf-formatted message (truncated to 511
   bytes; fmt NULL: "") and return st, so that a check reads
   `return dt_set_last_error(DT_ERR_ARG, "my_call: n = %d, must be > 0", n);` */
DT_API dt_status dt_set_last_error(dt_status st, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;  /* local; thread-local */
/* a public call of code built on the public API, bracketed as the
   library's own calls are, so that the error handler (below) runs once for
   it, under its name, when it returns -- after its dt_mesh_agree, never
   for what it calls inside (dt_set_last_error, dt_mesh_agree, the
   library's calls):
     dt_status my_call(dt_mesh *m, int n) {
         dt_call_begin();
         return dt_call_end("my_call", my_call_body(m, n));
     }
   dt_call_end returns st. Unbracketed, dt_set_last_error reports at once
   and dt_mesh_agree reports the failures new to it (a rank that passed
   DT_OK and learns that another refused), each under the caller's name:
   once either way, but a local failure before the agreement. */
DT_API void dt_call_begin(void);                               /* local; thread-local */
DT_API dt_status dt_call_end(const char *call, dt_status st);  /* local; thread-local */

/* The error hook (PETSc's PetscPushErrorHandler, MPI's error handlers).
   fn is called on every rank where a public call that returns dt_status
   fails, once per failing call the program made (not for the library's
   own inner calls), after the ranks have agreed on the failure and before
   the call returns, with the call's name ("dt_tensor_redistribute"), its
   status and a copy of dt_last_error(); code built on the public API
   (dtensor_layers.h included) gets the same by bracketing its calls with
   dt_call_begin/dt_call_end (above), and outside a bracket
   dt_set_last_error calls it with the name its message starts with. The
   handler runs with the library's error state saved: the calls it makes
   do not call it again, and what they leave in dt_last_error() is put back
   when it returns. The call still returns its status when fn returns. NULL (the default) restores "no handler".
   Process-wide: set it before threads make calls. dt_error_abort is the
   stock handler: it prints "dtensor: rank R: CALL failed (STATUS): MSG" to
   stderr and calls MPI_Abort(MPI_COMM_WORLD, 1) (abort() without MPI);
   user is unused. The library itself never installs it. */
typedef void (*dt_error_handler)(dt_status st, const char *call, const char *msg, void *user);
DT_API void dt_set_error_handler(dt_error_handler fn, void *user);  /* local; process-wide */
DT_API void dt_error_abort(dt_status st, const char *call, const char *msg, void *user); /* prints, MPI_Abort */

/* DT_CHECK(call): evaluate a call returning dt_status; if it fails, print
   the rank, file:line, the call's text, the status and dt_last_error() to
   stderr and call MPI_Abort(MPI_COMM_WORLD, 1) (abort() without MPI).
   For programs and examples: the library never aborts on its own.
     DT_CHECK(dt_tensor_redistribute(t, to, &u));                          */
#define DT_CHECK(call)                                                                    \
    do {                                                                                  \
        dt_status dt_check_st_ = (call);                                                  \
        if (dt_check_st_ != DT_OK) dt_check_failed(dt_check_st_, #call, __FILE__, __LINE__); \
    } while (0)
DT_API void dt_check_failed(dt_status st, const char *expr, const char *file, int line); /* DT_CHECK's end: prints, MPI_Abort */

/* Cross-rank consistency checks (off by default). On: before every public
   call that communicates or must be collective (redistribute, gather,
   distribute, from_local, every op, halo exchange and stencils, random
   fills, I/O), the mesh ranks compare a hash of (the call, its input specs:
   dtype, global shape, placements, mesh, and its static and scalar args:
   dims, flags, destination placements). Ranks that disagree, or a rank that
   rejected its arguments while others accepted theirs, make the call fail
   with DT_ERR_MISMATCH on every rank before any byte moves (outputs and
   inputs untouched); the message names the call, the disagreeing mesh
   ranks, and rank 0's and the first disagreeing rank's arguments:
     "dt_tensor_redistribute: consistency check: ranks 2, 3 passed different
      arguments than rank 0 (rank 0: f32[8, 6] [S(0)] -> [R]; rank 2:
      f32[8, 6] [S(0)] -> [S(1)])"
   Checked too: every argument a rank can refuse on its own (NULL or empty
   paths, a NULL stencil callback, a NULL *out pointer, scalars out of range:
   lo >= hi, p outside [0, 1], a negative padding, an unknown mesh dim name,
   a feature size of 0) is refused before the comparison and takes part in
   it, and the scalars are compared (lo, hi, mean, std, p, padding,
   dilation, names, layer sizes, the placements and the path of a load), so
   one rank's bad argument gives every rank DT_ERR_MISMATCH and no rank
   draws random numbers, moves data or touches a file; the rank that
   refused its argument says why in its message, and the others' messages
   carry the lowest refusing rank's message whole (its remedy is often at
   its end; within dt_last_error's 511 bytes: where the list of ranks and
   the message do not both fit, "fn: rank R refused: " and the message).
   The one exception: an argument error that leaves a rank no mesh to talk
   on (a NULL mesh, a NULL input tensor, a NULL x of an op, conv or random
   fill, a NULL layer) returns DT_ERR_ARG on that rank at once, and the
   ranks that passed a valid one wait in the call. dt_tensor_empty/zeros communicate nothing and
   are not compared; dt_stencil_apply's callback and `user` are not
   compared (their addresses differ between processes).
   Always made, checks on or off: the agreement of mesh creation, slicing
   and flattening (the dims and names), of the I/O calls (path, spec,
   placements) and of halos and convolutions (desc, padding, dilation, the
   inputs' specs): there a rank's bad argument gives every rank an error
   (DT_ERR_MISMATCH on the others, its own error on that rank; with checks
   on DT_ERR_MISMATCH everywhere), never a wait or an MPI abort. Other
   calls with checks off trust the ranks to agree: different arguments are
   the caller's error (they may hang or compute garbage).
   Agreement steps allocate nothing before the ranks have exchanged their
   verdicts, and agree on the outcome of what they allocate after, so a
   rank that runs out of memory there fails every rank (DT_ERR_NOMEM naming
   it) instead of leaving them waiting.
   Cost: one small exchange per call (an allgather of 40 bytes a rank up
   to 32 ranks, a max-reduction above; a few microseconds, measured in the
   README), plus an allgather of (status, hash) and a broadcast of the
   refusing rank's message when one refused, or two allgathers when ranks
   disagree, so it is a debugging mode. Turn it on with DTENSOR_CHECK=1 in the
   environment (read once, at the first check or dt_get_checks) or with
   dt_set_checks(1), which overrides the environment. Not collective, but
   every rank must have the same setting whenever it makes a collective call
   (set it on all ranks between calls): a rank checking alone waits for the
   others. */
DT_API void dt_set_checks(int on);            /* local; 1: on, 0: off */
DT_API int dt_get_checks(void);               /* local; 1 if on */
/* the consistency check of a collective call built on the public API
   (dtensor_layers.h, your own layers), before it moves data: with checks
   on, the ranks of m compare fn, their verdicts on their own arguments
   (`local`: DT_OK, or the error this rank will return, its message in
   dt_last_error()), the spec of d (dtype, shape, placements; NULL: none),
   args[0..nargs) (sizes, flags, a hash of the rest; NULL and 0: none) and
   `what` (NULL or a short description of the args, for the message), and
   all fail alike as the library's own calls do (above): DT_ERR_MISMATCH
   naming fn, the ranks, and rank 0's and a disagreeing rank's d and what.
   Returns `local` when they agree, and `local` at once, without
   communicating, with checks off, on a one-rank mesh and on ranks outside
   m. m or fn NULL: DT_ERR_ARG at once; a d with ndim outside 0..DT_MAX_DIMS,
   nargs < 0 or args NULL with nargs > 0: this rank's DT_ERR_ARG, compared. */
DT_API dt_status dt_mesh_agree(const dt_mesh *m, const char *fn, dt_status local, const dt_tensor_desc *d,
                               const int64_t *args, int nargs, const char *what);  /* collective with checks on, else local */
/* a fingerprint of a tensor spec's fields (dtype, shape, placements and
   their split parameters, device; not its bytes: padding and a sizes
   array's address do not count), the one the consistency checks compare:
   for dt_mesh_agree's args when a call takes more than one spec */
DT_API uint64_t dt_tensor_desc_hash(const dt_tensor_desc *d);  /* pure; d non-NULL */

/* dtypes and placements */
DT_API size_t dt_dtype_size(dt_dtype t);      /* pure; 0 for an unknown dtype */
DT_API const char *dt_dtype_name(dt_dtype t); /* pure; "f32", ...; "?" if unknown */
DT_API dt_placement dt_replicate(void);  /* pure */
DT_API dt_placement dt_shard(int tensor_dim);                      /* pure; torch.chunk          */
DT_API dt_placement dt_shard_balanced(int tensor_dim);             /* pure; n/k + (c < n%k)      */
DT_API dt_placement dt_shard_sizes(int tensor_dim, const int64_t *sizes); /* pure; sizes[c], copied
                                                                      by the call taking it */
DT_API dt_placement dt_shard_cyclic(int tensor_dim, int64_t block); /* pure; ScaLAPACK blocks    */
/* block-cyclic with block 0 on mesh coordinate src (ScaLAPACK's RSRC for the
   rows, CSRC for the columns): block i is on coordinate (src + i) mod k.
   dt_shard_cyclic(d, b) is dt_shard_cyclic_src(d, b, 0). src outside
   0..k-1 (k: the mesh dim's size) is DT_ERR_PLACEMENT from every call that
   takes the placement. */
DT_API dt_placement dt_shard_cyclic_src(int tensor_dim, int64_t block, int src); /* pure */
DT_API dt_placement dt_partial(dt_reduce op);  /* pure */
/* placements and shapes as the library's messages write them, into buf
   (cap bytes, truncated, always terminated; cap > 0): "[S(0), R, P(sum)]",
   "[4, 6]"; return buf. For messages of code built on the public API. */
DT_API char *dt_placements_str(const dt_placement *p, int n, char *buf, size_t cap); /* pure */
DT_API char *dt_shape_str(const int64_t *shape, int n, char *buf, size_t cap);        /* pure */

/* communicators */
#ifndef DTENSOR_NO_MPI
/* collective over comm: dups it (MPI_ERRORS_RETURN on the dup). MPI must be
   initialised and not finalized, and below MPI_THREAD_SERIALIZED this must
   be MPI's main thread (DT_ERR_COMM otherwise; THREADS at the top) */
DT_API dt_status dt_comm_mpi(MPI_Comm comm, dt_comm **out);   /* collective (MPI_Comm_dup) */
#endif
DT_API dt_status dt_comm_self(dt_comm **out);                  /* local; one rank, no MPI          */
DT_API dt_status dt_comm_custom(const dt_comm_desc *desc, dt_comm **out);  /* local */
DT_API void      dt_comm_destroy(dt_comm *c);  /* collective: frees the backend's communicator (MPI_Comm_free for dt_comm_mpi) */
DT_API int       dt_comm_rank(const dt_comm *c);  /* local */
DT_API int       dt_comm_size(const dt_comm *c);  /* local */
DT_API dt_status dt_comm_barrier(dt_comm *c);  /* collective */
DT_API void      dt_comm_get_stats(const dt_comm *c, dt_comm_stats *s); /* local; incl. mesh sub-comms */
DT_API void      dt_comm_reset_stats(dt_comm *c);  /* local */
/* dt_comm_set_shm: whether meshes created on c afterwards (dt_mesh_create,
   collective) may use single-copy exchanges through MPI-3 shared memory when
   all their ranks share one node: mode 1 on (the shared arena made with
   the mesh), 2 auto (made at the mesh's first redistribution of a host
   tensor averaging DTENSOR_SHM_AUTO_MIN bytes a rank, default 1 MiB; small
   programs never make one), 0 off, -1 back to the environment (DTENSOR_SHM=
   auto|1|0; default auto). Set it alike on every rank. Built-in MPI backend
   and host tensors only; anything else, or ranks on several nodes, keeps
   the MPI path. See "Shared memory" in docs/guide.md. Local. DT_ERR_ARG:
   c NULL, mode outside -1..2. */
DT_API dt_status dt_comm_set_shm(dt_comm *c, int mode);  /* local */

/* dt_mesh_shm_alloc / dt_mesh_shm_free: storage, for arrays a program
   keeps and wraps itself (dt_tensor_from_local), that the single-copy path
   can read: `bytes` from this rank's segment of the mesh's shared arena
   (the way MPI_Alloc_mem gives memory MPI moves faster). A wrap of it
   moves like the library's own tensors; ordinary borrowed storage (malloc,
   the stack, a Fortran array) always moves by MPI. Where the mesh has no
   arena (the path off, ranks on several nodes, another backend) or its
   arena is full, *ptr comes from malloc, which is always correct, just not
   single-copy. Free with dt_mesh_shm_free, which finds the block by its
   address (m is not read: it may be NULL, or destroyed), before or after
   dt_mesh_destroy (a block still held then keeps the arena mapped until
   it is freed, or until MPI_Finalize); a block freed twice, or an address
   inside an arena that is not a block's start, is ignored. bytes 0: *ptr
   NULL. Local. DT_ERR_ARG: m or ptr NULL; DT_ERR_NOMEM. */
DT_API dt_status dt_mesh_shm_alloc(dt_mesh *m, size_t bytes, void **ptr);  /* local */
DT_API void      dt_mesh_shm_free(dt_mesh *m, void *ptr);  /* local: ptr NULL is a no-op */

/* meshes (all creation calls are collective over the comm / parent mesh) */
DT_API dt_status dt_mesh_create(dt_comm *comm, const dt_mesh_desc *desc, dt_mesh **out);  /* collective */
DT_API void      dt_mesh_destroy(dt_mesh *m);  /* collective: frees its communicators */
/* the work buffers a mesh keeps so that a time loop does not allocate
   (redistribution's send/receive and step buffers, op temporaries, device
   staging and pinned host buffers, host and device): freed now; the next
   call that needs one allocates it again. The tensors and the mesh's
   caches of plans and strategies stay. Local (no communication); call it
   between calls, not while a device's queued work may still use them (it
   frees device memory, which waits for the device). DT_ERR_ARG: m NULL. */
DT_API dt_status dt_mesh_trim(dt_mesh *m);  /* local */
/* dt_matmul's working memory on this mesh where it streams the contracted
   dim in panels instead of gathering it (SUMMA: a 2-D mesh's [S(0), S(1)]
   operands, or an operand split along the contracted dim; README "Matmul
   at scale"): at most `bytes` per rank beyond the inputs and the result,
   allocated for the call and freed before it returns. 0 (default): a
   quarter of the largest rank's a + b + result shard bytes, at least 64 KiB
   (DTENSOR_MATMUL_BUDGET=bytes sets the default). Local; give every rank
   the same (DTENSOR_CHECK compares it at each matmul: DT_ERR_MISMATCH).
   A matmul whose panel of width 1 does not fit is refused with
   DT_ERR_NOMEM on every rank before anything moves, naming the minimum.
   DT_ERR_ARG: m NULL, bytes < 0. */
DT_API dt_status dt_mesh_set_matmul_budget(dt_mesh *m, int64_t bytes);  /* local */
DT_API int       dt_mesh_coordinate(const dt_mesh *m, int *coord); /* local; 0: rank not in mesh */
DT_API int       dt_mesh_ndim(const dt_mesh *m);  /* local */
DT_API int       dt_mesh_dim_size(const dt_mesh *m, int dim);     /* local; 0 if dim out of range */
DT_API int       dt_mesh_size(const dt_mesh *m);                  /* local; ranks in the mesh    */
DT_API int       dt_mesh_rank(const dt_mesh *m);  /* local; row-major index in the mesh; -1 outside */
DT_API int       dt_mesh_dim_index(const dt_mesh *m, const char *name); /* local; -1 if unknown   */
DT_API const char *dt_mesh_dim_name(const dt_mesh *m, int dim);  /* local; "" if unnamed       */
/* the sub-mesh of the named dims (in the order given) that contains this rank */
DT_API dt_status dt_mesh_slice(const dt_mesh *m, int n, const char *const *names, dt_mesh **out);  /* collective */
/* the mesh with the named dims (adjacent, in mesh order) merged into one named `name` */
DT_API dt_status dt_mesh_flatten(const dt_mesh *m, int n, const char *const *names,
                                 const char *name, dt_mesh **out);  /* collective */

/* A reduction of a few numbers over the mesh -- a residual norm, a time
   step, a convergence flag -- without a tensor: values[0..count) (host
   memory, dtype elements) become, on every rank of m, op over the ranks
   along the mesh dims dims[0..ndims) (ndims 0, dims NULL: every mesh dim,
   the whole mesh, in one collective), in place; DT_AVG of floating and
   complex dtypes only (an integer mean truncates: reduce with DT_SUM and
   divide), DT_MAX/DT_MIN of real ones only (complex numbers have no
   order). Ranks outside m return
   DT_OK with values untouched. Collective over the ranks of m; dims,
   count, dtype and op must agree (compared under DTENSOR_CHECK=1). Bad
   arguments (unknown dtype or op, a dim out of range or named twice,
   values NULL with count > 0, a count whose bytes overflow, integer AVG,
   complex MAX/MIN): DT_ERR_ARG/DT_ERR_DTYPE, values untouched.
     double r2 = local_sum_of_squares;
     DT_CHECK(dt_mesh_allreduce(mesh, 0, NULL, &r2, 1, DT_F64, DT_SUM));  */
DT_API dt_status dt_mesh_allreduce(dt_mesh *m, int ndims, const int *dims, void *values, size_t count, dt_dtype dtype,
                                   dt_reduce op); /* collective */

/* tensors. A shape is accepted when its dims, a 0 counted as 1, times the
   dtype's size fit in int64: [0, 2^62] f64 has no elements but is
   DT_ERR_SHAPE (no index arithmetic over it could be exact). Every op
   refuses a result that breaks the rule (DT_ERR_SHAPE, nothing written). */
DT_API dt_status dt_tensor_empty(dt_mesh *m, const dt_tensor_desc *d, dt_tensor **out);  /* local: no communication */
DT_API dt_status dt_tensor_zeros(dt_mesh *m, const dt_tensor_desc *d, dt_tensor **out);  /* local: no communication */
/* Wrap (DT_BORROW, zero copies) or copy (DT_COPY) this rank's part of an
   existing decomposition. Collective, always: a rank whose arguments fail
   fails every rank (rank 0's message then carries the first failing
   rank's own reason), nothing hangs.
   How the buffer's size is known -- the library reads exactly the local
   shape's elements, never more:
   - desc->local_shape given: it must equal the shape the placements give
     this rank; checked on every rank, with or without DT_VERIFY, and one
     rank's mismatch fails every rank (the wrap's one agreement, below).
     The message names the rule that would give that shape where a near
     one does: dt_shard_balanced for a dt_shard (torch.chunk) whose parts
     differ from an MPI code's N/k + (c < N%k), dt_shard_cyclic_src for a
     block-cyclic array whose first block is on another coordinate
     (ScaLAPACK RSRC/CSRC != 0). Where the wrong rule gives every rank the
     right shape (a cyclic source on a matrix whose blocks divide evenly)
     nothing can tell: the shapes agree and the bytes are unreadable to
     any check. Take a ScaLAPACK array's rule from its descriptor
     (dt_tensor_desc_from_scalapack) instead of writing it by hand.
   - DT_INFER_SIZES (local_shape required): each rank's local_shape is the
     truth. A code that knows only its own size (PETSc's PETSC_DECIDE, any
     N/k + (r < N%k) split, a hand-made ragged one) wraps its buffer as it
     is: each tensor dim split by one mesh dim becomes dt_shard_sizes of
     the gathered sizes (one allgather of ndim words per rank); unsplit dims
     must be whole, ranks holding the same part must agree, the sizes must
     add up; a dim split by several mesh dims is DT_ERR_PLACEMENT.
   - no local_shape: the buffer must hold the local shape the placements
     give (dt_layout tells it). DT_VERIFY then refuses a torch.chunk split
     whose parts differ from the balanced rule's (10 over 4: 3,3,3,1 versus
     3,3,2,2), the one split it could not tell apart from an MPI code's.
     Without DT_VERIFY nothing can check the size of a pointer: pass
     local_shape. DTENSOR_CHECK=1 (or dt_set_checks(1)) implies DT_VERIFY
     here.
   - ghosted or strided storage (local_ghost, local_strides): local_shape
     is required (DT_ERR_ARG without it), and so are desc->local_alloc and
     desc->local_alloc_bytes, the allocation `local` lies in (not needed
     on a rank whose storage is empty): the wrap reads through offsets it
     computes, so a wrong rule or `local` at the interior (&A(1,1)) instead
     of the array's start would read outside the caller's memory, and a
     pointer has no size to check. Every rank checks that the storage,
     from `local`, lies inside [local_alloc, local_alloc + local_alloc_bytes)
     (DT_ERR_ARG, naming the bytes past the end and, with ghost room, the
     interior-pointer mistake, or, when local_alloc_bytes is the storage's
     count of elements (the storage, up to less than a row of padding, in
     that many elements: sizeof forgotten), saying so with the bytes it
     should be); one rank's failure fails every rank.
   Cost: these checks are local arithmetic, and the wrap's one agreement
   (a 5-word allreduce on a mesh of more than one rank) was already made;
   they run in dt_tensor_from_local only, a set-up call, never in ops,
   redistributions or halo exchanges.
   Ghosted arrays (desc->local_ghost, DT_BORROW only): a stencil code keeps
   its field in one array with ghost cells around the interior. Then
   `local` is the START of that array: row-major with the shape
   local_shape[d] + 2*local_ghost[d] (the local shape the placements give,
   widened by local_ghost[d] cells on both sides of every tensor dim d; a 0
   adds nothing). The tensor's interior is the part inside the ghost room:
   dt_tensor_data points at interior element 0, i.e. at
   local + sum(local_ghost[d] * stride[d]) elements, and keeps meaning
   "local element 0"; dt_tensor_local_strides gives the storage's strides.
   A halo (dt_tensor_set_halo) no wider than the ghost room then lives in
   the array itself: dt_halo_exchange writes the ghost cells in place, with
   no copy of the interior (see the halo section). The rest of the library
   sees a ghosted array as strided storage (below): only the interior is
   read or written, never the ghost room.
   Refused with DT_ERR_ARG, nothing written: local_ghost with DT_COPY, a
   negative width, widths whose array size overflows, no local_shape, no
   local_alloc / local_alloc_bytes, `local` whose ghosted array would end
   past the allocation (the interior pointer, or local_alloc_bytes given as
   a count of elements).
   Device arrays (desc->device = DT_CUDA) take local_ghost, local_strides
   and block-cyclic placements as host arrays do; local_alloc is then the
   device allocation (cudaMalloc's pointer), checked by the same
   arithmetic, never by reading device memory. DT_ERR_DEVICE, naming the
   field: `local` or local_alloc (DT_BORROW) not in the memory the desc
   says -- a host pointer wrapped as a device array, or device memory
   (managed memory included: wrap it as DT_CUDA) as a host one; asked of
   the device (cudaPointerGetAttributes), before the range check.
   Strided storage (desc->local_strides, and every ghosted array): the
   shard's elements sit at sum(i[d] * stride[d]) from dt_tensor_data, with
   padding between them that the library never reads or writes (a padded
   leading dim, a column-major array, one field of an array of structs).
   Host and device tensors alike (a device's copies are its own box-copy
   kernels and its allocations device memory: a device shard is never
   copied whole into host memory except where a contiguous device shard
   would be, staging over plain MPI). Every call takes such a tensor, in
   one of three ways:
   - read/written through the strides, no copy of the shard:
     dt_tensor_redistribute as source and as *out (the box and piece
     exchanges pack from and unpack into the strides; cyclic and reduction
     plans make one contiguous copy), dt_tensor_gather (packed once),
     dt_tensor_from_local(DT_COPY) (gathered into the new contiguous
     shard), dt_halo_exchange / dt_stencil_apply on a ghosted array (the
     halo section); random fills (dt_uniform_, dt_normal_, dt_bernoulli_,
     dt_randint_, dt_tensor_rand / dt_tensor_randn into a strided *out,
     dt_dropout's x and *out): written in place, one kernel call per span of
     the last dim (through a 32-element stack buffer when that dim is not
     unit-stride), every value bit-identical to the same fill of a
     contiguous tensor; op inputs of the binary family (dt_add, dt_sub,
     dt_mul, dt_div, dt_maximum, dt_minimum, dt_axpy's x and y: the kernel
     walks any strides, broadcasting included), of the unary family and
     dt_cast when the last dim is unit-stride (one kernel call per row),
     and of dt_narrow;
   - read in place by a streamed matmul (dt_matmul's SUMMA: the panels an
     owner sends are packed from its strides, the ones it multiplies are
     read through them);
   - through one contiguous copy of the shard, allocated and freed by
     the call: every other op input (reductions, softmax, norms, matmul,
     views, cat/stack, embedding, cross-entropy; unary inputs whose last
     dim is not unit-stride); a strided op *out (the op runs into a
     contiguous copy of *out's shard, written back through the strides only
     after the op succeeded: on failure *out keeps every byte);
     dt_tensor_save_npy (the writing ranks' shards) and dt_tensor_load_npy
     into a strided *out (read contiguous, then written through the
     strides);
   - refused with DT_ERR_UNSUPPORTED ("...: x has strided local storage
     (strides [...]); this call takes contiguous shards"), nothing written:
     convolution (x, w, bias, *out), dt_tensor_scalapack_desc (its local
     leading dimension is not the shard's), a strided *out of
     dt_stencil_apply, a strided *mask of dt_dropout; on a device tensor,
     the random fills of strided storage whose last dim is not unit-stride
     (the host's stack buffer has no device counterpart: fill a contiguous
     tensor and redistribute it in).
   Whether a tensor is strided is each rank's own business: the
   consistency checks (DTENSOR_CHECK) compare the specs (dtype, shape,
   placements, device), never local_strides, local_ghost or the storage,
   and one rank may pass strided storage where the others pass contiguous
   buffers. */
DT_API dt_status dt_tensor_from_local(dt_mesh *m, const dt_tensor_desc *d, void *local,
                                      unsigned flags, dt_tensor **out);
/* src_rank: the mesh rank whose `full` (global row-major array) is sent, each
   rank getting only its shard; DT_SRC_ALL: every rank passes the same full
   data and takes its part with no communication. Partial placements follow
   Replicate -> Partial (SUM: the value on coordinate 0, zeros elsewhere). */
DT_API dt_status dt_tensor_distribute(dt_mesh *m, const dt_tensor_desc *d, const void *full,
                                      int src_rank, dt_tensor **out);  /* collective */
/* one entry per mesh dim. *out NULL: a new tensor; *out non-NULL with the
   target spec (same mesh, dtype, shape, placements): its buffer is reused
   (same address, DT_BORROW buffers included).
   On failure (any status) a new *out is not made and an existing *out keeps
   every byte: the library writes *out's buffer only in the plan's last
   step, after everything on its side that can fail (checks, allocations,
   earlier steps), and the collectives it builds over sendrecv for backends
   without them (dt_comm_desc) receive into a buffer of their own, copied
   into *out once every message has arrived. Exceptions, where the data is
   written in place to spare a copy of the result on every call: (1) on the
   zero-copy paths *out's buffer is the receive buffer of a collective the
   backend implements itself (dt_comm_desc.allgatherv / alltoallv /
   allreduce / reduce_scatter; MPI's and NCCL's), and one that fails
   part-way may have written part of it (MPI leaves a failed collective's
   receive buffer undefined); (2) device tensors: a device copy into *out
   that fails. The same holds for dt_tensor_gather's `full`. */
DT_API dt_status dt_tensor_redistribute(const dt_tensor *t, const dt_placement *placements,
                                        dt_tensor **out);  /* collective */
/* dt_tensor_redistribute_reduce: *out = out (op) redistribute(t, placements),
   elementwise, in one pass: the redistribution's last step combines what it
   unpacks with what `out` holds (op DT_SUM: `B += A^T` is one call when B's
   storage is wrapped as the transpose's layout; DT_MAX, DT_MIN: elementwise
   max / min). `out` must already exist with t's mesh, global shape, dtype and
   device and exactly `placements`; it may wrap borrowed, ghosted or strided
   storage (local_strides), and may be t itself (then out = out op out).
   Steps that cannot combine as they unpack (a Partial source's reduction as
   the last step, the block-cyclic span exchange, staged strided storage)
   run into a scratch buffer and one combining pass follows over out's box.
   Collective over t's mesh (ranks outside it return DT_OK, out untouched).
   Errors, the same on every rank (DTENSOR_CHECK agreement on op and the
   specs): DT_ERR_ARG (t, placements or out NULL; op not DT_SUM/MAX/MIN:
   DT_AVG is refused, it is no elementwise accumulation), DT_ERR_PLACEMENT
   (placements invalid or not out's; a Partial destination placement:
   reduce it to Replicate or Shard first), DT_ERR_SHAPE / DT_ERR_DTYPE /
   DT_ERR_MESH (out's spec), DT_ERR_DTYPE (complex with DT_MAX/DT_MIN). On
   any error out is untouched (everything is checked before a byte moves).
   F16 and BF16 combine in F32 and round back; integers wrap as the type
   does. Device tensors combine on their device (a device kernel); over a
   backend that takes the other memory (plain MPI and a device tensor) the
   redistributed values are staged into device scratch and combined there,
   out never copied to the host. */
DT_API dt_status dt_tensor_redistribute_reduce(const dt_tensor *t, const dt_placement *placements, dt_reduce op,
                                               dt_tensor *out);  /* collective */
/* The same, asynchronous: _begin checks and agrees exactly as the blocking
   call (same errors, on every rank, nothing written on failure), makes or
   takes *out / out, and starts the exchange; _end completes it, after
   which out holds the result. Between them: t is not written, out is
   neither read nor written (a call given out refuses it: DT_ERR_ARG), and
   other calls run, other redistributions begun among them (any number,
   on different outs; begin and end them in the same order on every rank:
   their checks agree across ranks). A halo exchange's _begin/_end may sit
   anywhere among them, in a different place on different ranks: its
   messages carry a tag of their own (dt_message.tag) and, with
   DTENSOR_CHECK off, its calls take no collective (not over NCCL, which
   has no tags).
   A plan of one exchange (S->S, S->R, a transpose of a 2-D mesh's
   placements: one piece exchange or gather) over a backend with
   start/wait (MPI, NCCL, a custom one) posts its messages in _begin: the
   sends are packed then, so t may be written or destroyed once _begin
   returns; every other plan (several steps, Partial reductions, staged
   device or strided storage, a backend without start) runs whole inside
   _begin, and _end only returns. Over MPI a large message moves inside MPI
   calls: between pieces of work, dt_tensor_redistribute_test moves it on
   (or run MPI's own progress thread). _end collective: an out with nothing
   outstanding (never begun, ended twice) is DT_ERR_ARG on every rank.
   dt_tensor_destroy(out) before _end completes the messages (no hang, no
   leak) and reports DT_ERR_ARG through dt_last_error and the error hook. */
DT_API dt_status dt_tensor_redistribute_begin(const dt_tensor *t, const dt_placement *placements,
                                              dt_tensor **out);  /* collective */
DT_API dt_status dt_tensor_redistribute_reduce_begin(const dt_tensor *t, const dt_placement *placements,
                                                     dt_reduce op, dt_tensor *out);  /* collective */
DT_API dt_status dt_tensor_redistribute_end(dt_tensor *out);     /* collective; ends either begin */
/* local: moves out's messages on; *done = 1 once they have all arrived (then _end only unpacks) */
DT_API dt_status dt_tensor_redistribute_test(dt_tensor *out, int *done);
/* the full global tensor into `full` on every mesh rank (collective; ranks
   outside the mesh return DT_OK and leave `full` untouched) */
DT_API dt_status dt_tensor_gather(const dt_tensor *t, void *full);  /* collective */
DT_API void     *dt_tensor_data(const dt_tensor *t);            /* local; local shard, row-major; strided
                                                                   storage (local_strides): element
                                                                   0; a ghosted array (local_ghost):
                                                                   interior element 0, strided */
/* the element strides of t's local storage per dim (strides may be NULL);
   returns ndim. Row-major strides of the local shape for a contiguous
   shard, desc->local_strides for one wrapped with them, the ghosted
   array's strides (local_shape + 2*local_ghost) for one wrapped with
   local_ghost. */
DT_API int       dt_tensor_local_strides(const dt_tensor *t, int64_t *strides);  /* local */
DT_API const dt_tensor_desc *dt_tensor_get_desc(const dt_tensor *t); /* local; dims normalised */
DT_API dt_mesh  *dt_tensor_mesh(const dt_tensor *t);  /* local */
DT_API void      dt_tensor_local_shape(const dt_tensor *t, int64_t *shape);  /* local */
/* global index of local element 0; an empty part sits at the end of its parent */
DT_API void      dt_tensor_local_offset(const dt_tensor *t, int64_t *offset);  /* local */
DT_API size_t    dt_tensor_local_numel(const dt_tensor *t);  /* local */
/* this rank's elements to zero, in the tensor's memory (host or device;
   of strided or ghosted storage the elements only, never the padding or
   the ghost room); no communication, unlike the op dt_fill */
DT_API dt_status dt_tensor_zero_local(dt_tensor *t);  /* local */
DT_API void      dt_tensor_destroy(dt_tensor *t);  /* local */

/* pure layout: the local shape and offset of mesh coordinate `coord` */
DT_API dt_status dt_layout(const dt_mesh *m, const dt_tensor_desc *d, const int *coord,
                           int64_t *local_shape, int64_t *local_offset);  /* pure */
/* The general accessor, for every rule (a cyclic part is a set of boxes):
   the global index of each local position along tensor dim `dim`, in local
   order (local_shape[dim] entries, increasing). Element (i0, i1, ...) of the
   local buffer is global element (idx0[i0], idx1[i1], ...). */
DT_API dt_status dt_layout_indices(const dt_mesh *m, const dt_tensor_desc *d, const int *coord, int dim,
                                   int64_t *global_index);  /* pure */
DT_API dt_status dt_tensor_local_indices(const dt_tensor *t, int dim, int64_t *global_index);  /* local */

/* ScaLAPACK interop, zero copies: the array descriptor under which
   ScaLAPACK reads and writes a block-cyclic matrix's local buffer as it is.
   The buffer is row-major, ScaLAPACK column-major, so ScaLAPACK sees the
   TRANSPOSE. A tensor T (M x N, f32 or f64, host memory) on a 2-D mesh
   P x Q with placements [dt_shard_cyclic(0, mb), dt_shard_cyclic(1, nb)]
   is the ScaLAPACK matrix A = T^T (N x M) with
     desc = {1, ictxt, N, M, nb, mb, 0, 0, max(1, T's local columns)}
   (LLD_ is the row stride instead for a wrap of a padded array: strided
   storage {LLD_, 1} without ghosts, as dt_tensor_desc_from_scalapack makes
   it, round-trips; other strided or ghosted storage is DT_ERR_UNSUPPORTED)
   (RSRC, CSRC = desc[6], desc[7] are the src of dt_shard_cyclic_src on the
   dim of A's rows, T's dim 1, and of A's columns, T's dim 0; 0 otherwise)
   on a BLACS grid of nprow = Q by npcol = P in column-major order ("C"):
   mesh coordinate (p, q), mesh rank p*Q + q, is grid row q, column p, BLACS
   number q + p*Q. The transposed order [dt_shard_cyclic(1, nb),
   dt_shard_cyclic(0, mb)] gives the same desc on a grid of nprow = P by
   npcol = Q in row-major order ("R"): coordinate (p, q) is row p, column q.
   Either way the BLACS number of every process is its mesh rank. A chunk,
   balanced or sizes split is taken where it is exactly block-cyclic (one
   block per coordinate, in order, all but the last non-empty one full):
   dt_shard always (block max(1, ceil(n/k))), dt_shard_balanced where k
   divides n, n <= k or n % k == k - 1, sizes of that form. A cyclic block
   longer than its extent is the extent. Refused: other placements
   (Replicate, Partial, one tensor dim sharded twice: DT_ERR_PLACEMENT), a
   tensor that is not 2-D or an extent above INT_MAX (DT_ERR_SHAPE), a mesh
   that is not 2-D (DT_ERR_MESH), other dtypes (DT_ERR_DTYPE), device
   memory (DT_ERR_UNSUPPORTED).
   Local (no communication); `desc` or `grid` may be NULL (not both). Learn
   the grid first (desc NULL), make the context, then get the desc:
     dt_scalapack_grid g;  int ictxt, desc[9];
     dt_tensor_scalapack_desc(t, 0, NULL, &g);
     Cblacs_get(-1, 0, &ictxt);   (a mesh over MPI_COMM_WORLD in rank order;
                                   else Csys2blacs_handle(its comm) and, for a
                                   mesh with `ranks`, Cblacs_gridmap)
     Cblacs_gridinit(&ictxt, g.order, g.nprow, g.npcol);
     dt_tensor_scalapack_desc(t, ictxt, desc, NULL);
   Ranks outside the mesh get myrow = mycol = -1 and LLD 1. C = A B on
   tensors is C^T = B^T A^T for ScaLAPACK, so with T-shaped names
     pdgemm_("N", "N", &N, &M, &K, &one, B, .., descB, A, .., descA, &zero, C, .., descC)
   and the system T x = b is A^T x = b: pdgetrf then pdgetrs with "T". */
typedef struct dt_scalapack_grid {
    int nprow, npcol;  /* the BLACS grid: Q x P for [S(0), S(1)], P x Q for [S(1), S(0)] */
    char order[2];     /* "C" or "R", as Cblacs_gridinit takes it                          */
    int myrow, mycol;  /* this rank's place in it; -1 outside the mesh                     */
} dt_scalapack_grid;
DT_API dt_status dt_tensor_scalapack_desc(const dt_tensor *t, int ictxt, int desc[9], dt_scalapack_grid *grid);  /* local */
/* The inverse: the tensor spec of an existing ScaLAPACK array, so that its
   local buffer is wrapped as it is (dt_tensor_from_local, DT_BORROW, zero
   copies) with the right rule, RSRC/CSRC included. Pure.
     desc         the array's descriptor DESC(9): {DTYPE_ = 1, CTXT_, M_, N_,
                  MB_, NB_, RSRC_, CSRC_, LLD_} (CTXT_ is not read)
     grid         the BLACS grid of the context: nprow, npcol, order ("R"
                  or "C", as given to Cblacs_gridinit; the BLACS numbers are
                  then the mesh ranks), myrow, mycol (Cblacs_gridinfo; both
                  -1 on a process outside the grid)
     dtype        DT_F32 (ps*) or DT_F64 (pd*)
     out          written: dtype, ndim 2, shape {N_, M_} (the row-major
                  tensor T = A^T, as in dt_tensor_scalapack_desc) and the
                  placements of the mesh that matches the grid, every
                  other field zero but those below:
                    order "C": a mesh {npcol, nprow},
                      [dt_shard_cyclic_src(0, NB_, CSRC_), dt_shard_cyclic_src(1, MB_, RSRC_)]
                    order "R": a mesh {nprow, npcol},
                      [dt_shard_cyclic_src(1, MB_, RSRC_), dt_shard_cyclic_src(0, NB_, CSRC_)]
     local_shape  NULL, or 2 entries: this process's part {LOCc(N_),
                  LOCr(M_)} (NUMROC with the sources), and out->local_shape
                  points at it (zeros outside the grid)
     local_strides NULL, or 2 entries: {LLD_, 1}; out->local_strides points
                  at it only where LLD_ pads the columns (LLD_ > LOCr), and
                  out->local_alloc_bytes is then the local array's size
                  (LLD_ x LOCc elements): set out->local_alloc to the array.
   Refused with DT_ERR_ARG, out untouched, the message naming the entry:
   DTYPE_ != 1, M_ or N_ < 0, MB_ or NB_ <= 0, a grid with nprow or npcol
   <= 0 or an order other than "R"/"C", RSRC_ outside 0..nprow-1, CSRC_
   outside 0..npcol-1, myrow / mycol outside the grid (other than both -1),
   LLD_ < max(1, LOCr); DT_ERR_DTYPE: other dtypes. A block longer than its
   extent comes back from dt_tensor_scalapack_desc as the extent, and LLD_
   as max(1, LOCr) (a contiguous shard); otherwise the round trip gives
   the same descriptor. See docs/guide.md, "Wrapping an existing ScaLAPACK
   array". */
DT_API dt_status dt_tensor_desc_from_scalapack(const int desc[9], const dt_scalapack_grid *grid, dt_dtype dtype,
                                               dt_tensor_desc *out, int64_t *local_shape,
                                               int64_t *local_strides);  /* pure */

/* debug: a table mesh coordinate -> rank -> global index ranges held. Local
   (no communication): call it on one rank. */
DT_API dt_status dt_tensor_print_sharding(const dt_tensor *t, FILE *f);  /* local */

/* ---- ops ----
   Every op takes its inputs first and `dt_tensor **out` last. It checks the
   inputs, picks a sharding strategy from the static table (>>registry):
   the input placements it needs and the output placement it produces, on
   each mesh dim, the cheapest by the bytes the input redistributions move
   (ties broken by table order, so every rank chooses the same), moves what
   must move, runs the local kernel and wraps the result, which may be
   Partial. Choices are cached per mesh (DT_OP_CACHE entries).
   *out == NULL: a new tensor is made. *out != NULL: it must already have
   the propagated spec (mesh, dtype, shape, placements) and its buffer is
   reused, so a time loop allocates nothing after its first step; a wrong
   *out is an error and is not touched. *out may be an input of a pointwise
   op (in place); other ops refuse an *out that aliases an input.
   Strided storage (local_strides, ghosted arrays; see dt_tensor_from_local):
   the binary family, the unary family and dt_cast (unit-stride last dim)
   and dt_narrow read a strided input in place; every other op input is
   read through one contiguous copy each (allocated per call, freed at
   its end). A strided *out: the op runs into one contiguous copy of its
   shard, written back through its strides once the op has succeeded (the
   padding is never written; on failure *out is untouched).
   All inputs live on one mesh. A 0-d tensor on another mesh (a "host
   scalar", e.g. made on a dt_comm_self mesh) is taken as replicated;
   anything else on another mesh is DT_ERR_MESH naming both arguments.
   Dtypes: the inputs of an op have one dtype (use dt_cast); float-only
   ops refuse integer tensors; F16/BF16 compute in F32. All ops are
   collective over the mesh (the ranks must call them in the same order).
   Complex (DT_C64, DT_C128; host and device tensors) is taken by: dt_neg, dt_scale,
   dt_shift and dt_fill (a real scalar a, as a + 0i), dt_copy, dt_exp,
   dt_add, dt_sub, dt_mul (the complex product), dt_div, dt_axpy (real a),
   dt_sum, dt_mean, dt_matmul, dt_mm, dt_bmm, dt_addmm, dt_linear, dt_dot
   (no conjugation, as torch.dot; the BLAS's cgemm/zgemm, or loops in
   double), the views (transpose, permute, squeeze, unsqueeze, reshape,
   narrow, cat, stack) and dt_cast to c64/c128 (a real x -> x + 0i). Every
   other op (abs, log, sqrt, the activations, pow, maximum/minimum,
   max/min/argmax/norm2, softmax, norms, embedding, cross-entropy, cast to
   a real dtype) is DT_ERR_DTYPE on every rank: complex numbers have no
   order, and those ops are not computed on the pairs as if they were reals.
   Device tensors (DT_CUDA) take the same ops: the device kernels compute
   on the pairs in double as the host's loops do (matmul: loops in double,
   not cuBLAS). */

/* pointwise unary: out = f(x), same shape, dtype and placements where the
   math allows (Partial passes through where f commutes with the reduction:
   neg, scale; max/min through monotone f; an integer Partial(AVG) only
   through neg and copy, see dt_reduce) */
DT_API dt_status dt_neg(const dt_tensor *x, dt_tensor **out);  /* collective */
DT_API dt_status dt_abs(const dt_tensor *x, dt_tensor **out);  /* collective */
DT_API dt_status dt_exp(const dt_tensor *x, dt_tensor **out);  /* collective */
DT_API dt_status dt_log(const dt_tensor *x, dt_tensor **out);  /* collective */
DT_API dt_status dt_sqrt(const dt_tensor *x, dt_tensor **out);  /* collective */
DT_API dt_status dt_rsqrt(const dt_tensor *x, dt_tensor **out);  /* collective */
DT_API dt_status dt_sin(const dt_tensor *x, dt_tensor **out);  /* collective */
DT_API dt_status dt_cos(const dt_tensor *x, dt_tensor **out);  /* collective */
DT_API dt_status dt_tanh(const dt_tensor *x, dt_tensor **out);  /* collective */
DT_API dt_status dt_sigmoid(const dt_tensor *x, dt_tensor **out);  /* collective */
DT_API dt_status dt_relu(const dt_tensor *x, dt_tensor **out);  /* collective */
DT_API dt_status dt_gelu(const dt_tensor *x, dt_tensor **out);  /* collective; exact: x/2 (1 + erf(x/sqrt 2)), computed as x/2 erfc(-x/sqrt 2) (no cancellation for x < 0) */
DT_API dt_status dt_silu(const dt_tensor *x, dt_tensor **out);  /* collective */
DT_API dt_status dt_scale(const dt_tensor *x, double a, dt_tensor **out); /* collective; x * a */
DT_API dt_status dt_shift(const dt_tensor *x, double a, dt_tensor **out); /* collective; x + a */
DT_API dt_status dt_pow(const dt_tensor *x, double p, dt_tensor **out);   /* collective; x ^ p */
DT_API dt_status dt_cast(const dt_tensor *x, dt_dtype to, dt_tensor **out);  /* collective */
DT_API dt_status dt_copy(const dt_tensor *x, dt_tensor **out);  /* collective */
DT_API dt_status dt_fill(const dt_tensor *x, double value, dt_tensor **out); /* collective; x's spec, every
                                                 element `value`; a Partial x gives Replicate */

/* pointwise binary with numpy broadcasting (shapes aligned at the right,
   size-1 dims stretch) */
DT_API dt_status dt_add(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);  /* collective */
DT_API dt_status dt_sub(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);  /* collective */
DT_API dt_status dt_mul(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);  /* collective */
DT_API dt_status dt_div(const dt_tensor *a, const dt_tensor *b, dt_tensor **out); /* collective; floats */
DT_API dt_status dt_maximum(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);  /* collective */
DT_API dt_status dt_minimum(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);  /* collective */
/* y <- a*x + y in place: y keeps its spec, x is brought to it. An integer y
   that is Partial(AVG) on a mesh dim of more than one rank is refused
   (DT_ERR_PLACEMENT): its truncated mean cannot be updated part by part */
DT_API dt_status dt_axpy(double a, const dt_tensor *x, dt_tensor *y);  /* collective */

/* reductions over `ndims` dims (negative counts from the end; ndims == 0 or
   dims == NULL: all dims), keepdim as in PyTorch. A reduction over a
   sharded dim gives Partial (sum, mean: SUM; max: MAX; min: MIN) and moves
   nothing; norm2 and argmax finish with the collective they need. mean is
   for floats; argmax gives I64 indices (first maximum), over one dim (or
   all dims: the flat index). max, min and argmax of nothing (a reduced dim
   of size 0, or all dims of a tensor without elements) are DT_ERR_SHAPE,
   as in torch; the sum of nothing is 0 and the mean of nothing 0/0, NaN
   (complex: NaN+NaNi), as in torch, whatever the placements (an integer
   mean, which has no NaN, is DT_ERR_DTYPE naming the dtype and dims) */
DT_API dt_status dt_sum(const dt_tensor *x, int ndims, const int *dims, int keepdim, dt_tensor **out);  /* collective */
DT_API dt_status dt_mean(const dt_tensor *x, int ndims, const int *dims, int keepdim, dt_tensor **out);  /* collective */
DT_API dt_status dt_max(const dt_tensor *x, int ndims, const int *dims, int keepdim, dt_tensor **out);  /* collective */
DT_API dt_status dt_min(const dt_tensor *x, int ndims, const int *dims, int keepdim, dt_tensor **out);  /* collective */
DT_API dt_status dt_norm2(const dt_tensor *x, int ndims, const int *dims, int keepdim, dt_tensor **out);  /* collective */
DT_API dt_status dt_argmax(const dt_tensor *x, int ndims, const int *dims, int keepdim, dt_tensor **out);  /* collective */

/* matmul family (local GEMM: BLIS for F32/F64).
   On a mesh where the chosen strategy gathers an operand along the
   contracted dim k (a 2-D mesh's a, b, c all [S(0), S(1)]: a's k over
   mesh dim 1, b's over mesh dim 0; a 1-D mesh whose b is split along k),
   k is streamed instead (SUMMA): panel by panel, the rank holding a
   panel sends it along its mesh-dim row (dt_comm_desc.start/wait, the
   next panel in flight while this one multiplies), every rank multiplies
   it into its block of the result. Working memory: the budget of
   dt_mesh_set_matmul_budget (default a quarter of the largest rank's
   a + b + result shard bytes), freed before the call returns; every split
   rule, strided and ghosted storage (read in place), F16/BF16 (rounded
   into the result once a panel), complex, devices whose backend takes
   device memory (NCCL). Small products (gathered blocks within the budget
   and 256 KiB) gather: DTENSOR_MATMUL=stream|gather|auto, DTENSOR_LOG=ops
   names the choice. Other strategies (an operand that moves otherwise, a
   Partial result) run as before.
   2.5D: a mesh dim over which a, b and the result are all Replicate (a
   [P, Q, c] mesh's [S(0), S(1), R]) holds c copies of the product; the
   copies split k (each streams and multiplies 1/c of every owner's part)
   and their result blocks are summed (an allreduce over the dim), unless
   the cost model finds k too short (DTENSOR_MATMUL_LAYERS=on|off|auto;
   docs/guide.md "Matmul at scale"). dt_comm_stats' matmul_bytes_recv and
   matmul_bound count the bytes received and their lower bound. */
DT_API dt_status dt_matmul(const dt_tensor *a, const dt_tensor *b, dt_tensor **out); /* collective; [...,m,k]x[...,k,n],
                                                 batch dims broadcast; 1-D operands as in torch.matmul */
DT_API dt_status dt_mm(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);     /* collective; 2-D only */
DT_API dt_status dt_bmm(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);    /* collective; 3-D, equal batch */
DT_API dt_status dt_addmm(const dt_tensor *c, const dt_tensor *a, const dt_tensor *b, double beta,
                          double alpha, dt_tensor **out);                 /* collective; beta*c + alpha*(a@b) */
DT_API dt_status dt_linear(const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias,
                           dt_tensor **out);     /* collective; x[...,in] w[out,in] bias[out] or NULL: x@w^T + bias */
DT_API dt_status dt_dot(const dt_tensor *a, const dt_tensor *b, dt_tensor **out); /* collective; 1-D . 1-D -> 0-d */

/* along one dim (softmax) or the last dim (norms; w, b may be NULL) */
DT_API dt_status dt_softmax(const dt_tensor *x, int dim, dt_tensor **out);  /* collective */
DT_API dt_status dt_log_softmax(const dt_tensor *x, int dim, dt_tensor **out);  /* collective */
DT_API dt_status dt_layer_norm(const dt_tensor *x, const dt_tensor *w, const dt_tensor *b, double eps,
                               dt_tensor **out);  /* collective */
DT_API dt_status dt_rms_norm(const dt_tensor *x, const dt_tensor *w, double eps, dt_tensor **out);  /* collective */

/* views (new tensors: the local data is copied, and moved between ranks
   only where the sharding of the result cannot be the input's) */
DT_API dt_status dt_transpose(const dt_tensor *x, int d0, int d1, dt_tensor **out);  /* collective */
DT_API dt_status dt_permute(const dt_tensor *x, const int *perm, dt_tensor **out);  /* collective */
DT_API dt_status dt_reshape(const dt_tensor *x, int ndim, const int64_t *shape, dt_tensor **out); /* collective; one -1 */
DT_API dt_status dt_squeeze(const dt_tensor *x, int dim, dt_tensor **out);   /* collective; no-op if size != 1 */
DT_API dt_status dt_unsqueeze(const dt_tensor *x, int dim, dt_tensor **out);  /* collective */
DT_API dt_status dt_narrow(const dt_tensor *x, int dim, int64_t start, int64_t length, dt_tensor **out);  /* collective */
DT_API dt_status dt_cat(int n, const dt_tensor *const *xs, int dim, dt_tensor **out);  /* collective; n = 1..8 inputs (DT_ERR_ARG otherwise) */
DT_API dt_status dt_stack(int n, const dt_tensor *const *xs, int dim, dt_tensor **out);  /* collective; n = 1..8 inputs (DT_ERR_ARG otherwise) */
/* n pieces of sizes[i] along dim (they must add up to the dim); outs[i] as *out */
DT_API dt_status dt_split(const dt_tensor *x, int dim, int n, const int64_t *sizes, dt_tensor **outs);  /* collective */

/* embedding: table[V,D] (any placement; row-sharded gives a masked Partial),
   idx integer [...] -> [..., D]. Out-of-range indices are DT_ERR_ARG (on
   every rank, *out untouched; device tensors' indices are checked on the
   device: a min/max reduction, one pair of scalars to the host). */
DT_API dt_status dt_embedding(const dt_tensor *table, const dt_tensor *idx, dt_tensor **out);  /* collective */
/* mean cross-entropy of logits[N,C] against integer targets[N] -> 0-d; with
   class-sharded logits the softmax statistics are reduced across the ranks
   (loss_parallel) instead of gathering the logits. On a device the targets
   are checked there (as dt_embedding's indices) and the statistics computed
   and reduced in device memory; the loss is formed on the host from them. */
DT_API dt_status dt_cross_entropy(const dt_tensor *logits, const dt_tensor *target, dt_tensor **out);  /* collective */

/* explain: from now on print each op's chosen strategy on this mesh (the
   input placements it needs, the redistributions, the output placement) to
   f on this rank; NULL stops. DTENSOR_LOG=ops does it on mesh rank 0 to
   stderr. Random ops print the RNG offset they start at and end at. */
DT_API dt_status dt_explain(dt_mesh *m, FILE *f);  /* local */
/* the strategy cache: entries in use (at most DT_OP_CACHE) */
DT_API int dt_mesh_op_cache_count(const dt_mesh *m);  /* local */

/* ---- random numbers ----
   Philox4x32-10 (Salmon et al., SC'11; Random123's constants and rounds,
   bit-exact with its known-answer vectors), counter-based and made
   sharding-invariant. Each mesh holds one state (seed, offset), the same on
   every rank. A random op on a tensor of N elements gives the element with
   global row-major index g the 32-bit words at stream positions
   offset + w*g .. offset + w*g + w-1 (w = 2 for F64 and I64, 1 otherwise),
   then every rank advances the offset by w*N rounded up to a multiple of 4.
   So each rank computes only its own elements, replicas draw the same
   numbers, shards draw different ones, and the gathered tensor is bit for
   bit the same for every mesh, every placement and every rank count, and
   equal to a one-rank run. Random ops communicate nothing; like every op
   they must be called in the same order on all ranks (also by ranks outside
   the mesh, which draw nothing but keep their offset in step).

   The stream (stable; dtensor_cuda.h reproduces it bit for bit):
     key     = (seed & 0xffffffff, seed >> 32)
     counter = (b & 0xffffffff, b >> 32, 0, 0) for block b = position / 4;
               word position % 4 of the block's output is the word there
   Words -> values ("u24(w)" = (w >> 8) * 2^-24, "u53(w0,w1)" =
   (((uint64)w1 << 32 | w0) >> 11) * 2^-53, w0 at the lower position):
     uniform  F32: u24; F64: u53; F16/BF16: u24 rounded to nearest-even.
              With bounds: lo + (hi-lo)*u computed in double, rounded to
              F32 (F16/BF16: then to the dtype; F64: kept); a result that
              rounds up to hi is stepped down one ulp of the dtype.
     normal   pairs (2k, 2k+1) share one Box-Muller draw from u1 (element
              2k's words) and u2 (element 2k+1's): r = sqrt(-2 log(1-u1)),
              z(2k) = r cos(2 pi u2), z(2k+1) = r sin(2 pi u2); float math
              for F32/F16/BF16 (u24), double for F64 (u53); then mean + std*z.
              log, sin and cos are the library's own polynomials evaluated
              in double (dt__bm_logf/sincosf for the float kinds, rounded to
              float; dt__bm_log/sincos for F64), not libm's, so the bits do
              not depend on the C library or the device.
              An odd N's last element still reads its pair's second word.
     bernoulli 1 if u < p else 0 (u: u24, or u53 for F64/I64)
     randint  lo + floor(x * R / 2^32) (R = hi - lo; x the element's word;
              64-bit x from two words and 2^64 for F64/I64), with Lemire's
              rejection, so no modulo bias: a rejected draw is redrawn from
              the same position with counter word 2 = 1, 2, ... (still a
              function of g only).
     dropout  keep = (u < 1-p) exactly as bernoulli(1-p) on x's dtype;
              out = keep ? x * (1/(1-p)) : 0 (p == 1: all zeros)
     complex  C64/C128 element g is the two values 2g (real part) and
              2g+1 (imaginary part) of an F32/F64 tensor of twice the
              elements (torch's view_as_real: the last dim doubled), so it
              takes 2 (C64) or 4 (C128) words. uniform: both parts in
              [lo, hi); normal: both parts mean + (std/sqrt(2))*z, one
              Box-Muller pair per element (torch.randn on complex: each part
              N(0, 1/2), variance 1 in all). The same sharding invariance.
              bernoulli, randint and dropout are DT_ERR_DTYPE on complex.
   Meshes start at DT_RNG_DEFAULT_SEED, offset 0 (a sub-mesh from
   dt_mesh_slice/dt_mesh_flatten starts with its parent's state at that
   moment). Random ops on a Partial tensor are DT_ERR_PLACEMENT (its value
   is a sum over ranks; make it Replicate first); bad arguments (p outside
   [0,1], lo >= hi, non-finite bounds, an integer dtype for a float
   distribution) are refused with the state unchanged. */
#define DT_RNG_DEFAULT_SEED 1234u /* PyTorch DTensor's default */

/* collective over the mesh: ranks passing different seeds all get
   DT_ERR_MISMATCH (naming them) and keep their state. Sets offset = 0. */
DT_API dt_status dt_manual_seed(dt_mesh *m, uint64_t seed);  /* collective */
DT_API dt_status dt_rng_get_state(const dt_mesh *m, uint64_t *seed, uint64_t *offset);  /* local */
/* collective, checked like dt_manual_seed (e.g. restoring a checkpoint) */
DT_API dt_status dt_rng_set_state(dt_mesh *m, uint64_t seed, uint64_t offset);  /* collective */
/* The state beside a checkpoint: a one-line JSON file (Python's json reads
   it), e.g. {"generator": "philox4x32-10", "seed": 1234, "offset": 5678}
   Both collective over m; ranks outside the mesh return DT_OK and do no
   I/O. Save: mesh rank 0 writes "<path>.tmp.<16 hex digits>" and renames
   it to `path` once written (crash-safe as dt_tensor_save_npy: on failure
   the temporary is removed and `path` left as it was). Load: mesh rank 0
   reads and checks the file strictly (one JSON object, keys "seed" and
   "offset" required, decimal integers in [0, 2^64), "generator" optional
   but then "philox4x32-10", no other or repeated keys, at most 4 KiB);
   every rank gets the same verdict (DT_ERR_IO naming the path and the
   reason, state unchanged) or the state, set as dt_rng_set_state does. */
DT_API dt_status dt_rng_save_state(const dt_mesh *m, const char *path);  /* collective */
DT_API dt_status dt_rng_load_state(dt_mesh *m, const char *path);  /* collective */

/* new tensors (or *out reused when it has d's spec): uniform [0,1), N(0,1) */
DT_API dt_status dt_tensor_rand(dt_mesh *m, const dt_tensor_desc *d, dt_tensor **out);  /* collective */
DT_API dt_status dt_tensor_randn(dt_mesh *m, const dt_tensor_desc *d, dt_tensor **out);  /* collective */
/* in place (t keeps its spec); uniform/normal need a float dtype */
DT_API dt_status dt_uniform_(dt_tensor *t, double lo, double hi);       /* collective; [lo, hi)        */
DT_API dt_status dt_normal_(dt_tensor *t, double mean, double std);     /* collective; std >= 0        */
DT_API dt_status dt_bernoulli_(dt_tensor *t, double p);                 /* collective; 0 <= p <= 1     */
/* integers in [lo, hi): any dtype that holds every value of the range
   exactly (F32: lo >= -2^24 and hi - 1 <= 2^24; F64 2^53, F16 2^11, BF16
   2^8; I32, I64, U8 their ranges) */
DT_API dt_status dt_randint_(dt_tensor *t, int64_t lo, int64_t hi);  /* collective */
/* out = x with elements zeroed with probability p and the rest scaled by
   1/(1-p); *mask (may be NULL: not wanted) gets the U8 keep mask (1 kept)
   with x's spec. *out may be x (in place); both follow the *out rules. */
DT_API dt_status dt_dropout(const dt_tensor *x, double p, dt_tensor **out, dt_tensor **mask);  /* collective */

/* ---- halos, stencils and convolution ----
   A tensor can carry ghost cells (PETSc DMDA's ghost points): a second
   local buffer, owned by the tensor, holding this rank's box widened by
   width[d] cells on both sides of every tensor dim d, row-major. Ops keep
   working on the interior (dt_tensor_data, contiguous as always; PETSc's
   "global vector"); the ghosted block (dt_tensor_ghosted_data) is the
   "local vector" a stencil reads. dt_halo_exchange copies the interior into
   the ghosted block and fills its ghost cells:
   - from whichever ranks hold those global indices: the neighbouring shards
     along sharded dims, or shards further away when a neighbour is narrower
     than the halo or empty (any mesh: several mesh dims, several mesh dims
     sharding one tensor dim, uneven shards; replicas along Replicate mesh
     dims exchange among themselves, each replica group alone);
   - from this rank's own data along dims that are not sharded;
   - past the global edges [0, n) by the dim's boundary rule (below).
   Corner ghosts (outside the box along two or more dims) are filled only
   with `corners` (a box stencil); a star stencil needs faces only and
   talks to fewer ranks (no diagonal neighbours).
   Partial tensors are refused (their values are not yet the global value).
   Cost: one message per neighbour per exchange (all ghost pieces to one
   rank packed together; with dt_comm_mpi one message per piece, as a
   hand-written exchange sends faces, so that two faces to one neighbour do
   not become one message past MPI's eager limit), plus a copy of the
   interior. With dt_comm_mpi a strided face (a column) of at least
   DTENSOR_HALO_TYPES bytes (4096 under Open MPI; never by default under
   MPICH) is an MPI derived datatype made once by dt_tensor_set_halo: MPI
   reads it from the interior and writes it into the ghost cells, no
   pack or unpack of ours; smaller or other faces are packed.
   In place (a ghosted array: dt_tensor_from_local with desc->local_ghost):
   the halo lives in the tensor's own array, no wider than its ghost room
   (width[d] <= local_ghost[d]; DT_ERR_ARG on every rank otherwise, naming
   the dim, the width and the room). dt_tensor_set_halo then allocates no
   block and writes nothing; an exchange copies no interior: it packs the
   faces (and corners) to send, and writes only the ghost cells the halo
   covers (the cells within width[d] of the interior), so ghost room past
   the halo keeps the caller's values. dt_tensor_ghosted_data returns the
   array's start and its shape (local_shape + 2*local_ghost): interior
   element i sits at index i + local_ghost. Split phase: _begin reads the
   interior only to pack what it sends (and to copy local wraps), so after
   it returns the interior may be written; the ghost cells must not be
   touched until _end returns. */
typedef enum dt_boundary {
    DT_BOUNDARY_CONSTANT = 0, /* ghosts past the edge get `fill` (0: zero padding) */
    DT_BOUNDARY_PERIODIC,     /* they wrap around: index mod n (width <= n)        */
    DT_BOUNDARY_NONE          /* left as they are: the caller writes them (Dirichlet) */
} dt_boundary;

typedef struct dt_halo_desc {
    int64_t width[DT_MAX_DIMS];      /* ghost cells on each side of tensor dim d (0: none);
                                        entries past the tensor's ndim must be 0      */
    uint8_t boundary[DT_MAX_DIMS];   /* dt_boundary per tensor dim (0: CONSTANT)      */
    double fill;                     /* the CONSTANT value (0 = zero padding)          */
    int corners;                     /* 1: fill corner ghosts too (box stencil)        */
} dt_halo_desc;

/* collective over t's mesh, which checks that every rank passed the same
   desc (DT_ERR_MISMATCH otherwise). Gives t a ghosted block (zeroed) and
   plans its exchange once: who sends which pieces to whom, the pack buffers;
   an exchange then allocates nothing. desc NULL removes the halo. Calling it
   again replaces the halo. Ranks outside the mesh return DT_OK.
   A device tensor (desc.device = DT_CUDA) keeps its ghosted block in device
   memory and exchanges on the device: the faces are packed and unpacked by
   the device's box copies (kernels on dt_cuda_stream()), and travel over
   the mesh's backend as they are when it takes device memory (NCCL: grouped
   ncclSend/ncclRecv; a CUDA-aware MPI, dt_comm_desc.device =
   DT_ANY_MEMORY), or, over plain MPI, through pinned host buffers of the
   faces' size (only the faces cross, once each way). A host tensor on a
   mesh whose backend takes device memory is staged the other way. */
DT_API dt_status dt_tensor_set_halo(dt_tensor *t, const dt_halo_desc *desc);  /* collective */
/* the ghosted block (NULL without a halo); ghosted_shape (may be NULL) gets
   local_shape[d] + 2*width[d]. Interior element i sits at index i + width. */
DT_API void     *dt_tensor_ghosted_data(const dt_tensor *t, int64_t *ghosted_shape);  /* local */
/* collective: interior -> ghosted block, then fill the ghosts */
DT_API dt_status dt_halo_exchange(dt_tensor *t);  /* collective */
/* split phase: _begin copies the interior into the ghosted block, fills the
   boundary and local ghosts, packs and posts the messages (with a backend
   that has start/wait, e.g. MPI's Isend/Irecv); compute on cells whose
   stencil stays inside the interior, then _end waits and unpacks. Between
   the two the tensor's interior may change (it has been copied); the ghosted
   block must not be written. */
DT_API dt_status dt_halo_exchange_begin(dt_tensor *t);  /* collective */
DT_API dt_status dt_halo_exchange_end(dt_tensor *t);  /* collective */

/* A stencil callback gets a part of the local interior to compute: cells
   lo[d] <= i[d] < lo[d] + ext[d] (local interior coordinates). It reads the
   ghosted input (interior cell i at in + sum((i[d] + width[d]) * in_stride[d])
   elements of `dtype`, so neighbour i[d] - width[d] .. i[d] + width[d] is
   there) and writes out + sum(i[d] * out_stride[d]). For a ghosted array
   (local_ghost) `in` points into the caller's array, at the halo's first
   cell, with the array's strides (the same formula holds).
   Device tensors: `in` and `out` are device pointers; the callback enqueues
   its own kernel on dt_cuda_stream() (DT_CUDA_LAUNCH of dtensor_cuda.h),
   passing the block by value, and returns (no synchronisation: the
   library's work on that stream is ordered around it). global_shape stays
   host memory. */
typedef struct dt_stencil_block {
    dt_dtype dtype;
    int ndim;
    const void *in;                  /* the ghosted block                         */
    void *out;                       /* the output's interior                     */
    int64_t in_stride[DT_MAX_DIMS];  /* elements                                  */
    int64_t out_stride[DT_MAX_DIMS]; /* elements                                  */
    int64_t width[DT_MAX_DIMS];      /* the halo widths                           */
    int64_t lo[DT_MAX_DIMS];         /* the cells to compute (local interior coords) */
    int64_t ext[DT_MAX_DIMS];
    int64_t local_shape[DT_MAX_DIMS]; /* the whole interior                       */
    int64_t offset[DT_MAX_DIMS];     /* global index of interior cell 0           */
    const int64_t *global_shape;
} dt_stencil_block;
typedef void (*dt_stencil_fn)(const dt_stencil_block *b, void *user);

/* out = fn over x's ghosted block, with communication overlapped: x's halo
   exchange is begun, fn runs on the cells more than `width` from every face
   (they need no ghosts), the exchange ends, fn runs on the rim (at most 2 per
   dim). x needs a halo (dt_tensor_set_halo); out gets x's spec (*out as for
   ops; it must not be x). Collective. On failure a new *out is not made; an
   existing *out is untouched unless the exchange fails in its end (a
   backend's dt_comm_desc.wait, e.g. MPI's, failing), after the inner cells
   were written to it: the price of the overlap. */
DT_API dt_status dt_stencil_apply(dt_tensor *x, dt_stencil_fn fn, void *user, dt_tensor **out);  /* collective */

/* Convolution (PyTorch's conv1d/2d/3d: cross-correlation, stride 1, no
   groups): x [N, C_in, S...] (1, 2 or 3 spatial dims S), w [C_out, C_in,
   K...], bias [C_out] or NULL; out [N, C_out, O...] with
   O = S + 2*padding - dilation*(K-1) (>= 1). F32 and F64. x may be sharded
   along the batch and spatial dims: the spatial shards exchange exactly the
   halo the kernel needs (zero padding at the global edges) and each rank
   computes its own output box, with local GEMMs (BLIS; on a device tensor
   the device's GEMM, cuBLAS, and x, w and bias must share that device,
   DT_ERR_DEVICE otherwise) per kernel tap; a
   channel-sharded x is brought to Replicate on that mesh dim first. w and
   bias are brought to Replicate. out has x's placements. Equal to the serial
   convolution up to the summation order. Collective over x's mesh; before
   anything moves the ranks agree (checks on or off) on their verdicts on
   the arguments and on the specs of x, w and bias, padding and dilation: a
   rank that refused its arguments (a negative padding, a NULL w, a wrong
   *out) or passed other ones fails every rank, not halo messages of
   different sizes (which MPICH aborts on): DT_ERR_MISMATCH on the others
   (with checks on, everywhere). */
typedef struct dt_conv_desc {
    int64_t padding[3];   /* zeros added on both sides of spatial dim i (0: none) */
    int64_t dilation[3];  /* spacing of kernel taps (0 means 1)                   */
} dt_conv_desc;
DT_API dt_status dt_conv1d(const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias,
                           const dt_conv_desc *desc, dt_tensor **out);  /* collective */
DT_API dt_status dt_conv2d(const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias,
                           const dt_conv_desc *desc, dt_tensor **out);  /* collective */
DT_API dt_status dt_conv3d(const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias,
                           const dt_conv_desc *desc, dt_tensor **out);  /* collective */

/* ---- checkpoints: numpy .npy files ----
   One .npy file (numpy format 1.0; 2.0 only if the header outgrows 64 KiB)
   holds the GLOBAL tensor in C order with a little-endian dtype: F32 '<f4',
   F64 '<f8', F16 '<f2', I32 '<i4', I64 '<i8', U8 '|u1'. numpy.load reads it
   as is; a file saved on one mesh / placement loads on any other.
   BF16 has no numpy dtype and is refused with DT_ERR_UNSUPPORTED (cast it
   with dt_cast first, e.g. to F32, which holds every BF16 value exactly).
   How the bytes move: on a mesh made over dt_comm_mpi (with 2+ ranks) each
   rank reads / writes only its own box with MPI-IO on the mesh's
   communicator, and a replicated piece is written once, by the replica with
   coordinate 0 on the Replicate mesh dims. On any other backend (custom,
   self) the shards are gathered to mesh rank 0, which writes with stdio;
   loading, mesh rank 0 reads the file with stdio and scatters it as
   dt_tensor_distribute does. Without MPI (DTENSOR_NO_MPI) stdio only.
   All ranks of the mesh must see the same file system path. A path may
   contain ':' (e.g. an ISO timestamp): under MPICH, whose MPI-IO (ROMIO)
   reads a "name:" prefix as a file-system driver, such a path is opened as
   "ufs:<path>" (ROMIO's plain POSIX driver, right on every file system).
   Threads: MPICH's MPI-IO takes a process-wide lock, so two threads that
   save or load at once deadlock even on separate comms and meshes: make
   one process's checkpoint calls one at a time.
   Device tensors (DT_CUDA): over MPI-IO each rank's shard moves between
   the device and the file piece by piece through one pinned host buffer of
   at most DTENSOR_IO_CHUNK bytes (default 8 MiB) and a device buffer of
   the same size (a strided shard is packed by the device's box copy), so a
   shard larger than free host memory saves and loads. A Partial or block-
   cyclic device tensor is first redistributed (over plain MPI that step
   stages the shard through pinned buffers, as every redistribution does).
   On the other backends (custom, NCCL, self) mesh rank 0 holds the whole
   array in host memory anyway: the shard is copied to a host tensor and
   saved as one (loading: read, then copied to the device). */

/* collective over t's mesh (ranks outside it return DT_OK and do nothing).
   A Partial tensor is reduced first (the saved value is the global value;
   t itself is not changed). Crash-safe: the data goes to
   "<path>.tmp.<16 hex digits>" in the same directory (the suffix is drawn
   on mesh rank 0 and shared), which mesh rank 0 renames to `path` only once
   every rank has written and closed it; on any failure the temporary is
   removed and `path` is left as it was (never truncated or half-written).
   Every rank returns the same status and message. Strided storage
   (local_strides, local_ghost): written from one contiguous copy of the
   shard (on the ranks that write; the file's bytes are the contiguous
   tensor's, the padding is never read); a device shard through its
   strides, chunk by chunk (above). */
DT_API dt_status dt_tensor_save_npy(const dt_tensor *t, const char *path);  /* collective */
/* collective over m: the .npy file at `path` as a tensor on m with
   `placements` (one per mesh dim; Partial placements follow
   Replicate -> Partial as in dt_tensor_distribute: SUM keeps the value on
   coordinate 0, zeros elsewhere). Mesh rank 0 reads and checks the header
   (magic, version, header length, descr one of the dtypes above and
   little-endian, fortran_order False, the shape tuple (at most DT_MAX_DIMS
   dims, no overflow), file size == header + numel * itemsize) and every rank
   gets its verdict: DT_ERR_IO naming the path and the reason. *out as for
   ops: NULL makes a new tensor; non-NULL must have the file's dtype and
   shape, m and `placements`, and its buffer is refilled (only once the read
   has succeeded everywhere). On error *out is untouched. A strided *out
   (local_strides, local_ghost): the shard is read into one contiguous
   copy, then written through its strides (a cyclic layout: redistributed
   into it directly); only its elements are written, never the padding or
   the ghost room. A new tensor is a host tensor; a device *out (ghosted
   and strided ones too) is read into: the contiguous copy is in device
   memory, filled through the bounded pinned buffer (above). */
DT_API dt_status dt_tensor_load_npy(dt_mesh *m, const char *path, const dt_placement *placements,
                                    dt_tensor **out);  /* collective */

/* ---- Fortran ----
   dtensor.f90 (`use dtensor`, Fortran 2008, iso_c_binding) binds to these
   entry points and to the C functions above; it holds no logic. Fortran
   arrays are column-major: a Fortran array of shape (n1, ..., nk) is the
   row-major C array of shape [nk, ..., n1], the same memory. The dt_f_*
   calls that take or give tensor dims do that reversal here: shapes,
   local_shape, local_ghost, local_strides, offsets, halo widths and
   boundaries are in Fortran order, and a Shard's dim (a reduction's dims)
   is a Fortran dim, 1..ndim (negative counts from the end: -1 is ndim),
   Fortran dim d being C dim ndim - d. Mesh dims, coordinates and ranks
   keep their order and count from 0. A Fortran array distributed, loaded
   or saved is the C tensor of the reversed shape (numpy.load gives its
   transpose). Each call fails as the call it forwards to does; an argument
   that cannot be converted (a Shard dim outside 1..ndim) is refused on
   the rank that passed it before anything is communicated (ranks passing
   the same arguments fail alike). */
/* the Fortran module's struct sizes and constants, checked against this
   build's: sizes = {sizeof dt_placement, dt_mesh_desc, dt_tensor_desc,
   dt_halo_desc, DT_MAX_DIMS, DT_MAX_MESH_DIMS} as the module sees them,
   then (n = 6 + k, k <= 8) its sizes of k structs this header does not
   define (dtensor.f90 sends 8: dt_tp_linear_desc and dt_tp_mlp_desc of
   dtensor_layers.h). DT_ERR_ARG naming the first value that differs
   (rebuild dtensor.f90 with the library's DT_MAX_DIMS / DT_MAX_MESH_DIMS);
   on DT_OK the k extra sizes are kept for dt_f_module_size */
DT_API dt_status dt_f_check_sizes(const int64_t *sizes, int n);  /* local; process-wide */
/* sizes[6 + i] of the last dt_f_check_sizes that returned DT_OK; 0 when it
   had no such entry (or none ran). For the entry points of code on the
   public API (dtensor_layers.h's dt_f_tp_*_create) to check the module's
   layout of their structs. */
DT_API int64_t dt_f_module_size(int i);  /* local */
/* For code on the public API with entry points of its own for a Fortran
   binding (dtensor_layers.h's dt_f_tp_*): dt_f_call_begin / dt_f_call_end
   bracket such an entry point as dt_call_begin / dt_call_end do (the error
   handler runs once, under `call`), and inside the bracket messages are in
   Fortran order as in the dt_f_* calls below: the library's own, and
   dt_shape_str's (shapes reversed); a failure's message is rewritten in
   Fortran's syntax at the end (a->b as a%b, a[i] as a(i)). dt_f_order()
   is 1 inside such a bracket or a dt_f_* call, else 0: for the tensor dims
   such code formats itself (a Shard dim d of a rank-n tensor is Fortran's
   n - d; dt_placements_str writes the dims as given). */
DT_API void dt_f_call_begin(void);                               /* local; thread-local */
DT_API dt_status dt_f_call_end(const char *call, dt_status st);  /* local; thread-local */
DT_API int dt_f_order(void);                                     /* local; thread-local */
#ifndef DTENSOR_NO_MPI
/* dt_comm_mpi of a Fortran communicator handle (`integer` of mpif.h or
   `use mpi`, or type(MPI_Comm)'s MPI_VAL), converted by MPI_Comm_f2c here,
   after dt_f_check_sizes(sizes, n) */
DT_API dt_status dt_f_comm_mpi(MPI_Fint comm, const int64_t *sizes, int n, dt_comm **out);  /* collective */
#endif
/* dt_tensor_empty / zeros / from_local / distribute of a Fortran-order desc */
DT_API dt_status dt_f_tensor_empty(dt_mesh *m, const dt_tensor_desc *fd, dt_tensor **out);  /* local */
DT_API dt_status dt_f_tensor_zeros(dt_mesh *m, const dt_tensor_desc *fd, dt_tensor **out);  /* local */
DT_API dt_status dt_f_tensor_from_local(dt_mesh *m, const dt_tensor_desc *fd, void *local, unsigned flags,
                                        dt_tensor **out);  /* collective */
DT_API dt_status dt_f_tensor_distribute(dt_mesh *m, const dt_tensor_desc *fd, const void *full, int src_rank,
                                        dt_tensor **out);  /* collective */
/* Fortran-order placements (one per mesh dim) */
DT_API dt_status dt_f_tensor_redistribute(const dt_tensor *t, const dt_placement *fplacements,
                                          dt_tensor **out);
DT_API dt_status dt_f_tensor_redistribute_begin(const dt_tensor *t, const dt_placement *fplacements,
                                                dt_tensor **out);  /* collective */
DT_API dt_status dt_f_tensor_redistribute_reduce_begin(const dt_tensor *t, const dt_placement *fplacements,
                                                       dt_reduce op, dt_tensor *out);  /* collective */  /* collective */
/* the global shape (Fortran order) into shape (DT_MAX_DIMS entries), its rank into *ndim */
DT_API dt_status dt_f_tensor_shape(const dt_tensor *t, int *ndim, int64_t *shape);  /* local */
/* this rank's local shape and offset (elements before local element 1 along each dim) */
DT_API dt_status dt_f_tensor_local_shape(const dt_tensor *t, int64_t *shape, int64_t *offset);  /* local */
/* for c_f_pointer: DT_OK and the local shape (Fortran order) when t's
   shard is contiguous host memory of `dtype` and rank `ndim`; else
   DT_ERR_DTYPE, DT_ERR_SHAPE or DT_ERR_UNSUPPORTED (strided, ghosted or
   device storage), shape untouched */
DT_API dt_status dt_f_tensor_local(const dt_tensor *t, dt_dtype dtype, int ndim, int64_t *shape);  /* local */
/* dt_layout of a Fortran-order desc at mesh coordinate coord (0-based) */
DT_API dt_status dt_f_layout(const dt_mesh *m, const dt_tensor_desc *fd, const int *coord, int64_t *local_shape,
                             int64_t *local_offset);  /* pure */
/* dt_tensor_set_halo with width and boundary in Fortran order (NULL removes the halo) */
DT_API dt_status dt_f_tensor_set_halo(dt_tensor *t, const dt_halo_desc *fh);  /* collective */
/* dt_sum / dt_mean / dt_max / dt_min over Fortran dims (ndims == 0: all) */
DT_API dt_status dt_f_sum(const dt_tensor *x, int ndims, const int *fdims, int keepdim, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_mean(const dt_tensor *x, int ndims, const int *fdims, int keepdim, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_max(const dt_tensor *x, int ndims, const int *fdims, int keepdim, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_min(const dt_tensor *x, int ndims, const int *fdims, int keepdim, dt_tensor **out);  /* collective */
/* dt_tensor_ghosted_data with the ghosted shape in Fortran order (may be NULL) */
DT_API void *dt_f_tensor_ghosted_data(const dt_tensor *t, int64_t *ghosted_shape);  /* local */
/* Fortran's C = A B: the C tensors hold A^T and B^T, so this is dt_matmul(b, a) */
DT_API dt_status dt_f_matmul(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);  /* collective */
/* dt_tensor_load_npy with Fortran-order placements for a file of rank ndim
   (DT_ERR_SHAPE, *out untouched, if the file's rank differs) */
DT_API dt_status dt_f_tensor_load_npy(dt_mesh *m, const char *path, int ndim, const dt_placement *fplacements,
                                      dt_tensor **out);  /* collective */
/* the typed wraps behind dtensor.f90's generic dt_tensor_from_local /
   distribute / gather: array_dtype is the Fortran array's own (from its
   kind), contiguous 0 for an array section with a stride (refused,
   DT_ERR_ARG: a copy would break DT_BORROW's aliasing), nelem its size.
   A desc (a tensor) of another dtype is DT_ERR_DTYPE naming both; a
   `full` smaller than the global shape DT_ERR_SHAPE. from_local and gather
   (and distribute from one src_rank) agree on the refusal over the mesh
   before the forwarded call, so a rank that refused does not leave the
   others in its collective */
DT_API dt_status dt_f_tensor_from_local_typed(dt_mesh *m, const dt_tensor_desc *fd, void *local, int array_dtype,
                                              int contiguous, unsigned flags, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_tensor_distribute_typed(dt_mesh *m, const dt_tensor_desc *fd, const void *full, int array_dtype,
                                              int contiguous, int64_t nelem, int src_rank,
                                              dt_tensor **out);  /* collective */
DT_API dt_status dt_f_tensor_gather_typed(const dt_tensor *t, void *full, int array_dtype, int contiguous,
                                          int64_t nelem);  /* collective */
/* the views, softmax and the dim-taking reductions with Fortran dims (a new
   dim's place, unsqueeze / stack: its Fortran dim in the result, 1..ndim+1;
   narrow's start: the first index kept, 1-based; reshape's shape in Fortran
   order; perm(i): the x dim that becomes dim i) */
DT_API dt_status dt_f_transpose(const dt_tensor *x, int d0, int d1, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_permute(const dt_tensor *x, const int *perm, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_reshape(const dt_tensor *x, int ndim, const int64_t *shape, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_squeeze(const dt_tensor *x, int dim, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_unsqueeze(const dt_tensor *x, int dim, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_narrow(const dt_tensor *x, int dim, int64_t start, int64_t length, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_cat(int n, const dt_tensor *const *xs, int dim, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_stack(int n, const dt_tensor *const *xs, int dim, dt_tensor **out);  /* collective */
/* nouts: outs' room (DT_ERR_ARG if less than n) */
DT_API dt_status dt_f_split(const dt_tensor *x, int dim, int n, const int64_t *sizes, dt_tensor **outs,
                            int nouts);  /* collective */
/* t's spec in Fortran order: dtype, ndim, shape, placements (Shard: Fortran
   dims), device; the storage fields NULL / 0 */
DT_API dt_status dt_f_tensor_get_desc(const dt_tensor *t, dt_tensor_desc *fd);  /* local */
DT_API dt_status dt_f_softmax(const dt_tensor *x, int dim, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_log_softmax(const dt_tensor *x, int dim, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_norm2(const dt_tensor *x, int ndims, const int *fdims, int keepdim, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_argmax(const dt_tensor *x, int ndims, const int *fdims, int keepdim, dt_tensor **out);  /* collective */
/* Fortran's matmul (as dt_f_matmul): dt_mm(b, a), dt_bmm(b, a), dt_addmm(c, b, a, ...) */
DT_API dt_status dt_f_mm(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_bmm(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_addmm(const dt_tensor *c, const dt_tensor *a, const dt_tensor *b, double beta, double alpha,
                            dt_tensor **out);  /* collective */
/* Fortran-order placements (one per mesh dim) */
DT_API dt_status dt_f_tensor_redistribute_reduce(const dt_tensor *t, const dt_placement *fplacements, dt_reduce op,
                                                 dt_tensor *out);  /* collective */
DT_API dt_status dt_f_tensor_rand(dt_mesh *m, const dt_tensor_desc *fd, dt_tensor **out);  /* collective */
DT_API dt_status dt_f_tensor_randn(dt_mesh *m, const dt_tensor_desc *fd, dt_tensor **out);  /* collective */
/* strides in Fortran order; returns ndim (0 for t NULL) */
DT_API int dt_f_tensor_local_strides(const dt_tensor *t, int64_t *strides);  /* local */
/* dim: a Fortran dim; the indices stay 0-based global positions */
DT_API dt_status dt_f_tensor_local_indices(const dt_tensor *t, int dim, int64_t *global_index);  /* local */
DT_API dt_status dt_f_layout_indices(const dt_mesh *m, const dt_tensor_desc *fd, const int *coord, int dim,
                                     int64_t *global_index);  /* pure */
/* fn gets its block in Fortran order (every per-dim array reversed,
   global_shape a reversed copy); the cells and offsets stay 0-based */
DT_API dt_status dt_f_stencil_apply(dt_tensor *x, dt_stencil_fn fn, void *user, dt_tensor **out);  /* collective */
/* x(S..., C_in, N), w(K..., C_in, C_out): desc's padding(i) / dilation(i) for Fortran spatial dim i */
DT_API dt_status dt_f_conv1d(const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias, const dt_conv_desc *desc,
                             dt_tensor **out);  /* collective */
DT_API dt_status dt_f_conv2d(const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias, const dt_conv_desc *desc,
                             dt_tensor **out);  /* collective */
DT_API dt_status dt_f_conv3d(const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias, const dt_conv_desc *desc,
                             dt_tensor **out);  /* collective */
/* dt_tensor_desc_from_scalapack for Fortran: ScaLAPACK's A(M_, N_) is the
   Fortran array a(M_, N_), so the desc has shape {M_, N_}, Fortran Shard
   dims, local_shape {LOCr, LOCc} and local_strides {1, LLD_}. (Its other
   direction, dt_tensor_scalapack_desc, needs no conversion: a Fortran a(M, N)
   with [dt_shard_cyclic(1, mb), dt_shard_cyclic(2, nb)] on a P x Q mesh is
   ScaLAPACK's A(M, N) on a P x Q grid in order "R".) */
DT_API dt_status dt_f_tensor_desc_from_scalapack(const int desc[9], const dt_scalapack_grid *grid, dt_dtype dtype,
                                                 dt_tensor_desc *fd, int64_t *local_shape,
                                                 int64_t *local_strides);  /* pure */
/* the calls the module forwards unchanged (no dim or shape argument):
   dt_f_X is dt_X with its refusals in Fortran order */
DT_API dt_status dt_f_mesh_create(dt_comm *comm, const dt_mesh_desc *desc, dt_mesh **out);
DT_API dt_status dt_f_neg(const dt_tensor *x, dt_tensor **out);
DT_API dt_status dt_f_abs(const dt_tensor *x, dt_tensor **out);
DT_API dt_status dt_f_exp(const dt_tensor *x, dt_tensor **out);
DT_API dt_status dt_f_log(const dt_tensor *x, dt_tensor **out);
DT_API dt_status dt_f_sqrt(const dt_tensor *x, dt_tensor **out);
DT_API dt_status dt_f_rsqrt(const dt_tensor *x, dt_tensor **out);
DT_API dt_status dt_f_sin(const dt_tensor *x, dt_tensor **out);
DT_API dt_status dt_f_cos(const dt_tensor *x, dt_tensor **out);
DT_API dt_status dt_f_tanh(const dt_tensor *x, dt_tensor **out);
DT_API dt_status dt_f_sigmoid(const dt_tensor *x, dt_tensor **out);
DT_API dt_status dt_f_relu(const dt_tensor *x, dt_tensor **out);
DT_API dt_status dt_f_gelu(const dt_tensor *x, dt_tensor **out);
DT_API dt_status dt_f_silu(const dt_tensor *x, dt_tensor **out);
DT_API dt_status dt_f_copy(const dt_tensor *x, dt_tensor **out);
DT_API dt_status dt_f_cast(const dt_tensor *x, dt_dtype to, dt_tensor **out);
DT_API dt_status dt_f_scale(const dt_tensor *x, double a, dt_tensor **out);
DT_API dt_status dt_f_shift(const dt_tensor *x, double a, dt_tensor **out);
DT_API dt_status dt_f_pow(const dt_tensor *x, double a, dt_tensor **out);
DT_API dt_status dt_f_fill(const dt_tensor *x, double a, dt_tensor **out);
DT_API dt_status dt_f_add(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);
DT_API dt_status dt_f_sub(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);
DT_API dt_status dt_f_mul(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);
DT_API dt_status dt_f_div(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);
DT_API dt_status dt_f_maximum(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);
DT_API dt_status dt_f_minimum(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);
DT_API dt_status dt_f_dot(const dt_tensor *a, const dt_tensor *b, dt_tensor **out);
DT_API dt_status dt_f_axpy(double a, const dt_tensor *x, dt_tensor *y);
DT_API dt_status dt_f_linear(const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias, dt_tensor **out);
DT_API dt_status dt_f_layer_norm(const dt_tensor *x, const dt_tensor *w, const dt_tensor *b, double eps,
                                 dt_tensor **out);
DT_API dt_status dt_f_rms_norm(const dt_tensor *x, const dt_tensor *w, double eps, dt_tensor **out);
DT_API dt_status dt_f_embedding(const dt_tensor *table, const dt_tensor *idx, dt_tensor **out);
DT_API dt_status dt_f_cross_entropy(const dt_tensor *logits, const dt_tensor *target, dt_tensor **out);
DT_API dt_status dt_f_dropout(const dt_tensor *x, double p, dt_tensor **out, dt_tensor **mask);
DT_API dt_status dt_f_halo_exchange(dt_tensor *t);
DT_API dt_status dt_f_halo_exchange_begin(dt_tensor *t);
DT_API dt_status dt_f_halo_exchange_end(dt_tensor *t);
DT_API dt_status dt_f_tensor_gather(const dt_tensor *t, void *full);
DT_API dt_status dt_f_tensor_save_npy(const dt_tensor *t, const char *path);
DT_API dt_status dt_f_tensor_zero_local(dt_tensor *t);
DT_API dt_status dt_f_uniform_(dt_tensor *t, double lo, double hi);
DT_API dt_status dt_f_normal_(dt_tensor *t, double mean, double std);
DT_API dt_status dt_f_bernoulli_(dt_tensor *t, double p);
DT_API dt_status dt_f_randint_(dt_tensor *t, int64_t lo, int64_t hi);
DT_API dt_status dt_f_tensor_redistribute_end(dt_tensor *out);
DT_API dt_status dt_f_tensor_redistribute_test(dt_tensor *out, int *done);
DT_API dt_status dt_f_tensor_scalapack_desc(const dt_tensor *t, int ictxt, int desc[9], dt_scalapack_grid *grid);
/* copies min(strlen(s), cap) bytes of s (NULL: "") into buf, no terminator;
   returns strlen(s): a Fortran string from dt_last_error and co. */
DT_API int64_t dt_f_strcpy(const char *s, char *buf, int64_t cap);  /* pure */

#ifdef __cplusplus
}
#endif
#endif /* DTENSOR_H */

/* ======================================================================== */
/*                            IMPLEMENTATION                                */
/* ======================================================================== */
#if defined(DTENSOR_IMPLEMENTATION) && !defined(DTENSOR_IMPLEMENTATION_DONE) && !defined(DTENSOR_IMPLEMENTATION_LINKED)
#define DTENSOR_IMPLEMENTATION_DONE

/* >>math ------------------------------------------------------------------
   The per-element math, written once for the host and the GPU: every
   function here is DT__HD (static inline; __host__ __device__ under nvcc),
   and dtensor_cuda.h's kernels call these very functions, so the two sides
   compute the same bits wherever the host's result is exactly defined.
   Nothing here allocates, fails or touches a tensor. */
#include <stdint.h>
#include <string.h>
#include <math.h>
#if defined(__CUDACC__)
#define DT__HD static inline __host__ __device__
#elif defined(__GNUC__) || defined(__clang__)
/* per-element helpers must inline into the loops that call them, or the loops do not vectorise */
#define DT__HD static inline __attribute__((always_inline, unused))
#else
#define DT__HD static inline
#endif

/* A macro that generates functions ends in DT__DEFS_END and is used with a
   `;` (DT__DEFINE_NORM(f32, float);), an X-macro list expanded into
   functions likewise (DT__UNARY_OPS(DT__UELEM_F) DT__DEFS_END;): the `;`
   closes a declaration that declares nothing new, so each use reads as one
   declaration and code browsers (ctags) still see the definition after it. */
#define DT__DEFS_END struct dt__defs_end

/* ---- bits, conversions, random numbers ---- */

/* Two variants of DT__HD for the host's sake (under nvcc both are DT__HD):
   DT__HD_RARE for a rarely taken path, kept out of line so that the loop
   calling it stays small; DT__HD_BIG for a long function whose callers'
   loops do not vectorise anyway, inlined where the compiler sees fit
   (forcing it made the Box-Muller loop slower). */
#if defined(__CUDACC__)
#define DT__HD_RARE DT__HD
#define DT__HD_BIG DT__HD
#elif defined(__GNUC__) || defined(__clang__)
#define DT__HD_RARE static __attribute__((noinline, unused))
#define DT__HD_BIG static inline __attribute__((unused))
#else
#define DT__HD_RARE static
#define DT__HD_BIG static inline
#endif

/* the bits of a float / double and back */
DT__HD uint32_t dt__fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
DT__HD float dt__bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
DT__HD uint64_t dt__dbits(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }
DT__HD double dt__bitsd(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }

/* Products and sums that must round twice. nvcc fuses a*b+c into one fma
   in device code by default; the host (C99, no contraction unless asked)
   rounds each. Where a result must be the same bits on both sides (random
   values, dt__expf, axpy) the arithmetic goes through these. */
#ifdef __CUDA_ARCH__
#define DT__FMUL(p, q) __fmul_rn(p, q)
#define DT__FADD(p, q) __fadd_rn(p, q)
#define DT__DMUL(p, q) __dmul_rn(p, q)
#define DT__DADD(p, q) __dadd_rn(p, q)
#else
#define DT__FMUL(p, q) ((p) * (q))
#define DT__FADD(p, q) ((p) + (q))
#define DT__DMUL(p, q) ((p) * (q))
#define DT__DADD(p, q) ((p) + (q))
#endif

/* wrapping int64 arithmetic (signed overflow would be undefined) */
#define DT__IADD(p, q) ((int64_t)((uint64_t)(p) + (uint64_t)(q)))
#define DT__ISUB(p, q) ((int64_t)((uint64_t)(p) - (uint64_t)(q)))
#define DT__IMUL(p, q) ((int64_t)((uint64_t)(p) * (uint64_t)(q)))

/* ---- half <-> float: IEEE F16 and BF16, round to nearest even ----
   Written out because C99 has no half type and the library must not depend
   on F16C or compiler extensions; written without branches (every case
   computed and the right one selected) so that the host's loops over them
   vectorise. NaNs stay quiet NaNs with their payload's top bits. Float
   subnormals meet them only where the half result is 0 anyway, so
   flush-to-zero modes do not change them. */

DT__HD float dt__h2f(uint16_t h) {
    uint32_t em = h & 0x7fffu, subbits, norm, is_sub, is_inf, bits;
    float sub = (float)(int32_t)em * 5.9604644775390625e-08f; /* exponent 0: em * 2^-24, exact */
    float f;
    memcpy(&subbits, &sub, 4);
    /* all-ones masks rather than ?: which the compiler keeps as branches here */
    is_sub = 0u - (uint32_t)(em < 0x400u);
    is_inf = 0u - (uint32_t)(em >= 0x7c00u);
    /* rebias the exponent by 127 - 15; inf/NaN (exponent 31) by 255 - 31 */
    norm = (em << 13) + 0x38000000u + (is_inf & 0x38000000u);
    bits = (norm & ~is_sub) | (subbits & is_sub) | (uint32_t)(h & 0x8000u) << 16;
    memcpy(&f, &bits, 4);
    return f;
}

DT__HD uint16_t dt__f2h(float f) {
    uint32_t x, a, sign, norm, sub, r;
    float af, t;
    memcpy(&x, &f, 4);
    sign = (x >> 16) & 0x8000u;
    a = x & 0x7fffffffu;
    /* normal: rebias and round the 13 dropped bits to nearest even; a carry
       out of the mantissa correctly bumps the exponent */
    norm = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
    /* subnormal: adding 0.5 (ulp 2^-24) makes the FPU round |f| * 2^24 */
    memcpy(&af, &a, 4);
    t = af + 0.5f;
    memcpy(&r, &t, 4);
    sub = r - 0x3f000000u;
    r = a > 0x7f800000u ? 0x7e00u | ((a >> 13) & 0x3ffu) /* quiet NaN, payload kept */
      : a >= 0x477ff000u ? 0x7c00u                       /* rounds past 65504: inf */
      : a < 0x38800000u ? sub : norm;
    return (uint16_t)(sign | r);
}

DT__HD float dt__b2f(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

DT__HD uint16_t dt__f2b(float f) {
    uint32_t x, r;
    memcpy(&x, &f, 4);
    r = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    return (uint16_t)((x & 0x7fffffffu) > 0x7f800000u ? (x >> 16) | 0x40u : r);
}

/* ---- the careful conversions ---- */

/* float -> integer: truncation toward zero, saturating to [lo, hi], NaN -> 0.
   The range test runs in double: every int64 bound is within one rounding. */
DT__HD int64_t dt__sat_i64(double v, int64_t lo, int64_t hi) {
    int64_t r;
    if (v != v) return 0;
    if (v >= 9223372036854775808.0) return hi;
    if (v < -9223372036854775808.0) return lo;
    r = (int64_t)v;
    return r < lo ? lo : r > hi ? hi : r;
}

/* double -> float rounded to odd (inexact results get their last bit set).
   Narrowing that to F16/BF16 then rounds to nearest even exactly as a
   direct double -> half conversion would: no double-rounding error. */
DT__HD float dt__f64_to_f32_odd(double d) {
    float f = (float)d;
    uint32_t u;
    if ((double)f == d || d != d) return f;
    memcpy(&u, &f, 4);
    if (fabs((double)f) > fabs(d)) u -= 1u; /* one step toward zero: the truncated value */
    u |= 1u;
    memcpy(&f, &u, 4);
    return f;
}

/* int64 -> double rounded to odd (bits beyond 53 folded into a sticky last
   bit): narrowing that to float rounds exactly once. Integer arithmetic
   only: a direct int64 -> float conversion is not correctly rounded
   everywhere (valgrind's emulation goes through double). (m >> s) has at
   most 53 bits, exact in double, and 2^s scales it exactly. */
DT__HD double dt__i64_to_f64_odd(int64_t x) {
    uint64_t m = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    int s = 0;
    double d;
    while ((m >> s) >> 53) s++;
    d = s ? (double)((m >> s) | (uint64_t)((m & (((uint64_t)1 << s) - 1)) != 0)) * (double)((uint64_t)1 << s)
          : (double)m;
    return x < 0 ? -d : d;
}

/* ---- e^x in float ----
   Without branches, so that loops over it vectorise (libm's expf is one
   call per element). x = k ln2 + r, |r| <= ln2/2, with ln2 split so that
   k * DT__LN2_HI is exact; e^r by its degree-7 Taylor polynomial
   (truncation < 6e-9); 2^k applied as two exact powers of two so that a
   subnormal result is rounded once. Within 2 ulp of exp; inf, NaN,
   overflow and underflow as expf. */
#define DT__LN2_HI 0.693145751953125f
#define DT__LN2_LO 1.428606765330187045e-06f
DT__HD float dt__expf(float x) {
    const float round_magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float xc = x > 104.0f ? 104.0f : x < -104.0f ? -104.0f : x; /* NaN passes through */
    float t = DT__FADD(DT__FMUL(xc, 1.44269504088896341f), round_magic), kf = t - round_magic, r, p, s1, s2;
    uint32_t tb, mb, b1, b2;
    int32_t k, k1;
    memcpy(&tb, &t, 4);
    memcpy(&mb, &round_magic, 4);
    k = (int32_t)(tb - mb); /* the integer kf, read from t's low bits */
    r = (xc - DT__FMUL(kf, DT__LN2_HI)) - DT__FMUL(kf, DT__LN2_LO); /* a difference of rounded products: nothing to fuse */
    p = 1.0f / 5040.0f;
    p = DT__FADD(DT__FMUL(p, r), 1.0f / 720.0f);
    p = DT__FADD(DT__FMUL(p, r), 1.0f / 120.0f);
    p = DT__FADD(DT__FMUL(p, r), 1.0f / 24.0f);
    p = DT__FADD(DT__FMUL(p, r), 1.0f / 6.0f);
    p = DT__FADD(DT__FMUL(p, r), 0.5f);
    p = DT__FADD(DT__FMUL(p, r), 1.0f);
    p = DT__FADD(DT__FMUL(p, r), 1.0f);
    k1 = k / 2;
    b1 = (uint32_t)(k1 + 127) << 23;
    b2 = (uint32_t)(k - k1 + 127) << 23;
    memcpy(&s1, &b1, 4);
    memcpy(&s2, &b2, 4);
    return DT__FMUL(DT__FMUL(p, s1), s2);
}

/* ---- complex pairs ----
   C64/C128 elements are (re, im) pairs of float/double in memory (C99
   _Complex's layout); the arithmetic is written here on pairs of doubles,
   not with _Complex, which C++ and CUDA lack. C64 computes in double and
   rounds each part once. */
typedef struct dt__cx { double re, im; } dt__cx;

DT__HD dt__cx dt__cx_make(double re, double im) {
    dt__cx z;
    z.re = re;
    z.im = im;
    return z;
}
/* (a + bi)(c + di) = (ac - bd) + (ad + bc)i */
/* element i of a C64 or C128 array, in double; stored back rounded (C64) */
DT__HD dt__cx dt__cx_load(dt_dtype t, const void *p, int64_t i) {
    if (t == DT_C64) return dt__cx_make(((const float *)p)[2 * i], ((const float *)p)[2 * i + 1]);
    return dt__cx_make(((const double *)p)[2 * i], ((const double *)p)[2 * i + 1]);
}
DT__HD void dt__cx_store(dt_dtype t, void *p, int64_t i, dt__cx z) {
    if (t == DT_C64) {
        ((float *)p)[2 * i] = (float)z.re;
        ((float *)p)[2 * i + 1] = (float)z.im;
    } else {
        ((double *)p)[2 * i] = z.re;
        ((double *)p)[2 * i + 1] = z.im;
    }
}

DT__HD dt__cx dt__cx_mul(dt__cx p, dt__cx q) {
    return dt__cx_make(DT__DMUL(p.re, q.re) - DT__DMUL(p.im, q.im), DT__DMUL(p.re, q.im) + DT__DMUL(p.im, q.re));
}
/* p / q by Smith's method: scaling by the larger part of q keeps c^2 + d^2
   from overflowing or underflowing where the quotient is representable */
DT__HD dt__cx dt__cx_div(dt__cx p, dt__cx q) {
    double r, den;
    if (fabs(q.re) >= fabs(q.im)) {
        if (q.re == 0 && q.im == 0) return dt__cx_make(p.re / q.re, p.im / q.re); /* inf/NaN, as IEEE */
        r = q.im / q.re;
        den = q.re + q.im * r;
        return dt__cx_make((p.re + p.im * r) / den, (p.im - p.re * r) / den);
    }
    r = q.re / q.im;
    den = q.re * r + q.im;
    return dt__cx_make((p.re * r + p.im) / den, (p.im * r - p.re) / den);
}
/* e^(a + bi) = e^a (cos b + i sin b) */
DT__HD dt__cx dt__cx_exp(dt__cx z) {
    double m = exp(z.re);
    if (z.im == 0) return dt__cx_make(m, z.im); /* exp of a real: no NaN from inf * 0 */
    return dt__cx_make(m * cos(z.im), m * sin(z.im));
}

/* ---- Philox4x32-10 (Salmon et al., SC'11; Random123's constants and rounds) ---- */

#define DT__PX_M0 0xD2511F53u /* Random123's multipliers and Weyl key increments */
#define DT__PX_M1 0xCD9E8D57u
#define DT__PX_W0 0x9E3779B9u
#define DT__PX_W1 0xBB67AE85u

/* one round on the state x0..x3 with the key k0, k1 (lvalues, updated in
   place; the caller bumps the key between rounds). A macro, so that the
   host's generator can run two blocks' rounds in lockstep. */
#ifdef __CUDA_ARCH__
#define DT__PX_SROUND(x0, x1, x2, x3, k0, k1)                                          \
    do {                                                                               \
        uint32_t h0_ = __umulhi(DT__PX_M0, x0), l0_ = DT__PX_M0 * x0;                  \
        uint32_t h1_ = __umulhi(DT__PX_M1, x2), l1_ = DT__PX_M1 * x2;                  \
        x0 = h1_ ^ x1 ^ k0; x1 = l1_;                                                  \
        x2 = h0_ ^ x3 ^ k1; x3 = l0_;                                                  \
    } while (0)
#else
#define DT__PX_SROUND(x0, x1, x2, x3, k0, k1)                                          \
    do {                                                                               \
        uint64_t p0_ = (uint64_t)DT__PX_M0 * x0, p1_ = (uint64_t)DT__PX_M1 * x2;       \
        x0 = (uint32_t)(p1_ >> 32) ^ x1 ^ k0; x1 = (uint32_t)p1_;                      \
        x2 = (uint32_t)(p0_ >> 32) ^ x3 ^ k1; x3 = (uint32_t)p0_;                      \
    } while (0)
#endif

/* one block: counter (block, attempt, 0), the key bumped between rounds */
DT__HD void dt__philox(uint64_t block, uint32_t attempt, uint32_t k0, uint32_t k1, uint32_t out[4]) {
    uint32_t x0 = (uint32_t)block, x1 = (uint32_t)(block >> 32), x2 = attempt, x3 = 0;
    int r;
    for (r = 0; r < 10; r++) {
        DT__PX_SROUND(x0, x1, x2, x3, k0, k1);
        k0 += DT__PX_W0;
        k1 += DT__PX_W1;
    }
    out[0] = x0; out[1] = x1; out[2] = x2; out[3] = x3;
}

/* the word at stream position `pos` with counter word 2 = `attempt`
   (randint's redraws). Rare: out of line on the host (DT__HD_RARE), so
   that the loops that may call it stay small. */
DT__HD_RARE uint32_t dt__px_word_at(uint32_t k0, uint32_t k1, uint64_t pos, uint32_t attempt) {
    uint32_t out[4];
    dt__philox(pos >> 2, attempt, k0, k1, out);
    return out[pos & 3u];
}

/* ---- words -> values (the documented mapping) ---- */

DT__HD uint64_t dt__w64(const uint32_t *w) { return (uint64_t)w[1] << 32 | w[0]; }
DT__HD float dt__u24(uint32_t w) { return (float)(int32_t)(w >> 8) * 5.9604644775390625e-08f; }
DT__HD double dt__u53(uint64_t x) { return (double)(int64_t)(x >> 11) * 1.1102230246251565e-16; }

/* the next value toward -inf (finite x): the step that keeps a rounded uniform below hi */
DT__HD float dt__down_f32(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    u = (u & 0x7fffffffu) == 0 ? 0x80000001u : (u >> 31) ? u + 1 : u - 1;
    memcpy(&x, &u, 4);
    return x;
}
DT__HD double dt__down_f64(double x) {
    uint64_t u;
    memcpy(&u, &x, 8);
    u = (u & 0x7fffffffffffffffull) == 0 ? 0x8000000000000001ull : (u >> 63) ? u + 1 : u - 1;
    memcpy(&x, &u, 8);
    return x;
}
DT__HD uint16_t dt__down_half(uint16_t h) {
    return (uint16_t)((h & 0x7fffu) == 0 ? 0x8001u : (h >> 15) ? h + 1u : h - 1u);
}

/* high and low 64 bits of a * b */
DT__HD uint64_t dt__mul64(uint64_t a, uint64_t b, uint64_t *lo) {
#ifdef __CUDA_ARCH__
    *lo = a * b;
    return __umul64hi(a, b);
#else
    uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    *lo = (mid << 32) | (ll & 0xffffffffu);
    return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
#endif
}

/* Lemire's multiply-shift with rejection: x * R / 2^bits (bits = 32 w),
   redrawing x from the same position `pos` (the element's first word) with
   counter word 2 = 1, 2, ... while it falls in the biased low part, so
   every result in [0, R) has the same probability */
DT__HD uint64_t dt__px_bounded(uint32_t k0, uint32_t k1, int w, uint64_t R, uint64_t pos, uint64_t x) {
    uint32_t attempt = 0;
    if (w == 1) {
        uint64_t m;
        uint32_t t;
        if (R == ((uint64_t)1 << 32)) return x;
        m = x * R;
        if ((uint32_t)m < (uint32_t)R) {
            t = (uint32_t)(0u - (uint32_t)R) % (uint32_t)R;
            while ((uint32_t)m < t) {
                x = dt__px_word_at(k0, k1, pos, ++attempt);
                m = x * R;
            }
        }
        return m >> 32;
    } else {
        uint64_t lo, hi = dt__mul64(x, R, &lo);
        if (lo < R) {
            uint64_t t = (0u - R) % R;
            while (lo < t) {
                ++attempt;
                x = (uint64_t)dt__px_word_at(k0, k1, pos + 1, attempt) << 32 | dt__px_word_at(k0, k1, pos, attempt);
                hi = dt__mul64(x, R, &lo);
            }
        }
        return hi;
    }
}

/* ---- Box-Muller ----
   Its log, sin and cos are the library's own, not libm's: libm results
   differ between libraries (glibc's logf/sinf/cosf are not correctly
   rounded on ~1% of these arguments) and from CUDA's, and the values must
   be the same bits everywhere. Double arithmetic, +, *, / only, each
   rounded once (the products and sums through DT__DMUL/DT__DADD, so nvcc
   fuses none of them; C99 does not contract them unless asked).
   log x, x > 0 normal: x = m 2^e, m in (sqrt(1/2), sqrt(2)], log m =
   2 atanh(s), s = (m-1)/(m+1), |s| < 0.1716, the series to s^23; ln 2 split
   so that e * its high part is exact. Within a few ulp of log. */
DT__HD_BIG double dt__bm_log(double x) {
    uint64_t u;
    int e;
    double m, s, z, p;
    memcpy(&u, &x, 8);
    e = (int)((u >> 52) & 0x7ff) - 1023;
    u = (u & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
    memcpy(&m, &u, 8);
    if (m > 1.4142135623730951) { m = DT__DMUL(m, 0.5); e++; }
    s = (m - 1.0) / (m + 1.0);
    z = DT__DMUL(s, s);
    p = 1.0 / 23;
    p = DT__DADD(DT__DMUL(p, z), 1.0 / 21);
    p = DT__DADD(DT__DMUL(p, z), 1.0 / 19);
    p = DT__DADD(DT__DMUL(p, z), 1.0 / 17);
    p = DT__DADD(DT__DMUL(p, z), 1.0 / 15);
    p = DT__DADD(DT__DMUL(p, z), 1.0 / 13);
    p = DT__DADD(DT__DMUL(p, z), 1.0 / 11);
    p = DT__DADD(DT__DMUL(p, z), 1.0 / 9);
    p = DT__DADD(DT__DMUL(p, z), 1.0 / 7);
    p = DT__DADD(DT__DMUL(p, z), 1.0 / 5);
    p = DT__DADD(DT__DMUL(p, z), 1.0 / 3);
    return DT__DADD(DT__DADD(DT__DMUL((double)e, 6.93147180369123816490e-01), DT__DMUL((double)e, 1.90821492927058770002e-10)),
                    DT__DADD(DT__DMUL(DT__DMUL(DT__DMUL(2.0, s), z), p), DT__DMUL(2.0, s)));
}

/* sin and cos of th in [0, 8): th - k pi/2 with pi/2 in three 33-bit parts
   (k * part exact), Taylor polynomials on |r| <= pi/4, the quadrant k & 3 */
DT__HD_BIG void dt__bm_sincos(double th, double *sn, double *cs) {
    const double p1 = 1.57079632673412561417e+00, p2 = 6.07710050630396597660e-11, p3 = 2.02226624879595063154e-21;
    double k = (double)(int)DT__DADD(DT__DMUL(th, 0.63661977236758134308), 0.5), r, z, s, c;
    int q = (int)k & 3;
    r = ((th - DT__DMUL(k, p1)) - DT__DMUL(k, p2)) - DT__DMUL(k, p3);
    z = DT__DMUL(r, r);
    s = -1.0 / 121645100408832000.0; /* -1/19! */
    s = DT__DADD(DT__DMUL(s, z), 1.0 / 355687428096000.0);
    s = DT__DADD(DT__DMUL(s, z), -1.0 / 1307674368000.0);
    s = DT__DADD(DT__DMUL(s, z), 1.0 / 6227020800.0);
    s = DT__DADD(DT__DMUL(s, z), -1.0 / 39916800.0);
    s = DT__DADD(DT__DMUL(s, z), 1.0 / 362880.0);
    s = DT__DADD(DT__DMUL(s, z), -1.0 / 5040.0);
    s = DT__DADD(DT__DMUL(s, z), 1.0 / 120.0);
    s = DT__DADD(DT__DMUL(s, z), -1.0 / 6.0);
    s = DT__DADD(DT__DMUL(DT__DMUL(s, z), r), r);
    c = 1.0 / 6402373705728000.0; /* 1/18! */
    c = DT__DADD(DT__DMUL(c, z), -1.0 / 20922789888000.0);
    c = DT__DADD(DT__DMUL(c, z), 1.0 / 87178291200.0);
    c = DT__DADD(DT__DMUL(c, z), -1.0 / 479001600.0);
    c = DT__DADD(DT__DMUL(c, z), 1.0 / 3628800.0);
    c = DT__DADD(DT__DMUL(c, z), -1.0 / 40320.0);
    c = DT__DADD(DT__DMUL(c, z), 1.0 / 720.0);
    c = DT__DADD(DT__DMUL(c, z), -1.0 / 24.0);
    c = DT__DADD(DT__DMUL(c, z), 0.5);
    c = 1.0 - DT__DMUL(c, z);
    switch (q) {
    case 0: *sn = s; *cs = c; break;
    case 1: *sn = c; *cs = -s; break;
    case 2: *sn = -s; *cs = -c; break;
    default: *sn = -c; *cs = s; break;
    }
}

/* The float kinds': the same method with the series cut where float no
   longer sees them (errors below 2^-38 relative), and the quadrant picked
   by selects rather than a switch, so the host's loop over pairs can
   vectorise. x in (0, 1] and th in [0, 8), floats. */
DT__HD_BIG float dt__bm_logf(float x) {
    uint32_t u, mb;
    float mf;
    int e, big;
    double m, s, z, p;
    memcpy(&u, &x, 4);
    e = (int)(u >> 23) - 127;
    mb = (u & 0x7fffffu) | 0x3f800000u;
    memcpy(&mf, &mb, 4);
    m = (double)mf;
    big = m > 1.4142135623730951;
    m = big ? DT__DMUL(m, 0.5) : m;
    e += big;
    s = (m - 1.0) / (m + 1.0);
    z = DT__DMUL(s, s);
    p = 1.0 / 13;
    p = DT__DADD(DT__DMUL(p, z), 1.0 / 11);
    p = DT__DADD(DT__DMUL(p, z), 1.0 / 9);
    p = DT__DADD(DT__DMUL(p, z), 1.0 / 7);
    p = DT__DADD(DT__DMUL(p, z), 1.0 / 5);
    p = DT__DADD(DT__DMUL(p, z), 1.0 / 3);
    return (float)DT__DADD(DT__DMUL((double)e, 0.69314718055994530942),
                           DT__DADD(DT__DMUL(DT__DMUL(DT__DMUL(2.0, s), z), p), DT__DMUL(2.0, s)));
}

DT__HD_BIG void dt__bm_sincosf(float thf, float *sn, float *cs) {
    double th = (double)thf, k = (double)(int)DT__DADD(DT__DMUL(th, 0.63661977236758134308), 0.5), r, z, s, c, ss, cc;
    int q = (int)k & 3;
    r = (th - DT__DMUL(k, 1.57079632673412561417e+00)) - DT__DMUL(k, 6.07710050650619224932e-11);
    z = DT__DMUL(r, r);
    s = 1.0 / 6227020800.0;
    s = DT__DADD(DT__DMUL(s, z), -1.0 / 39916800.0);
    s = DT__DADD(DT__DMUL(s, z), 1.0 / 362880.0);
    s = DT__DADD(DT__DMUL(s, z), -1.0 / 5040.0);
    s = DT__DADD(DT__DMUL(s, z), 1.0 / 120.0);
    s = DT__DADD(DT__DMUL(s, z), -1.0 / 6.0);
    s = DT__DADD(DT__DMUL(DT__DMUL(s, z), r), r);
    c = 1.0 / 87178291200.0;
    c = DT__DADD(DT__DMUL(c, z), -1.0 / 479001600.0);
    c = DT__DADD(DT__DMUL(c, z), 1.0 / 3628800.0);
    c = DT__DADD(DT__DMUL(c, z), -1.0 / 40320.0);
    c = DT__DADD(DT__DMUL(c, z), 1.0 / 720.0);
    c = DT__DADD(DT__DMUL(c, z), -1.0 / 24.0);
    c = DT__DADD(DT__DMUL(c, z), 0.5);
    c = 1.0 - DT__DMUL(c, z);
    ss = (q & 1) ? c : s; /* quadrants 0..3: (s, c), (c, -s), (-s, -c), (-c, s) */
    cc = (q & 1) ? s : c;
    *sn = (float)((q & 2) ? -ss : ss);
    *cs = (float)(((q + 1) & 2) ? -cc : cc);
}

/* one standard normal pair from two words (the float kinds: u24 each) */
DT__HD_BIG void dt__bm_pair_f(uint32_t w0, uint32_t w1, float *z0, float *z1) {
    float u1 = dt__u24(w0), u2 = dt__u24(w1), s, c;
    float r = sqrtf(-2.0f * dt__bm_logf(1.0f - u1)), th = 6.28318530717958647692f * u2;
    dt__bm_sincosf(th, &s, &c);
    *z0 = r * c;
    *z1 = r * s;
}

/* one standard normal pair from two 64-bit words (F64: u53 each) */
DT__HD_BIG void dt__bm_pair_d(uint64_t x1, uint64_t x2, double *z0, double *z1) {
    double u1 = dt__u53(x1), u2 = dt__u53(x2), s, c;
    double r = sqrt(-2.0 * dt__bm_log(1.0 - u1)), th = 6.28318530717958647692 * u2;
    dt__bm_sincos(th, &s, &c);
    *z0 = r * c;
    *z1 = r * s;
}

/* NaN-propagating max/min (torch.maximum): a NaN p wins, a NaN q survives.
   `|` of ints, not `||`: no branch (and no bool `|` for C++ compilers) */
#define DT__FMAX(p, q) (((int)((p) > (q)) | (int)((p) != (p))) ? (p) : (q))
#define DT__FMIN(p, q) (((int)((p) < (q)) | (int)((p) != (p))) ? (p) : (q))
#define DT__IMAX(p, q) ((p) > (q) ? (p) : (q))
#define DT__IMIN(p, q) ((p) < (q) ? (p) : (q))
#define DT__INV_SQRT2 0.70710678118654752440

/* >>registry --------------------------------------------------------------
   THE OP REGISTRY. Every op is one line of one of the lists below, and everything that has
   to agree with that line is generated from it: the kernel ids (dt__uop,
   dt__bop), the op ids (DT__OP_*) and their rows of dt__op_table (the
   strategies), the per-element math (dt__u_<name>_f32/_f64/_i64,
   dt__b_<name>_*), the host kernels' loops and switch cases, dtensor_cuda.h's
   per-element switch cases, and the public wrappers of the plain unary ops.
   Positions no longer matter: DT__OP_x and its row come from the same line.

   How to add a unary pointwise op (dt_foo(x, out)):
   1. one line in DT__UNARY_OPS: X(FOO, foo, PLAIN, flags, Partial map,
      float math, int64 math) (the columns are described at the list);
   2. its math, if it needs more than an expression (a helper): a DT__HD
      function in >>math next to the element functions, used on both sides;
   3. its public prototype and its one-line doc in the public part (>>api,
      next to dt_neg & co.); PLAIN generates the definition; ARG (an op with
      a double argument) writes it by hand in >>ops, as dt_shift;
   4. its tests: tests/test_ops_pointwise.c (values against libm, every
      dtype, Partial in/out), tests/test_ops_kernels.c (the kernel against
      its ref_unary_f / ref_unary_i case: names and float-only come from
      the line), tests/test_cuda.cu (its libm list: ops whose device
      result may differ from the host's by the libm's ulps; the
      host-vs-device bits of tests/test_cuda_host.cu follow the line),
      tests/test_badinput_ops.c when it refuses inputs;
   5. its line in README.md's op list and in docs/api.md.
   A binary pointwise op: the same with DT__BINARY_OPS (its Partial rules,
   dt__pr_<name>, go above the lists, in this section); any other op: one
   DT__TABLE_OPS line naming its family; a new family: one DT__FAMILIES
   line and its two functions in >>ops (dt__infer_<name>, dt__run_<name>).

   The math columns are expressions, compiled once per working type: x (and
   a, the op's scalar argument) for a unary op, p, q (and alpha, axpy's) for
   a binary one. A float expression is written for both float (F32/F16/BF16)
   and double (F64) through DT__W (the working type), DT__LM(fn) (libm's fn
   for DT__W: fn##f or fn), DT__EXPW (exp: dt__expf, the polynomial that is
   bit-identical on host and GPU, for float; exp for double), DT__MULW and
   DT__ADDW (a product or sum the GPU compiler must not contract into an fma).
   The int64 expression wraps (DT__IADD, DT__ISUB, DT__IMUL); a float-only op
   (DT__FLOAT_ONLY, never run on integers) writes x. */

/* ---- the words the lists are written in ---- */

enum { /* op flags */
    DT__FLOAT_ONLY = 1, /* integer inputs are DT_ERR_DTYPE                        */
    DT__PASS_ALL = 2,   /* data movement only: every input Partial(k) -> Partial(k) */
    DT__TO_REP = 4,     /* a Partial input gives a Replicate output (fill)         */
    DT__ELEMENTWISE = 8, /* *out may alias an input                                */
    DT__TRUNC_OK = 16   /* commutes with truncation toward zero: an integer
                           Partial(AVG) passes through (DT__PASS_ALL ops too)    */
};

typedef enum dt__rop { DT__R_SUM, DT__R_MAX, DT__R_MIN, DT__R_SUMSQ, DT__R_ARGMAX, DT__R_NUM } dt__rop;

#define DT__PR(x) x, (uint8_t)(sizeof x / sizeof x[0])
#define DT__NOPR() NULL, 0
#define DT__PM_NONE() {-1, -1, -1, -1}
#define DT__PM_ALL() {DT_SUM, DT_AVG, DT_MAX, DT_MIN}
#define DT__PM_MONO() {-1, -1, DT_MAX, DT_MIN}  /* increasing maps commute with max/min */
#define DT__PM_ANTI() {-1, -1, DT_MIN, DT_MAX}  /* decreasing maps swap them           */
#define DT__PM_ALL_NEG() {DT_SUM, DT_AVG, DT_MIN, DT_MAX} /* x -> -x, x -> a*x with a < 0     */
#define DT__PM_SHIFT() {-1, DT_AVG, DT_MAX, DT_MIN} /* x + a: not SUM (n copies of a)  */

/* Partial rule codes: a reduce kind 0..3 (DT_SUM, DT_AVG, DT_MAX, DT_MIN), R: Replicate */
#define R_ (-1)
typedef struct dt__prule { int8_t in[3]; int8_t out; } dt__prule;
/* a + b, a - b: Partial(SUM/AVG) on both sides; MAX/MIN with a replicated other side */
static const dt__prule dt__pr_add[] = {
    {{DT_SUM, DT_SUM, R_}, DT_SUM}, {{DT_AVG, DT_AVG, R_}, DT_AVG}, {{DT_AVG, R_, R_}, DT_AVG},
    {{R_, DT_AVG, R_}, DT_AVG},     {{DT_MAX, R_, R_}, DT_MAX},     {{R_, DT_MAX, R_}, DT_MAX},
    {{DT_MIN, R_, R_}, DT_MIN},     {{R_, DT_MIN, R_}, DT_MIN}};
static const dt__prule dt__pr_sub[] = {
    {{DT_SUM, DT_SUM, R_}, DT_SUM}, {{DT_AVG, DT_AVG, R_}, DT_AVG}, {{DT_AVG, R_, R_}, DT_AVG},
    {{R_, DT_AVG, R_}, DT_AVG},     {{DT_MAX, R_, R_}, DT_MAX},     {{R_, DT_MAX, R_}, DT_MIN},
    {{DT_MIN, R_, R_}, DT_MIN},     {{R_, DT_MIN, R_}, DT_MAX}};
/* multilinear: one Partial(SUM/AVG) operand times replicated others */
static const dt__prule dt__pr_mul[] = {
    {{DT_SUM, R_, R_}, DT_SUM}, {{R_, DT_SUM, R_}, DT_SUM}, {{DT_AVG, R_, R_}, DT_AVG}, {{R_, DT_AVG, R_}, DT_AVG}};
static const dt__prule dt__pr_div[] = {{{DT_SUM, R_, R_}, DT_SUM}, {{DT_AVG, R_, R_}, DT_AVG}};
static const dt__prule dt__pr_maximum[] = {
    {{DT_MAX, DT_MAX, R_}, DT_MAX}, {{DT_MAX, R_, R_}, DT_MAX}, {{R_, DT_MAX, R_}, DT_MAX}};
static const dt__prule dt__pr_minimum[] = {
    {{DT_MIN, DT_MIN, R_}, DT_MIN}, {{DT_MIN, R_, R_}, DT_MIN}, {{R_, DT_MIN, R_}, DT_MIN}};
/* axpy(x, y): a*x + y with y kept */
static const dt__prule dt__pr_axpy[] = {
    {{DT_SUM, DT_SUM, R_}, DT_SUM}, {{DT_AVG, DT_AVG, R_}, DT_AVG}, {{R_, DT_AVG, R_}, DT_AVG},
    {{R_, DT_MAX, R_}, DT_MAX},     {{R_, DT_MIN, R_}, DT_MIN}};
/* matmul with an additive third input (bias, addmm's c): it takes the same Partial */
static const dt__prule dt__pr_mm3[] = {
    {{DT_SUM, R_, DT_SUM}, DT_SUM}, {{R_, DT_SUM, DT_SUM}, DT_SUM}, {{DT_AVG, R_, DT_AVG}, DT_AVG},
    {{R_, DT_AVG, DT_AVG}, DT_AVG}};
static const dt__prule dt__pr_sum[] = {{{DT_SUM, R_, R_}, DT_SUM}, {{DT_AVG, R_, R_}, DT_AVG}};
static const dt__prule dt__pr_max[] = {{{DT_MAX, R_, R_}, DT_MAX}};
static const dt__prule dt__pr_min[] = {{{DT_MIN, R_, R_}, DT_MIN}};
#undef R_

/* ---- the lists ---- */

/* Unary pointwise ops: X(NAME, name, wrapper, flags, Partial map, float math, int64 math).
   wrapper: PLAIN generates dt_<name>(x, out); ARG: written by hand (takes a).
   flags: DT__FLOAT_ONLY, DT__TRUNC_OK, DT__TO_REP (the op flags, above; every
   unary op is DT__ELEMENTWISE). Partial map: DT__PM_* (above), what a
   Partial(SUM, AVG, MAX, MIN) input gives. */
#define DT__UNARY_OPS(X)                                                                                       \
    X(NEG, neg, PLAIN, DT__TRUNC_OK, DT__PM_ALL_NEG(), -x, DT__ISUB(0, x))                                     \
    X(ABS, abs, PLAIN, 0, DT__PM_NONE(), DT__LM(fabs)(x), x < 0 ? DT__ISUB(0, x) : x)                          \
    X(EXP, exp, PLAIN, DT__FLOAT_ONLY, DT__PM_MONO(), DT__EXPW(x), x)                                          \
    X(LOG, log, PLAIN, DT__FLOAT_ONLY, DT__PM_MONO(), DT__LM(log)(x), x)                                       \
    X(SQRT, sqrt, PLAIN, DT__FLOAT_ONLY, DT__PM_MONO(), DT__LM(sqrt)(x), x)                                    \
    X(RSQRT, rsqrt, PLAIN, DT__FLOAT_ONLY, DT__PM_ANTI(), (DT__W)1 / DT__LM(sqrt)(x), x)                       \
    X(SIN, sin, PLAIN, DT__FLOAT_ONLY, DT__PM_NONE(), DT__LM(sin)(x), x)                                       \
    X(COS, cos, PLAIN, DT__FLOAT_ONLY, DT__PM_NONE(), DT__LM(cos)(x), x)                                       \
    X(TANH, tanh, PLAIN, DT__FLOAT_ONLY, DT__PM_MONO(), DT__LM(tanh)(x), x)                                    \
    X(SIGMOID, sigmoid, PLAIN, DT__FLOAT_ONLY, DT__PM_MONO(), (DT__W)1 / ((DT__W)1 + DT__EXPW(-x)), x)         \
    X(RELU, relu, PLAIN, 0, DT__PM_MONO(), x < (DT__W)0 ? (DT__W)0 : x, x < 0 ? 0 : x) /* NaN stays */         \
    X(GELU, gelu, PLAIN, DT__FLOAT_ONLY, DT__PM_NONE(),                                                        \
      DT__MULW(DT__MULW((DT__W)0.5, x), DT__LM(erfc)(DT__MULW(-x, (DT__W)DT__INV_SQRT2))), x)                  \
    X(SILU, silu, PLAIN, DT__FLOAT_ONLY, DT__PM_NONE(), x / ((DT__W)1 + DT__EXPW(-x)), x)                      \
    X(SCALE, scale, ARG, 0, DT__PM_ALL(), x * a, DT__IMUL(x, a)) /* a < 0: DT__OP_SCALE_NEG's row */           \
    X(SHIFT, shift, ARG, 0, DT__PM_SHIFT(), x + a, DT__IADD(x, a))                                             \
    X(POW, pow, ARG, DT__FLOAT_ONLY, DT__PM_NONE(), DT__LM(pow)(x, a), x)                                      \
    X(COPY, copy, PLAIN, DT__TRUNC_OK, DT__PM_ALL(), x, x) /* the host moves memory (memmove) */               \
    X(FILL, fill, ARG, DT__TO_REP, DT__PM_NONE(), a, a)

/* Binary pointwise ops: X(NAME, name, kernel id, flags, Partial rules, float math, int64 math).
   kernel id: DT__B_<id>; Partial rules: a dt__prule table (above). */
#define DT__BINARY_OPS(X)                                                                                      \
    X(ADD, add, ADD, 0, dt__pr_add, p + q, DT__IADD(p, q))                                                     \
    X(SUB, sub, SUB, 0, dt__pr_sub, p - q, DT__ISUB(p, q))                                                     \
    X(MUL, mul, MUL, 0, dt__pr_mul, p * q, DT__IMUL(p, q))                                                     \
    X(DIV, div, DIV, DT__FLOAT_ONLY, dt__pr_div, p / q, q == 0 ? 0 : q == -1 ? DT__ISUB(0, p) : p / q)         \
    X(MAXIMUM, maximum, MAX, 0, dt__pr_maximum, DT__FMAX(p, q), DT__IMAX(p, q)) /* NaN propagates */           \
    X(MINIMUM, minimum, MIN, 0, dt__pr_minimum, DT__FMIN(p, q), DT__IMIN(p, q))                                \
    X(AXPY, axpy, AXPY, 0, dt__pr_axpy, DT__ADDW(DT__MULW(alpha, p), q), DT__IADD(DT__IMUL(alpha, p), q))
/* (integer DIV is never run, DT__FLOAT_ONLY; defined anyway so that no input is undefined) */

/* Every other op: X(NAME, "public name", family, inputs, kernel, MPI reduce of
   its Partial output (-1: none), flags, Partial map, Partial rules) -- the
   fields of dt__opdef (below), one row each. */
#define DT__TABLE_OPS(X)                                                                                       \
    X(SCALE_NEG, "dt_scale", DT__F_UNARY, 1, DT__U_SCALE, -1, DT__ELEMENTWISE, DT__PM_ALL_NEG(), DT__NOPR())   \
    X(CAST, "dt_cast", DT__F_UNARY, 1, DT__U_COPY, -1, DT__ELEMENTWISE, DT__PM_MONO(), DT__NOPR())             \
    X(SUM, "dt_sum", DT__F_REDUCE, 1, DT__R_SUM, DT_SUM, 0, DT__PM_NONE(), DT__PR(dt__pr_sum))                 \
    X(MEAN, "dt_mean", DT__F_REDUCE, 1, DT__R_SUM, DT_SUM, DT__FLOAT_ONLY, DT__PM_NONE(), DT__PR(dt__pr_sum))  \
    X(MAX, "dt_max", DT__F_REDUCE, 1, DT__R_MAX, DT_MAX, 0, DT__PM_NONE(), DT__PR(dt__pr_max))                 \
    X(MIN, "dt_min", DT__F_REDUCE, 1, DT__R_MIN, DT_MIN, 0, DT__PM_NONE(), DT__PR(dt__pr_min))                 \
    X(NORM2, "dt_norm2", DT__F_REDUCE, 1, DT__R_SUMSQ, DT_SUM, DT__FLOAT_ONLY, DT__PM_NONE(), DT__NOPR())      \
    X(ARGMAX, "dt_argmax", DT__F_REDUCE, 1, DT__R_ARGMAX, -1, 0, DT__PM_NONE(), DT__NOPR())                    \
    X(MATMUL, "dt_matmul", DT__F_MATMUL, 2, 0, DT_SUM, 0, DT__PM_NONE(), DT__PR(dt__pr_mul))                   \
    X(MM, "dt_mm", DT__F_MATMUL, 2, 0, DT_SUM, 0, DT__PM_NONE(), DT__PR(dt__pr_mul))                           \
    X(BMM, "dt_bmm", DT__F_MATMUL, 2, 0, DT_SUM, 0, DT__PM_NONE(), DT__PR(dt__pr_mul))                         \
    X(ADDMM, "dt_addmm", DT__F_MATMUL, 3, 0, DT_SUM, 0, DT__PM_NONE(), DT__PR(dt__pr_mm3))                     \
    X(LINEAR, "dt_linear", DT__F_MATMUL, 3, 0, DT_SUM, 0, DT__PM_NONE(), DT__PR(dt__pr_mm3))                   \
    X(DOT, "dt_dot", DT__F_MATMUL, 2, 0, DT_SUM, 0, DT__PM_NONE(), DT__PR(dt__pr_mul))                         \
    X(SOFTMAX, "dt_softmax", DT__F_SOFTMAX, 1, 0, -1, DT__FLOAT_ONLY, DT__PM_NONE(), DT__NOPR())               \
    X(LOG_SOFTMAX, "dt_log_softmax", DT__F_SOFTMAX, 1, 1, -1, DT__FLOAT_ONLY, DT__PM_NONE(), DT__NOPR())       \
    X(LAYER_NORM, "dt_layer_norm", DT__F_NORM, 3, 0, -1, DT__FLOAT_ONLY, DT__PM_NONE(), DT__NOPR())            \
    X(RMS_NORM, "dt_rms_norm", DT__F_NORM, 2, 1, -1, DT__FLOAT_ONLY, DT__PM_NONE(), DT__NOPR())                \
    X(TRANSPOSE, "dt_transpose", DT__F_PERMUTE, 1, 0, -1, DT__PASS_ALL, DT__PM_ALL(), DT__NOPR())              \
    X(PERMUTE, "dt_permute", DT__F_PERMUTE, 1, 0, -1, DT__PASS_ALL, DT__PM_ALL(), DT__NOPR())                  \
    X(SQUEEZE, "dt_squeeze", DT__F_PERMUTE, 1, 1, -1, DT__PASS_ALL, DT__PM_ALL(), DT__NOPR())                  \
    X(UNSQUEEZE, "dt_unsqueeze", DT__F_PERMUTE, 1, 1, -1, DT__PASS_ALL, DT__PM_ALL(), DT__NOPR())              \
    X(RESHAPE, "dt_reshape", DT__F_RESHAPE, 1, 0, -1, DT__PASS_ALL, DT__PM_ALL(), DT__NOPR())                  \
    X(NARROW, "dt_narrow", DT__F_NARROW, 1, 0, -1, DT__PASS_ALL, DT__PM_ALL(), DT__NOPR())                     \
    X(CAT, "dt_cat", DT__F_CAT, 0, 0, -1, DT__PASS_ALL, DT__PM_ALL(), DT__NOPR())                              \
    X(STACK, "dt_stack", DT__F_CAT, 0, 1, -1, DT__PASS_ALL, DT__PM_ALL(), DT__NOPR())                          \
    X(EMBEDDING, "dt_embedding", DT__F_EMBED, 2, 0, DT_SUM, 0, DT__PM_NONE(), DT__NOPR())                      \
    X(CROSS_ENTROPY, "dt_cross_entropy", DT__F_XENT, 2, 0, DT_SUM, 0, DT__PM_NONE(), DT__NOPR())

/* Op families: X(NAME, infer, run, traits), one line each. A family is how
   an op's inputs map to its output: its shape inference dt__infer_<infer>
   (the result's shape and the dim map) and its runner dt__run_<run> (the
   local kernels on this rank's blocks), written side by side in >>ops,
   which makes dt__families from these lines; the traits are what the
   strategy search and the runner must know about it (dt__family_traits,
   below). Adding a family: a line here, its two functions in >>ops,
   its ops in DT__TABLE_OPS. */
enum { /* family traits */
    DT__FAM_READS_ANY = 1,   /* its runner reads strided inputs in place, any strides   */
    DT__FAM_READS_ROWS = 2,  /* ... when the last dim is unit-stride (a call per row)   */
    DT__FAM_INDICES = 4,     /* input 1 holds indices: its own dtype, read on the host,
                                never split cyclically                                 */
    DT__FAM_CHUNK_ONLY = 8,  /* runs in torch.chunk splits only (a view of the blocks)  */
    DT__FAM_ADDEND = 16,     /* input 2 is added to the result (bias, addmm's c): it is
                                made Partial(SUM) where the contraction is split       */
    DT__FAM_CLASS_SPLIT = 32, /* may take its logits split along the classes (dim 1)    */
    DT__FAM_PMAP = 64,       /* a Partial input maps through the op's Partial map      */
    DT__FAM_DIM_GROUPS = 128 /* output dims come from groups of input dims (reshape)    */
};
#define DT__FAMILIES(X)                                                                                        \
    X(UNARY, unary, unary, DT__FAM_READS_ROWS | DT__FAM_PMAP)                                                  \
    X(BINARY, binary, binary, DT__FAM_READS_ANY)                                                               \
    X(REDUCE, reduce, reduce, 0)                                                                               \
    X(MATMUL, matmul, matmul, DT__FAM_ADDEND)                                                                  \
    X(SOFTMAX, softmax, softmax, 0)                                                                            \
    X(NORM, norm, norm, 0)                                                                                     \
    X(PERMUTE, permute, view, 0)                                                                               \
    X(RESHAPE, reshape, view, DT__FAM_CHUNK_ONLY | DT__FAM_DIM_GROUPS)                                         \
    X(NARROW, narrow, narrow, DT__FAM_READS_ANY | DT__FAM_CHUNK_ONLY)                                          \
    X(CAT, cat, cat, DT__FAM_CHUNK_ONLY)                                                                       \
    X(EMBED, embed, embed, DT__FAM_INDICES)                                                                    \
    X(XENT, xent, xent, DT__FAM_INDICES | DT__FAM_CLASS_SPLIT)
#define DT__F_ENUM(NAME, infer, run, traits) DT__F_##NAME,
enum { DT__FAMILIES(DT__F_ENUM) DT__F_COUNT }; /* DT__F_<NAME>: the family of a DT__TABLE_OPS line */
#undef DT__F_ENUM

/* ---- what the lists generate: kernel ids, op ids, the op table ---- */

/* the kernels an op can run (>>kernels implements them) */
#define DT__U_ENUM(NAME, name, wrap, fl, pm, fmath, imath) DT__U_##NAME,
typedef enum dt__uop { DT__UNARY_OPS(DT__U_ENUM) DT__U_NUM } dt__uop; /* one per DT__UNARY_OPS line */
#undef DT__U_ENUM
/* The DT__FLOAT_ONLY ones are never called for integer dtypes. On integers
   SCALE/SHIFT/FILL use (int64_t)a (the ops layer passes integral a). */

#define DT__B_ENUM(NAME, name, k, fl, pr, fmath, imath) DT__B_##k,
typedef enum dt__bop { DT__BINARY_OPS(DT__B_ENUM) DT__B_NUM } dt__bop; /* one per DT__BINARY_OPS line */
#undef DT__B_ENUM
/* AXPY: out = alpha*a + b. DIV is float-only. MAX/MIN: NaN propagates (as torch.maximum). */

typedef struct dt__opdef {
    const char *name;
    uint8_t family, arity, kernel; /* kernel: the dt__uop / dt__bop / dt__rop it runs       */
    int8_t reduce;                 /* the Partial kind a contraction/reduction yields; -1: the
                                      reduced dims are fixed instead (argmax)               */
    uint8_t flags;
    int8_t pmap[4];                /* unary: input Partial(k) -> output Partial(pmap[k]); -1 */
    const dt__prule *prules;       /* multi-input Partial rule                              */
    uint8_t nprules;
} dt__opdef;

/* DT__OP_<NAME>: the row of dt__op_table; both come from the registry's
   lists (top of the implementation), in one order */
#define DT__OP_ENUM_U(NAME, name, wrap, fl, pm, fmath, imath) DT__OP_##NAME,
#define DT__OP_ENUM_B(NAME, name, k, fl, pr, fmath, imath) DT__OP_##NAME,
#define DT__OP_ENUM_T(NAME, fn, fam, nin, k, mpi, fl, pm, pr) DT__OP_##NAME,
enum { DT__UNARY_OPS(DT__OP_ENUM_U) DT__BINARY_OPS(DT__OP_ENUM_B) DT__TABLE_OPS(DT__OP_ENUM_T) DT__OP_COUNT };
#undef DT__OP_ENUM_U
#undef DT__OP_ENUM_B
#undef DT__OP_ENUM_T

#define DT__OP_ROW_U(NAME, name, wrap, fl, pm, fmath, imath) \
    {"dt_" #name, DT__F_UNARY, 1, DT__U_##NAME, -1, (uint8_t)(DT__ELEMENTWISE | (fl)), pm, DT__NOPR()},
#define DT__OP_ROW_B(NAME, name, k, fl, pr, fmath, imath) \
    {"dt_" #name, DT__F_BINARY, 2, DT__B_##k, -1, (uint8_t)(DT__ELEMENTWISE | (fl)), DT__PM_NONE(), DT__PR(pr)},
#define DT__OP_ROW_T(NAME, fn, fam, nin, k, mpi, fl, pm, pr) {fn, fam, nin, k, mpi, fl, pm, pr},
static const dt__opdef dt__op_table[DT__OP_COUNT] = {
    DT__UNARY_OPS(DT__OP_ROW_U) DT__BINARY_OPS(DT__OP_ROW_B) DT__TABLE_OPS(DT__OP_ROW_T)
};
#undef DT__OP_ROW_U
#undef DT__OP_ROW_B
#undef DT__OP_ROW_T

#define DT__TRAITS_ROW(NAME, infer, run, traits) traits,
static const uint8_t dt__family_traits[DT__F_COUNT] = {DT__FAMILIES(DT__TRAITS_ROW)};
#undef DT__TRAITS_ROW

/* ---- the element functions ---- */

/* The element functions one list line gives (>>math instantiates them, DT__HD,
   for host and GPU alike), for the working type set around the expansion:
   DT__EQUAL (their qualifier), DT__SFX (f32, f64, i64), DT__W and the
   DT__LM/DT__EXPW/DT__MULW/DT__ADDW of that type; and the switch cases that
   call them (dtensor_cuda.h's per-element switches). */
#define DT__ENAME(pfx, kind, name, sfx) DT__ENAME_(pfx, kind, name, sfx)
#define DT__ENAME_(pfx, kind, name, sfx) pfx##kind##_##name##_##sfx
#define DT__UELEM_F(NAME, name, wrap, fl, pm, fmath, imath) \
    DT__EQUAL DT__W DT__ENAME(dt__, u, name, DT__SFX)(DT__W x, DT__W a) { (void)x; (void)a; return fmath; }
#define DT__UELEM_I(NAME, name, wrap, fl, pm, fmath, imath) \
    DT__EQUAL int64_t DT__ENAME(dt__, u, name, i64)(int64_t x, int64_t a) { (void)x; (void)a; return imath; }
#define DT__BELEM_F(NAME, name, k, fl, pr, fmath, imath) \
    DT__EQUAL DT__W DT__ENAME(dt__, b, name, DT__SFX)(DT__W p, DT__W q, DT__W alpha) { (void)alpha; return fmath; }
#define DT__BELEM_I(NAME, name, k, fl, pr, fmath, imath)                                                     \
    DT__EQUAL int64_t DT__ENAME(dt__, b, name, i64)(int64_t p, int64_t q, int64_t alpha) {               \
        (void)alpha;                                                                                         \
        return imath;                                                                                        \
    }
/* their switch cases: element x (unary) or p, q (binary) of working type DT__SFX */
#define DT__UELEM_CASE(NAME, name, wrap, fl, pm, fmath, imath) \
    case DT__U_##NAME: return DT__ENAME(dt__, u, name, DT__SFX)(x, a);
#define DT__BELEM_CASE(NAME, name, k, fl, pr, fmath, imath) \
    case DT__B_##k: return DT__ENAME(dt__, b, name, DT__SFX)(p, q, alpha);

/*    dt__u_<name>_f32/_f64/_i64 and dt__b_<name>_f32/_f64/_i64 from the
   registry's math columns, DT__HD: the host kernels' loops (>>kernels) and
   dtensor_cuda.h's kernels call these very functions. A product or sum the
   host rounds twice is DT__FMUL & co. there (nvcc would fuse it). */
#define DT__EQUAL DT__HD
#define DT__W float
#define DT__SFX f32
#define DT__LM(fn) fn##f
#define DT__EXPW(v) dt__expf(v)
#define DT__MULW(p, q) DT__FMUL(p, q)
#define DT__ADDW(p, q) DT__FADD(p, q)
DT__UNARY_OPS(DT__UELEM_F) DT__DEFS_END;
DT__BINARY_OPS(DT__BELEM_F) DT__DEFS_END;
#undef DT__W
#undef DT__SFX
#undef DT__LM
#undef DT__EXPW
#undef DT__MULW
#undef DT__ADDW

#define DT__W double
#define DT__SFX f64
#define DT__LM(fn) fn
#define DT__EXPW(v) exp(v)
#define DT__MULW(p, q) DT__DMUL(p, q)
#define DT__ADDW(p, q) DT__DADD(p, q)
DT__UNARY_OPS(DT__UELEM_F) DT__DEFS_END;
DT__BINARY_OPS(DT__BELEM_F) DT__DEFS_END;
#undef DT__W
#undef DT__SFX
#undef DT__LM
#undef DT__EXPW
#undef DT__MULW
#undef DT__ADDW

/* the float-only ops are never called for integers (their int64 math is x) */
DT__UNARY_OPS(DT__UELEM_I) DT__DEFS_END;
DT__BINARY_OPS(DT__BELEM_I) DT__DEFS_END;
#undef DT__EQUAL

/* >>util ------------------------------------------------------------------
   Allocation, errors, overflow-checked arithmetic, placement names, and the
   element-wise reduction (halves through >>math's conversions) the backend's own
   collectives need. */
#include <assert.h>
#include <math.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#if defined(__linux__) && !defined(DTENSOR_NO_MPI)
#include <sys/statvfs.h> /* the shared arena's room (>>mesh, shm) */
#endif
#if defined(__GNUC__) || defined(__clang__)
#define DT__MAYBE_UNUSED __attribute__((unused))
#else
#define DT__MAYBE_UNUSED
#endif
/* local GEMM backend (DTENSOR_BLAS, see OPTIONS): DT__BLAS is 1 blis, 2 cblas,
   3 f77, 0 none. The value is pasted onto DT__BLAS_ID_ so that the user writes
   -DDTENSOR_BLAS=cblas (no strings, usable in #if); an unknown name is 0 here. */
#define DT__BLAS_ID_blis 1
#define DT__BLAS_ID_cblas 2
#define DT__BLAS_ID_f77 3
#define DT__BLAS_ID_none 4
#define DT__BLAS_ID_(x) DT__BLAS_ID_##x
#define DT__BLAS_ID(x) DT__BLAS_ID_(x)
#if !defined(DTENSOR_BLAS)
#ifdef DTENSOR_NO_BLIS
#define DT__BLAS 0
#else
#define DT__BLAS 1
#endif
#elif DT__BLAS_ID(DTENSOR_BLAS) == 4
#define DT__BLAS 0
#elif DT__BLAS_ID(DTENSOR_BLAS) >= 1 && DT__BLAS_ID(DTENSOR_BLAS) <= 3
#define DT__BLAS DT__BLAS_ID(DTENSOR_BLAS)
#else
#error "dtensor.h: DTENSOR_BLAS must be blis, cblas, f77 or none"
#endif
#if defined(DTENSOR_NO_BLIS) && DT__BLAS != 0
#error "dtensor.h: DTENSOR_NO_BLIS contradicts DTENSOR_BLAS (use DTENSOR_BLAS=none)"
#endif
#ifndef DTENSOR_BLAS_INT
#define DTENSOR_BLAS_INT int /* the BLAS's integer (cblas, f77): long for an ILP64 build */
#endif
/* DTENSOR_BLAS_WEAK (GCC/Clang, ELF): weak references to the BLAS, so that a
   program that never multiplies links without any BLAS (the loops run when
   it is absent). Not the default: a linker run with --as-needed (Debian 12's
   and Ubuntu's gcc default) drops a library that only weak references use,
   so -lblis alone would silently give the loops (link -Wl,--no-as-needed
   -lblis), and a static archive's members are not pulled in by them. */
#if DT__BLAS != 0 && defined(DTENSOR_BLAS_WEAK) && defined(__ELF__) && (defined(__GNUC__) || defined(__clang__))
#define DT__BLAS_WEAK 1
#else
#define DT__BLAS_WEAK 0
#endif
/* A weak BLIS build calls BLIS through its Fortran interface (sgemm_,
   dgemm_, ...: libblis exports it) and includes no blis.h: blis.h's inline
   helpers (bli_obj_scalar_detach, ...) reference BLIS strongly wherever
   the compiler does not inline them away, as at -O0. */
#if DT__BLAS == 1 && DT__BLAS_WEAK
#undef DT__BLAS
#define DT__BLAS 3
#define DT__BLAS_F77_OF_BLIS 1
#else
#define DT__BLAS_F77_OF_BLIS 0
#endif

#if DT__BLAS == 1
#ifndef DTENSOR_BLIS_HEADER
/* Debian: <blis.h> in a system include dir; a BLIS `make install`:
   PREFIX/include/blis/blis.h (found with -IPREFIX/include, or pass
   -IPREFIX/include/blis, as pkg-config blis does; -isystem rather than -I
   under -Wextra -Werror: blis.h itself is not warning-free) */
#if defined(__has_include)
#if __has_include(<blis.h>)
#define DTENSOR_BLIS_HEADER <blis.h>
#elif __has_include(<blis/blis.h>)
#define DTENSOR_BLIS_HEADER <blis/blis.h>
#else
#error "dtensor.h: neither <blis.h> nor <blis/blis.h> found: install BLIS (Debian: libblis-dev), add -I for it, or pick another DTENSOR_BLAS (cblas, f77, none)"
#endif
#else
#define DTENSOR_BLIS_HEADER <blis.h>
#endif
#endif
#if defined(__GLIBC__) && !defined(__USE_XOPEN2K) && !defined(BLIS_H)
/* blis.h typedefs pthread_barrier_t, which glibc hides under strict
   -std=c99 (no _POSIX_C_SOURCE). dtensor never touches BLIS's thread types,
   so opaque stand-ins let the header parse in that mode. */
typedef struct dt__blis_barrier { long dt__opaque[8]; } dt__blis_barrier;
typedef int dt__blis_barrierattr;
#define pthread_barrier_t dt__blis_barrier
#define pthread_barrierattr_t dt__blis_barrierattr
#include DTENSOR_BLIS_HEADER
#undef pthread_barrier_t
#undef pthread_barrierattr_t
#else
#include DTENSOR_BLIS_HEADER
#endif
/* blis.h's unprefixed macros that could collide with the user's names (it
   also leaves its BLIS_/bli_ names, its typedefs dim_t, inc_t, obj_t, ...,
   its GENTFUNC/INSERT_GENT .../ *_KER_PROT template macros, and the
   <stdbool.h>, <pthread.h>, <float.h>, <ctype.h> it includes) */
#undef TRUE
#undef FALSE
#undef TRUE_
#undef FALSE_
#undef VOID
#undef Extern
#undef typeof
#undef bit_set
#undef bit_clear
#undef bit_test
#undef f2c_abs
#undef f2c_dabs
#undef f2c_min
#undef f2c_max
#undef f2c_dmin
#undef f2c_dmax
#undef MKSTR
#undef STRINGIFY_INT
#undef GEN_PRAGMA
#undef PRAGMA_SIMD
#undef PRAGMA_OMP_SIMD
#undef GENARRAY
#undef GENFRONT
#undef GENPROT
#undef GENTDEF
#undef GENTFUNC
#undef GENTPROT
#undef gemm_ukr_name
#undef trsm_l_ukr_name
#undef trsm_u_ukr_name
#undef gemmtrsm_l_ukr_name
#undef gemmtrsm_u_ukr_name
#if DT__BLAS_WEAK
#pragma weak bli_sgemm_ex
#pragma weak bli_dgemm_ex
#pragma weak bli_cgemm_ex
#pragma weak bli_zgemm_ex
#pragma weak bli_rntm_init_from_global
#endif
#elif DT__BLAS == 2
#ifndef DTENSOR_CBLAS_HEADER
#define DTENSOR_CBLAS_HEADER <cblas.h> /* MKL: <mkl_cblas.h> */
#endif
#include DTENSOR_CBLAS_HEADER
#if DT__BLAS_WEAK
#pragma weak cblas_sgemm
#pragma weak cblas_dgemm
#pragma weak cblas_cgemm
#pragma weak cblas_zgemm
#endif
#elif DT__BLAS == 3
/* Fortran BLAS, declared here (no header): column-major, arguments by
   reference, and the hidden lengths of the two CHARACTER arguments last (as
   gfortran passes them; a C implementation ignores them). Symbols sgemm_ and
   dgemm_: Debian's reference BLAS, OpenBLAS, MKL, libsci, BLIS. */
#ifdef __cplusplus
extern "C" {
#endif
#if DT__BLAS_WEAK
#define DT__BLAS_ATTR __attribute__((weak))
#else
#define DT__BLAS_ATTR
#endif
extern void sgemm_(const char *ta, const char *tb, const DTENSOR_BLAS_INT *m, const DTENSOR_BLAS_INT *n,
                   const DTENSOR_BLAS_INT *k, const float *alpha, const float *a, const DTENSOR_BLAS_INT *lda,
                   const float *b, const DTENSOR_BLAS_INT *ldb, const float *beta, float *c,
                   const DTENSOR_BLAS_INT *ldc, size_t lta, size_t ltb) DT__BLAS_ATTR;
extern void dgemm_(const char *ta, const char *tb, const DTENSOR_BLAS_INT *m, const DTENSOR_BLAS_INT *n,
                   const DTENSOR_BLAS_INT *k, const double *alpha, const double *a, const DTENSOR_BLAS_INT *lda,
                   const double *b, const DTENSOR_BLAS_INT *ldb, const double *beta, double *c,
                   const DTENSOR_BLAS_INT *ldc, size_t lta, size_t ltb) DT__BLAS_ATTR;
/* complex (C64/C128): the scalars and matrices are (re, im) pairs */
extern void cgemm_(const char *ta, const char *tb, const DTENSOR_BLAS_INT *m, const DTENSOR_BLAS_INT *n,
                   const DTENSOR_BLAS_INT *k, const float *alpha, const float *a, const DTENSOR_BLAS_INT *lda,
                   const float *b, const DTENSOR_BLAS_INT *ldb, const float *beta, float *c,
                   const DTENSOR_BLAS_INT *ldc, size_t lta, size_t ltb) DT__BLAS_ATTR;
extern void zgemm_(const char *ta, const char *tb, const DTENSOR_BLAS_INT *m, const DTENSOR_BLAS_INT *n,
                   const DTENSOR_BLAS_INT *k, const double *alpha, const double *a, const DTENSOR_BLAS_INT *lda,
                   const double *b, const DTENSOR_BLAS_INT *ldb, const double *beta, double *c,
                   const DTENSOR_BLAS_INT *ldc, size_t lta, size_t ltb) DT__BLAS_ATTR;
#undef DT__BLAS_ATTR
#ifdef __cplusplus
}
#endif
#endif

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
/* clang's static analyzer (make lint) does not look into variadic functions:
   show it that dt__fail returns its status. Analysis builds only. */
#ifdef __clang_analyzer__
#define dt__fail(st, ...) (dt__fail((st), __VA_ARGS__), (st))
#endif

/* an error from an inner call (a nested public call, the backend, an
   allocation): make the message name the public call fn too */
static dt_status dt__within(const char *fn, dt_status st) {
    size_t n = strlen(fn), len = strlen(dt__errbuf);
    /* (a message naming the call elsewhere, e.g. another rank's reason inside a mismatch, is still prefixed) */
    if (st == DT_OK || (!strncmp(dt__errbuf, fn, n) && (dt__errbuf[n] == ':' || dt__errbuf[n] == ' ')) ||
        n + 2 >= sizeof dt__errbuf)
        return st;
    if (len > sizeof dt__errbuf - n - 3) len = sizeof dt__errbuf - n - 3; /* keep the end's NUL */
    memmove(dt__errbuf + n + 2, dt__errbuf, len);
    dt__errbuf[n + 2 + len] = 0;
    memcpy(dt__errbuf, fn, n);
    dt__errbuf[n] = ':';
    dt__errbuf[n + 1] = ' ';
    return st;
}

DT_API const char *dt_last_error(void) { return dt__errbuf; }
DT_API void dt_clear_error(void) { dt__errbuf[0] = 0; }

/* The error hook. Every exported call that returns dt_status is a one-line
   DT__PUBLIC wrapper around its body (tests/lint/public_calls.py checks
   it): the depth counts the public calls this thread is inside, so a
   failure is reported once, by the outermost call, under its name. */
static dt_error_handler dt__error_fn;
static void *dt__error_user;
static DT__TLS int dt__public_depth;

static DT__TLS int dt__in_handler;

/* The handler runs with the library's state saved: it gets its own copy of
   the message, the calls it makes do not call it again, and whatever they
   leave in dt_last_error() is put back when it returns, so the failed call
   reports what it reported before. */
static void dt__call_handler(dt_status st, const char *call) {
    char msg[sizeof dt__errbuf];
    if (st == DT_OK || !dt__error_fn || dt__in_handler) return;
    memcpy(msg, dt__errbuf, sizeof msg);
    dt__in_handler++;
    dt__error_fn(st, call, msg, dt__error_user);
    dt__in_handler--;
    memcpy(dt__errbuf, msg, sizeof msg);
}

static dt_status dt__public_return(const char *call, dt_status st) {
    dt__public_depth--;
    if (dt__public_depth == 0) dt__call_handler(st, call);
    return st;
}
#define DT__PUBLIC(call, body)                \
    do {                                      \
        dt_status public_st_;                 \
        dt__public_depth++;                   \
        public_st_ = (body);                  \
        return dt__public_return(call, public_st_); \
    } while (0)

/* Calls made through the Fortran module (the dt_f_* entry points, >>fortran)
   speak Fortran in their messages: shapes reversed, Shard dims and tensor
   dims counted 1..ndim from Fortran's first, array elements as a(i), members
   as desc%shape. One flag read where messages are formatted, not a second
   set of messages: dt__shape_str, dt__placement_str, dt__tdim, dt__mdim. */
static DT__TLS int dt__f_order;

/* a tensor dim d of a rank-ndim tensor as the caller counts it */
static int dt__tdim(int d, int ndim) { return dt__f_order && d >= 0 && d < ndim ? ndim - d : d; }
/* a mesh dim's index into a placements array as the caller writes it */
static int dt__mdim(int i) { return dt__f_order ? i + 1 : i; }

static int dt__is_digit(char c) { return c >= '0' && c <= '9'; }
static int dt__is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

/* the C names the module spells differently (dtensor.f90's NAMES: Fortran
   is case-insensitive, so the flags carry their enum's name) */
static void dt__f_rename(void) {
    static const char *const from[4] = {"DT_BORROW", "DT_COPY", "DT_VERIFY", "DT_INFER_SIZES"};
    char out[sizeof dt__errbuf];
    size_t w = 0, r = 0, k;
    while (dt__errbuf[r] && w + 1 < sizeof out) {
        int hit = -1;
        for (k = 0; k < 4 && hit < 0; k++) {
            size_t n = strlen(from[k]);
            if (!strncmp(dt__errbuf + r, from[k], n) && !dt__is_alpha(dt__errbuf[r + n]) &&
                (r == 0 || !dt__is_alpha(dt__errbuf[r - 1])))
                hit = (int)k;
        }
        if (hit >= 0 && w + 8 + strlen(from[hit]) < sizeof out) { /* DT_X -> DT_FLAG_X */
            memcpy(out + w, "DT_FLAG_", 8);
            memcpy(out + w + 8, from[hit] + 3, strlen(from[hit]) - 3);
            w += 8 + strlen(from[hit]) - 3;
            r += strlen(from[hit]);
        } else {
            out[w++] = dt__errbuf[r++];
        }
    }
    out[w] = 0;
    memcpy(dt__errbuf, out, w + 1);
}

/* the message rewritten in Fortran's syntax: x->y is x%y, a[3] is a(3)
   (" -> " between placements stays: it is a transition, not a member) */
static void dt__f_message(void) {
    char *r = dt__errbuf, *w = dt__errbuf;
    while (*r) {
        int ident = w > dt__errbuf && (dt__is_alpha(w[-1]) || dt__is_digit(w[-1]));
        if (ident && r[0] == '-' && r[1] == '>' && dt__is_alpha(r[2])) {
            *w++ = '%';
            r += 2;
        } else if (ident && dt__is_alpha(w[-1]) && r[0] == '[' && dt__is_digit(r[1])) { /* (f64[5] is a shape) */
            char *e = r + 1;
            while (dt__is_digit(*e)) e++;
            if (*e != ']') { *w++ = *r++; continue; }
            *w++ = '(';
            while (++r < e) *w++ = *r;
            *w++ = ')';
            r++;
        } else {
            *w++ = *r++;
        }
    }
    *w = 0;
    dt__f_rename();
}

static dt_status dt__f_leave(dt_status st) {
    if (--dt__f_order == 0 && st) dt__f_message();
    return st;
}
/* DT__PUBLIC for a dt_f_* entry point: the body runs in Fortran order */
#define DT__F_PUBLIC(call, body) DT__PUBLIC(call, (dt__f_order++, dt__f_leave(body)))

DT_API void dt_set_error_handler(dt_error_handler fn, void *user) {
    dt__error_fn = fn;
    dt__error_user = fn ? user : NULL;
}

/* a failure reported by code on the public API: the handler gets the name
   its message starts with ("my_call: n = 0 ..." -> "my_call") */
static void dt__report_outside(dt_status st) {
    char call[64];
    size_t n = strcspn(dt__errbuf, ": ");
    if (dt__public_depth != 0) return;
    if (n >= sizeof call) n = sizeof call - 1;
    memcpy(call, dt__errbuf, n);
    call[n] = 0;
    dt__call_handler(st, call);
}

DT_API void dt_call_begin(void) { dt__public_depth++; }
DT_API dt_status dt_call_end(const char *call, dt_status st) {
    if (dt__public_depth <= 0) { /* an end without its begin: report as the outermost call */
        dt__public_depth = 1;
    }
    return dt__public_return(call ? call : "?", st);
}

/* the same bracket in Fortran order (a dt_f_* entry point of code on the
   public API): dt__f_order as DT__F_PUBLIC keeps it */
DT_API void dt_f_call_begin(void) {
    dt_call_begin();
    dt__f_order++;
}
DT_API dt_status dt_f_call_end(const char *call, dt_status st) {
    if (dt__f_order > 0) st = dt__f_leave(st); /* (an end without its begin: no order to leave) */
    return dt_call_end(call, st);
}
DT_API int dt_f_order(void) { return dt__f_order > 0; }

DT_API dt_status dt_set_last_error(dt_status st, const char *fmt, ...) {
    va_list ap;
    if (!fmt) {
        dt__errbuf[0] = 0;
    } else {
        va_start(ap, fmt);
        vsnprintf(dt__errbuf, sizeof dt__errbuf, fmt, ap);
        va_end(ap);
    }
    dt__report_outside(st);
    return st;
}

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

/* the version and the ABI check's symbol (>>config; declared there with
   external linkage, so this is its one definition) */
DT_API const char *dt_version(void) { return DTENSOR_VERSION_STRING; }
#ifndef DTENSOR_STATIC
const int DT__ABI_SYM = 1;
#endif

/* malloc(0) may return NULL; a successful empty allocation must not look
   like a failure, so every request is at least one byte. */
static dt_status dt__alloc(const char *fn, size_t bytes, void **out) {
    void *p = DT_MALLOC(bytes ? bytes : 1);
    if (!p) return dt__fail(DT_ERR_NOMEM, "%s: out of memory allocating %zu bytes", fn, bytes);
    *out = p;
    return DT_OK;
}
static void dt__free(void *p) { DT_FREE(p); }

/* A grow-only buffer (the work buffers a time loop reuses): *buf holds at
   least `bytes` afterwards, its contents not kept; a larger one is made with
   `alloc` and the old one given to `release`. *cap 0 or *buf NULL: none yet. */
static dt_status dt__grow(dt_status (*alloc)(const char *fn, size_t bytes, void **p), void (*release)(void *p),
                          const char *fn, size_t bytes, void **buf, size_t *cap) {
    void *p = NULL;
    dt_status st;
    if (*buf && *cap >= bytes) return DT_OK;
    if ((st = alloc(fn, bytes ? bytes : 1, &p))) return st;
    if (*buf) release(*buf);
    *buf = p;
    *cap = bytes;
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
    case DT_F64: case DT_I64: case DT_C64: return 8;
    case DT_F16: case DT_BF16: return 2;
    case DT_U8: return 1;
    case DT_C128: return 16;
    }
    return 0;
}

DT_API const char *dt_dtype_name(dt_dtype t) {
    static const char *const names[DT_NUM_DTYPES] = {"f32", "f64", "f16", "bf16", "i32", "i64", "u8", "c64", "c128"};
    return ((unsigned)t < DT_NUM_DTYPES) ? names[t] : "?";
}

static int dt__dtype_valid(dt_dtype t) { return (unsigned)t < DT_NUM_DTYPES; }
static int dt__dtype_is_half(dt_dtype t) { return t == DT_F16 || t == DT_BF16; }
static int dt__is_complex(dt_dtype t) { return t == DT_C64 || t == DT_C128; }
/* the dtype of one part of a complex element (F32 / F64); others: themselves */
static dt_dtype dt__part_dtype(dt_dtype t) { return t == DT_C64 ? DT_F32 : t == DT_C128 ? DT_F64 : t; }

DT_API dt_placement dt_replicate(void) {
    dt_placement p;
    memset(&p, 0, sizeof p);
    return p;
}
DT_API dt_placement dt_shard(int tensor_dim) {
    dt_placement p = dt_replicate();
    p.kind = DT_SHARD; p.dim = (int8_t)tensor_dim;
    return p;
}
DT_API dt_placement dt_shard_balanced(int tensor_dim) {
    dt_placement p = dt_shard(tensor_dim);
    p.split = DT_SPLIT_BALANCED;
    return p;
}
DT_API dt_placement dt_shard_sizes(int tensor_dim, const int64_t *sizes) {
    dt_placement p = dt_shard(tensor_dim);
    p.split = DT_SPLIT_SIZES;
    p.sizes = sizes;
    return p;
}
DT_API dt_placement dt_shard_cyclic(int tensor_dim, int64_t block) {
    dt_placement p = dt_shard(tensor_dim);
    p.split = DT_SPLIT_CYCLIC;
    p.block = block;
    return p;
}
DT_API dt_placement dt_shard_cyclic_src(int tensor_dim, int64_t block, int src) {
    dt_placement p = dt_shard_cyclic(tensor_dim, block);
    p.src = (int32_t)src;
    return p;
}
DT_API dt_placement dt_partial(dt_reduce op) {
    dt_placement p = dt_replicate();
    p.kind = DT_PARTIAL; p.reduce = (uint8_t)op;
    return p;
}

static const char *dt__reduce_name(int op) {
    static const char *const names[4] = {"sum", "avg", "max", "min"};
    return (op >= 0 && op < 4) ? names[op] : "?";
}

/* "S(0)", "S(0,balanced)", "S(0,sizes)", "S(0,cyclic 64)", "R", "P(sum)" into buf; returns buf
   (ndim: the tensor's rank, which a Fortran-order message needs for the
   dim; -1 when unknown: the dim as stored) */
static char *dt__placement_str(dt_placement p, int ndim, char *buf, size_t n) {
    int d = p.dim < 0 && ndim > 0 ? p.dim + ndim : p.dim;
    d = ndim >= 0 ? dt__tdim(d, ndim) : p.dim;
    if (p.kind == DT_SHARD && p.split == DT_SPLIT_BALANCED) snprintf(buf, n, "S(%d,balanced)", d);
    else if (p.kind == DT_SHARD && p.split == DT_SPLIT_SIZES) snprintf(buf, n, "S(%d,sizes)", d);
    else if (p.kind == DT_SHARD && p.split == DT_SPLIT_CYCLIC && p.src)
        snprintf(buf, n, "S(%d,cyclic %lld,src %d)", d, (long long)p.block, (int)p.src);
    else if (p.kind == DT_SHARD && p.split == DT_SPLIT_CYCLIC)
        snprintf(buf, n, "S(%d,cyclic %lld)", d, (long long)p.block);
    else if (p.kind == DT_SHARD && p.split) snprintf(buf, n, "S(%d,split %d)", d, (int)p.split);
    else if (p.kind == DT_SHARD) snprintf(buf, n, "S(%d)", d);
    else if (p.kind == DT_PARTIAL) snprintf(buf, n, "P(%s)", dt__reduce_name(p.reduce));
    else if (p.kind == DT_REPLICATE) snprintf(buf, n, "R");
    else snprintf(buf, n, "?(kind %d)", (int)p.kind);
    return buf;
}

static char *dt__placements_str(const dt_placement *p, int n, int ndim, char *buf, size_t cap) {
    size_t len = 0;
    int i;
    buf[0] = 0;
    len += (size_t)snprintf(buf + len, cap - len, "[");
    for (i = 0; i < n && len < cap; i++) {
        char one[48];
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", dt__placement_str(p[i], ndim, one, sizeof one));
    }
    if (len < cap) snprintf(buf + len, cap - len, "]");
    return buf;
}

static char *dt__shape_str(const int64_t *s, int n, char *buf, size_t cap) {
    size_t len = 0;
    int i;
    len += (size_t)snprintf(buf, cap, "[");
    for (i = 0; i < n && len < cap; i++) /* (Fortran order: the last first) */
        len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "", (long long)s[dt__f_order ? n - 1 - i : i]);
    if (len < cap) snprintf(buf + len, cap - len, "]");
    return buf;
}

DT_API char *dt_placements_str(const dt_placement *p, int n, char *buf, size_t cap) {
    return dt__placements_str(p, n, -1, buf, cap);
}
DT_API char *dt_shape_str(const int64_t *shape, int n, char *buf, size_t cap) { return dt__shape_str(shape, n, buf, cap); }

/* Normalised placements (dt__check_placements) carry, for DT_SPLIT_SIZES,
   the number of sizes in `block`, so that two copies of the same sizes
   compare equal wherever their arrays live. */
static int dt__placement_eq(dt_placement a, dt_placement b) {
    if (a.kind != b.kind || a.dim != b.dim || a.reduce != b.reduce || a.split != b.split || a.block != b.block ||
        a.src != b.src)
        return 0;
    if (a.kind != DT_SHARD || a.split != DT_SPLIT_SIZES || a.sizes == b.sizes) return 1;
    return a.block > 0 && a.sizes && b.sizes && !memcmp(a.sizes, b.sizes, (size_t)a.block * sizeof(int64_t));
}

/* (through pointers, field by field: the ops' dispatch compares placements
   on every call, and passing the structs by value cost a copy each) */
static int dt__placements_eq(const dt_placement *a, const dt_placement *b, int n) {
    int i;
    for (i = 0; i < n; i++) {
        const dt_placement *x = &a[i], *y = &b[i];
        if (x->kind != y->kind || x->dim != y->dim || x->reduce != y->reduce || x->split != y->split ||
            x->block != y->block || x->src != y->src)
            return 0;
        if (x->kind == DT_SHARD && x->split == DT_SPLIT_SIZES && x->sizes != y->sizes && !dt__placement_eq(*x, *y))
            return 0;
    }
    return 1;
}

/* Does another mesh dim than i shard tensor dim d in pl? */
static int dt__nested_on(const dt_placement *pl, int mndim, int i, int d) {
    int j;
    for (j = 0; j < mndim; j++)
        if (j != i && pl[j].kind == DT_SHARD && pl[j].dim == d) return 1;
    return 0;
}

static int dt__pl_cyclic(const dt_placement *pl, int mndim) {
    int i;
    for (i = 0; i < mndim; i++)
        if (pl[i].kind == DT_SHARD && pl[i].split == DT_SPLIT_CYCLIC) return 1;
    return 0;
}

/* U: the type the sum is computed in -- unsigned for integers, so an
   overflowing integer sum wraps (two's complement, as torch's and the
   device combine's do) on every path instead of being undefined */
#define DT__REDUCE_LOOP(T, U)                                                    \
    do {                                                                         \
        T *a = (T *)acc;                                                         \
        const T *b = (const T *)x;                                               \
        if (op == DT_SUM) for (i = 0; i < n; i++) a[i] = (T)((U)a[i] + (U)b[i]); \
        else if (op == DT_MAX) for (i = 0; i < n; i++) a[i] = b[i] > a[i] ? b[i] : a[i]; \
        else for (i = 0; i < n; i++) a[i] = b[i] < a[i] ? b[i] : a[i];           \
    } while (0)

/* acc[i] = op(acc[i], x[i]) for the dtypes the backends reduce */
/* F16/BF16 pairs combined in F32 and rounded back (a backend that set
   native_half but lacks the collective, emulated over sendrecv) */
static void dt__reduce_half(dt_dtype t, dt_reduce op, void *acc, const void *x, size_t n) {
    uint16_t *a = (uint16_t *)acc;
    const uint16_t *b = (const uint16_t *)x;
    size_t i;
    for (i = 0; i < n; i++) {
        float u = t == DT_F16 ? dt__h2f(a[i]) : dt__b2f(a[i]);
        float v = t == DT_F16 ? dt__h2f(b[i]) : dt__b2f(b[i]);
        float r = op == DT_MAX ? (u > v || u != u ? u : v) : op == DT_MIN ? (u < v || u != u ? u : v) : u + v;
        a[i] = t == DT_F16 ? dt__f2h(r) : dt__f2b(r);
    }
}

static void dt__reduce_elems(dt_dtype t, dt_reduce op, void *acc, const void *x, size_t n) {
    size_t i;
    switch (t) {
    case DT_F32: DT__REDUCE_LOOP(float, float); break;
    case DT_F64: DT__REDUCE_LOOP(double, double); break;
    case DT_I32: DT__REDUCE_LOOP(int32_t, uint32_t); break;
    case DT_I64: DT__REDUCE_LOOP(int64_t, uint64_t); break;
    case DT_U8: DT__REDUCE_LOOP(uint8_t, unsigned); break;
    default: dt__reduce_half(t, op, acc, x, n); break;
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

/* one element's mean from its summed parts (written once for host and
   device: dtensor_cuda.h's join kernel calls it) */
DT__HD int64_t dt__avg_mean(int64_t q, int64_t r, int k) {
    int64_t a = q + r / k, b = r % k;
    if (a > 0 && b < 0) a--;
    else if (a < 0 && b > 0) a++;
    return a;
}

static void dt__avg_join(dt_dtype t, const int64_t *q, const int64_t *r, size_t n, int k, void *out) {
    size_t i;
    for (i = 0; i < n; i++) {
        /* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult): qr holds 2 * sum(counts) words, all written by dt__avg_split */
        int64_t a = dt__avg_mean(q[i], r[i], k);
        if (t == DT_I32) ((int32_t *)out)[i] = (int32_t)a;
        else if (t == DT_U8) ((uint8_t *)out)[i] = (uint8_t)a;
        else ((int64_t *)out)[i] = a;
    }
}

static int dt__int_avg(dt_dtype t, dt_reduce op) {
    return op == DT_AVG && (t == DT_I32 || t == DT_I64 || t == DT_U8);
}

enum { DT__LOG_PLAN = 1, DT__LOG_OPS = 2, DT__LOG_SHM = 4 }; /* DTENSOR_LOG's words "plan", "ops", "shm" */

static int dt__log_flags = -1; /* -1: not read yet */

static int dt__log_read(void) {
    const char *s = getenv("DTENSOR_LOG");
    dt__log_flags = (s && strstr(s, "plan") ? DT__LOG_PLAN : 0) | (s && strstr(s, "ops") ? DT__LOG_OPS : 0) |
                    (s && strstr(s, "shm") ? DT__LOG_SHM : 0);
    return dt__log_flags;
}

/* is DTENSOR_LOG's `what` on? Read once: getenv scans the environment, and
   this sits on every op (inlined: a load and a test; host code, so not DT__HD) */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline int dt__log_on(int what) {
    int f = dt__log_flags;
    if (f < 0) f = dt__log_read();
    return (f & what) != 0;
}

/* DTENSOR_CHECK (or dt_set_checks): the cross-rank consistency checks of
   >>agree and >>mesh; read once, like DTENSOR_LOG */
static int dt__checks_state = -1; /* -1: not read yet */

static int dt__checks_on(void) {
    if (dt__checks_state < 0) {
        const char *s = getenv("DTENSOR_CHECK");
        dt__checks_state = s && *s && strcmp(s, "0") != 0;
    }
    return dt__checks_state;
}

DT_API void dt_set_checks(int on) { dt__checks_state = on != 0; }
DT_API int dt_get_checks(void) { return dt__checks_on(); }

/* >>layout ----------------------------------------------------------------
   Where each rank's shard sits in global index space. A shard is a box
   (lo, ext per tensor dim); a local buffer is a row-major array covering a
   box. All data movement is box copies between such arrays. */

typedef struct dt__box {
    int64_t lo[DT_MAX_DIMS];
    int64_t ext[DT_MAX_DIMS];
} dt__box;

typedef struct dt__array { /* a local buffer covering `box` */
    char *data;
    int ndim;
    size_t es;
    dt__box box;
    const int64_t *stride; /* element strides per dim; NULL: row-major over box */
} dt__array;

/* ceil(n / k) for n >= 0, k > 0, without the overflow of n + k - 1 */
static int64_t dt__ceil_div(int64_t n, int64_t k) { return n / k + (n % k != 0); }

/* min(lo + c, n) for 0 <= lo <= n, c >= 0, without computing an
   overflowing lo + c (n may be near INT64_MAX for u8 tensors) */
static int64_t dt__end_clamped(int64_t lo, int64_t c, int64_t n) { return c > n - lo ? n : lo + c; }

/* torch.chunk: c = ceil(n/k); part r is [r*c, min(n,(r+1)*c)). An empty part
   is placed at the end of its parent (offset n), so boxes never leave the
   global index space. Overflow-free for every n up to INT64_MAX: r*c is
   formed only when it is <= n. */
static void dt__chunk(int64_t n, int k, int r, int64_t *off, int64_t *len) {
    int64_t c = dt__ceil_div(n, k), lo = r && c > n / r ? n : (int64_t)r * c;
    *off = lo;
    *len = dt__end_clamped(lo, c, n) - lo;
}

/* ScaLAPACK's NUMROC: the elements coordinate r of k owns when n positions
   are dealt in blocks of b, block i to coordinate i mod k. With a source
   coordinate src (block i to (src + i) mod k), pass dt__cyclic_pos(c, src, k). */
static int64_t dt__numroc(int64_t n, int64_t b, int k, int r) {
    int64_t full = n / b, own = full / k * b, rem = full % k;
    if (r < rem) own += b;
    else if (r == rem) own += n % b;
    return own;
}

/* where coordinate c sits in the deal of a cyclic rule whose block 0 is on
   coordinate src: it owns blocks pos, pos + k, ... */
static int dt__cyclic_pos(int c, int src, int k) { return (int)((((int64_t)c - src) % k + k) % k); }

/* Part r of n positions over k under a rule that gives one span (every rule
   but cyclic): its offset and length. Empty parts sit at the end of the
   parts before them, inside [0, n]. */
static void dt__split_span(int64_t n, int k, int r, const dt_placement *p, int64_t *off, int64_t *len) {
    if (p->split == DT_SPLIT_BALANCED) {
        int64_t q = n / k, e = n % k;
        *off = (int64_t)r * q + (r < e ? r : e);
        *len = q + (r < e);
    } else if (p->split == DT_SPLIT_SIZES) {
        int64_t o = 0;
        int c;
        for (c = 0; c < r; c++) o += p->sizes[c];
        *off = o;
        *len = p->sizes[r];
    } else {
        dt__chunk(n, k, r, off, len);
    }
}

/* The coordinate whose part holds position a (0 <= a < n) under a one-span
   rule; parts of length 0 hold nothing */
static int dt__split_find(int64_t n, int k, const dt_placement *p, int64_t a) {
    if (p->split == DT_SPLIT_BALANCED) {
        int64_t q = n / k, e = n % k, big = e * (q + 1);
        return (int)(a < big ? a / (q + 1) : e + (a - big) / q);
    }
    if (p->split == DT_SPLIT_SIZES) {
        int64_t o = 0;
        int c;
        for (c = 0; c < k - 1; c++) {
            o += p->sizes[c];
            if (a < o) return c;
        }
        return k - 1;
    }
    return (int)(a / dt__ceil_div(n, k));
}

/* How one tensor dim is split on one rank: the levels (mesh dims sharding
   it, in mesh-dim order), each taking part `c` of the `n` positions its
   parent left. A position p of the local part maps to its parent's
   position level by level, up to the global index. Allocation-free, so a
   layout query never fails. */
typedef struct dt__level {
    dt_placement p;
    int k, c;        /* c: the coordinate; under a cyclic rule its position in
                        the deal (the coordinate less src, mod k) */
    int64_t n, off;  /* the parent's extent; a one-span rule's offset in it */
} dt__level;

typedef struct dt__chain {
    int n;           /* levels */
    int cyclic;      /* some level is cyclic: the part may be several spans */
    int64_t ext;     /* the local extent */
    int64_t lo;      /* the global index of local position 0 (end of the parent if empty) */
    dt__level lv[DT_MAX_MESH_DIMS];
} dt__chain;

static int64_t dt__chain_up(const dt__chain *ch, int64_t p) {
    int i;
    for (i = ch->n - 1; i >= 0; i--) {
        const dt__level *l = &ch->lv[i];
        if (l->p.split == DT_SPLIT_CYCLIC) p = (l->c + p / l->p.block * l->k) * l->p.block + p % l->p.block;
        else p += l->off;
    }
    return p;
}

/* from local position p, how many positions map to consecutive global indices */
static int64_t dt__chain_span(const dt__chain *ch, int64_t p) {
    int64_t len = ch->ext - p;
    int i;
    for (i = ch->n - 1; i >= 0; i--) {
        const dt__level *l = &ch->lv[i];
        if (l->p.split == DT_SPLIT_CYCLIC) {
            int64_t left = l->p.block - p % l->p.block;
            if (left < len) len = left;
            p = (l->c + p / l->p.block * l->k) * l->p.block + p % l->p.block;
        } else {
            p += l->off;
        }
    }
    return len;
}

static void dt__chain_build(int64_t n, int mndim, const int *mshape, const int *coord, const dt_placement *pl, int d,
                            dt__chain *ch) {
    int64_t lo = 0;
    int i;
    ch->n = 0;
    ch->cyclic = 0;
    for (i = 0; i < mndim; i++) {
        dt__level *l;
        if (pl[i].kind != DT_SHARD || pl[i].dim != d) continue;
        l = &ch->lv[ch->n++];
        l->p = pl[i];
        l->k = mshape[i];
        l->c = coord[i];
        l->n = n;
        if (pl[i].split == DT_SPLIT_CYCLIC) { /* l->c: the position in the deal, src counted */
            ch->cyclic = 1;
            l->off = 0;
            l->c = dt__cyclic_pos(coord[i], pl[i].src, l->k);
            n = dt__numroc(n, pl[i].block, l->k, l->c);
        } else {
            dt__split_span(n, l->k, l->c, &pl[i], &l->off, &n);
            lo += l->off;
        }
    }
    ch->ext = n;
    /* one-span chains keep the running offset, also for empty parts (at the end
       of the parts before them); an empty cyclic part sits at the global end */
    ch->lo = !ch->cyclic ? lo : n ? dt__chain_up(ch, 0) : ch->lv[0].n;
}

/* The box of mesh coordinate `coord`: mesh dims split in mesh-dim order, so a
   tensor dim sharded by several mesh dims is split by the first, then that
   part by the next, offsets accumulating. Under a cyclic rule the part is
   several boxes: this box holds the local extents and, as lo, the global
   index of local element 0 (dt__chain has the rest). */
static void dt__layout_box(int ndim, const int64_t *gshape, int mndim, const int *mshape,
                           const int *coord, const dt_placement *pl, dt__box *b) {
    int d;
    for (d = 0; d < ndim; d++) {
        dt__chain ch;
        dt__chain_build(gshape[d], mndim, mshape, coord, pl, d, &ch);
        b->lo[d] = ch.lo;
        b->ext[d] = ch.ext;
    }
}

/* Do the sizes of the sizes rule on mesh dim i add up to the part they
   split, for every coordinate of the mesh dims before it? (pure) */
static int dt__sizes_fit(const int *mshape, const dt_placement *pl, const int64_t *shape, int i) {
    int coord[DT_MAX_MESH_DIMS], c, j, d = pl[i].dim;
    int64_t sum = 0;
    for (c = 0; c < mshape[i]; c++) sum += pl[i].sizes[c];
    memset(coord, 0, sizeof coord);
    for (;;) {
        dt__chain ch;
        dt__chain_build(shape[d], i, mshape, coord, pl, d, &ch);
        if (ch.ext != sum) return 0;
        for (j = i - 1; j >= 0; j--) {
            if (pl[j].kind != DT_SHARD || pl[j].dim != d) continue;
            if (++coord[j] < mshape[j]) break;
            coord[j] = 0;
        }
        if (j < 0) return 1;
    }
}

static size_t dt__box_numel(int ndim, const dt__box *b) {
    size_t n = 1;
    int d;
    /* NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Assign): every box is filled for its ndim dims (dt__layout_box, dt__box_intersect) before it is counted */
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
    if (a->stride) {
        for (d = 0; d < a->ndim; d++) stride[d] = (size_t)a->stride[d] * a->es;
        return;
    }
    for (d = a->ndim - 1; d >= 0; d--) { stride[d] = s; s *= (size_t)a->box.ext[d]; }
}

static size_t dt__array_offset(const dt__array *a, const size_t *stride, const dt__box *p) {
    size_t off = 0;
    int d;
    for (d = 0; d < a->ndim; d++) off += (size_t)(p->lo[d] - a->box.lo[d]) * stride[d];
    return off;
}

/* Is `piece` one contiguous span of `a`, its elements in row-major order?
   Then it can be sent or received in place, with no pack or unpack: the
   dims where the piece is longer than 1, taken inner to outer, start at
   the element size and each steps over exactly the span inside it. */
static int dt__piece_contiguous(const dt__array *a, const dt__box *piece, size_t *byte_off) {
    size_t stride[DT_MAX_DIMS] = {0}, span;
    int d;
    *byte_off = 0;
    if (dt__box_numel(a->ndim, piece) == 0 || a->ndim == 0) return 1;
    dt__array_strides(a, stride);
    span = a->es;
    for (d = a->ndim - 1; d >= 0; d--) {
        /* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult): piece->ext[0..ndim) is set for every dim of the box */
        if (piece->ext[d] == 1) continue;
        if (stride[d] != span) return 0;
        span *= (size_t)piece->ext[d];
    }
    *byte_off = dt__array_offset(a, stride, piece);
    return 1;
}

/* n spans of `span` bytes, at strides ds / ss; the common element sizes as
   fixed-size copies (inlined, no call per element) */
static void dt__copy_spans(char *d, size_t ds, const char *s, size_t ss, size_t span, int64_t n) {
    int64_t i;
    if (span == 8) for (i = 0; i < n; i++, d += ds, s += ss) memcpy(d, s, 8);
    else if (span == 4) for (i = 0; i < n; i++, d += ds, s += ss) memcpy(d, s, 4);
    else if (span == 16) for (i = 0; i < n; i++, d += ds, s += ss) memcpy(d, s, 16);
    else if (span == 2) for (i = 0; i < n; i++, d += ds, s += ss) memcpy(d, s, 2);
    else if (span == 1) for (i = 0; i < n; i++, d += ds, s += ss) *d = *s;
    else for (i = 0; i < n; i++, d += ds, s += ss) memcpy(d, s, span);
}

#define DT__COMBINE_LINE(T, U) /* U: the type the sum is computed in (unsigned for integers: wraps) */ \
    do {                                                                                          \
        if (op == DT_SUM)                                                                         \
            for (i = 0; i < n; i++, d += ds, s += ss) {                                           \
                T a_, b_; memcpy(&a_, d, sizeof a_); memcpy(&b_, s, sizeof b_);                   \
                a_ = (T)((U)a_ + (U)b_); memcpy(d, &a_, sizeof a_);                               \
            }                                                                                     \
        else                                                                                      \
            for (i = 0; i < n; i++, d += ds, s += ss) {                                           \
                T a_, b_; memcpy(&a_, d, sizeof a_); memcpy(&b_, s, sizeof b_);                   \
                if (op == DT_MAX ? b_ > a_ : b_ < a_) memcpy(d, &b_, sizeof b_);                  \
            }                                                                                     \
    } while (0)

/* n elements of dtype t at strides ds / ss (bytes): d = d (op) s; op < 0
   assigns (then only the element size matters). Complex: SUM per part. */
static void dt__line_op(char *d, size_t ds, const char *s, size_t ss, int64_t n, size_t es, dt_dtype t, int op) {
    int64_t i;
    if (op < 0) { dt__copy_spans(d, ds, s, ss, es, n); return; }
    if (ds == es && ss == es && (t == DT_F32 || t == DT_F64 || t == DT_C64 || t == DT_C128)) {
        /* contiguous floating spans: the backends' combining loop (vectorised) */
        dt__reduce_elems(t == DT_C64 ? DT_F32 : t == DT_C128 ? DT_F64 : t, (dt_reduce)op, d, s,
                         (size_t)n * (t == DT_C64 || t == DT_C128 ? 2 : 1));
        return;
    }
    switch (t) {
    case DT_F32: DT__COMBINE_LINE(float, float); break;
    case DT_F64: DT__COMBINE_LINE(double, double); break;
    case DT_I32: DT__COMBINE_LINE(int32_t, uint32_t); break;
    case DT_I64: DT__COMBINE_LINE(int64_t, uint64_t); break;
    case DT_U8: DT__COMBINE_LINE(uint8_t, unsigned); break;
    case DT_C64: case DT_C128: /* SUM only (checked by the callers) */
        for (i = 0; i < n; i++, d += ds, s += ss)
            dt__reduce_elems(t == DT_C64 ? DT_F32 : DT_F64, DT_SUM, d, s, 2);
        break;
    default: /* F16, BF16: in F32, rounded back */
        for (i = 0; i < n; i++, d += ds, s += ss) dt__reduce_half(t, (dt_reduce)op, d, s, 1);
        break;
    }
}

/* the tile edge, in elements, of a transposing copy: two tiles (source and
   destination lines) of about 8 KiB each stay in L1 */
static int64_t dt__tile_edge(size_t es) { return es >= 16 ? 32 : 64; }

/* the next position of an odometer over the first k dims (those of
   extent < 2 skipped), moving the two byte offsets; 0 when it wraps */
static int dt__odometer_next(int k, const int64_t *ext, const size_t *ss, const size_t *ds, int64_t *idx, size_t *so,
                             size_t *doff) {
    int j;
    for (j = k - 1; j >= 0; j--) {
        if (ext[j] < 2) continue;
        *so += ss[j]; *doff += ds[j];
        if (++idx[j] < ext[j]) return 1;
        *so -= (size_t)ext[j] * ss[j]; *doff -= (size_t)ext[j] * ds[j];
        idx[j] = 0;
    }
    return 0;
}

/* Copy the global box `p` (inside both arrays) from s to d, combining with
   op (d = d op s; op < 0: plain assignment) for dtype t:
   - the innermost dims that are one span in both arrays fold into one span
     (a memcpy, or one combining loop);
   - otherwise, when the dims that are innermost in the source (smallest
     source stride) and in the destination differ -- a transpose, column-
     major <-> row-major, permuted dims -- those two dims are tiled
     (dt__tile_edge elements square) so that both sides' cache lines are
     reused; the lines inside a tile run along the destination's dim;
   - else lines along the shared innermost dim.
   The remaining dims are an outer odometer. */
static void dt__copy_box_op(const dt__array *s, const dt__array *d, const dt__box *p, dt_dtype t, int op) {
    size_t ss[DT_MAX_DIMS] = {0}, ds[DT_MAX_DIMS] = {0}, span = s->es, es = s->es, so, doff; /* zeroed: for the static analyzer */
    int64_t idx[DT_MAX_DIMS] = {0}, ext[DT_MAX_DIMS] = {0}; /* zeroed: for the static analyzer */
    int k = s->ndim, j, a = -1, b = -1;
    if (dt__box_numel(s->ndim, p) == 0) return;
    if (s->ndim == 0) { dt__line_op(d->data, es, s->data, es, 1, es, t, op); return; }
    dt__array_strides(s, ss);
    dt__array_strides(d, ds);
    if (ss[k - 1] == es && ds[k - 1] == es) {
        span *= (size_t)p->ext[--k];
        while (k > 0 && ss[k - 1] == span && ds[k - 1] == span) span *= (size_t)p->ext[--k];
    }
    so = dt__array_offset(s, ss, p);
    doff = dt__array_offset(d, ds, p);
    if (k == 0) {
        if (op < 0) memcpy(d->data + doff, s->data + so, span);
        else dt__line_op(d->data + doff, es, s->data + so, es, (int64_t)(span / es), es, t, op);
        return;
    }
    for (j = 0; j < k; j++) { idx[j] = 0; ext[j] = p->ext[j]; }
    if (span == es) /* no dim folded: pick the innermost dims of each side among the dims longer than 1 */
        for (j = 0; j < k; j++) {
            if (ext[j] < 2) continue;
            if (a < 0 || ss[j] < ss[a]) a = j;
            if (b < 0 || ds[j] < ds[b]) b = j;
        }
    if (a >= 0 && a != b) { /* tiled: dims a and b leave the odometer */
        int64_t T = dt__tile_edge(es), na = ext[a], nb = ext[b], ia, ib, i;
        ext[a] = ext[b] = 1;
        for (;;) {
            for (ia = 0; ia < na; ia += T) {
                int64_t ea = na - ia < T ? na - ia : T;
                for (ib = 0; ib < nb; ib += T) {
                    int64_t eb = nb - ib < T ? nb - ib : T;
                    const char *sp = s->data + so + (size_t)ia * ss[a] + (size_t)ib * ss[b];
                    char *dp = d->data + doff + (size_t)ia * ds[a] + (size_t)ib * ds[b];
                    for (i = 0; i < ea; i++, sp += ss[a], dp += ds[a])
                        if (op < 0) dt__copy_spans(dp, ds[b], sp, ss[b], es, eb);
                        else dt__line_op(dp, ds[b], sp, ss[b], eb, es, t, op);
                }
            }
            if (!dt__odometer_next(k, ext, ss, ds, idx, &so, &doff)) break;
        }
        return;
    }
    /* lines along dim b (the innermost of both sides; k-1 when spans folded):
       a column face is one element per row, where a call per element would
       cost more than the bytes */
    if (b < 0) b = k - 1;
    {
        int64_t nb = ext[b];
        size_t n_el = span / es;
        ext[b] = 1;
        for (;;) {
            if (span == es) dt__line_op(d->data + doff, ds[b], s->data + so, ss[b], nb, es, t, op);
            else if (op < 0) dt__copy_spans(d->data + doff, ds[b], s->data + so, ss[b], span, nb);
            else {
                int64_t i;
                for (i = 0; i < nb; i++)
                    dt__line_op(d->data + doff + (size_t)i * ds[b], es, s->data + so + (size_t)i * ss[b], es,
                                (int64_t)n_el, es, t, op);
            }
            if (!dt__odometer_next(k, ext, ss, ds, idx, &so, &doff)) break;
        }
    }
}

/* dt__copy_box_op assigning: the element size alone matters (the dtype
   passed is a placeholder) */
static void dt__copy_box(const dt__array *s, const dt__array *d, const dt__box *p) {
    dt__copy_box_op(s, d, p, DT_U8, -1);
}

DT__MAYBE_UNUSED static void dt__pack(const dt__array *a, const dt__box *piece, void *buf) {
    dt__array b;
    b.data = (char *)buf; b.ndim = a->ndim; b.es = a->es; b.box = *piece; b.stride = NULL;
    dt__copy_box(a, &b, piece);
}

DT__MAYBE_UNUSED static void dt__unpack(const void *buf, const dt__box *piece, dt__array *a) {
    dt__array b;
    b.data = (char *)buf; b.ndim = a->ndim; b.es = a->es; b.box = *piece; b.stride = NULL;
    dt__copy_box(&b, a, piece);
}

/* ---- elements by dtype ----
   The working type a dtype computes in (F32 for F32/F16/BF16, F64, int64
   for the integers), element addresses, and strided element copies into
   and out of a working-type array, converting. */

typedef enum dt__wkind { DT__WK_F32, DT__WK_F64, DT__WK_I64 } dt__wkind;

static dt__wkind dt__work_kind(dt_dtype t) {
    switch (t) {
    case DT_F64: case DT_C128: return DT__WK_F64; /* complex: its parts' (the kernels take it first) */
    case DT_F32: case DT_F16: case DT_BF16: case DT_C64: return DT__WK_F32;
    default: return DT__WK_I64;
    }
}

static int64_t dt__i64_of(double a) { return dt__sat_i64(a, INT64_MIN, INT64_MAX); }

static const void *dt__at(const void *base, int64_t off, size_t es) {
    return (const char *)base + (ptrdiff_t)off * (ptrdiff_t)es;
}
static void *dt__at_mut(void *base, int64_t off, size_t es) { return (char *)base + (ptrdiff_t)off * (ptrdiff_t)es; }

static void dt__widen_half(dt_dtype t, const void *src, float *dst, size_t n) {
    const uint16_t *s = (const uint16_t *)src;
    size_t i;
    if (t == DT_F16) for (i = 0; i < n; i++) dst[i] = dt__h2f(s[i]);
    else for (i = 0; i < n; i++) dst[i] = dt__b2f(s[i]);
}

static void dt__narrow_half(dt_dtype t, const float *src, void *dst, size_t n) {
    uint16_t *d = (uint16_t *)dst;
    size_t i;
    if (t == DT_F16) for (i = 0; i < n; i++) d[i] = dt__f2h(src[i]);
    else for (i = 0; i < n; i++) d[i] = dt__f2b(src[i]);
}

/*    gather: n elements at element stride st (0 repeats one) into a working
   array; scatter: the reverse. src/dst point at the first element. */

/* F32/F16/BF16 -> float */
static void dt__gather_f32(dt_dtype t, const void *src, int64_t st, float *dst, size_t n) {
    size_t i;
    if (t == DT_F32) {
        const float *s = (const float *)src;
        if (st == 1) memcpy(dst, s, n * sizeof *dst);
        else for (i = 0; i < n; i++) dst[i] = s[(int64_t)i * st];
    } else if (st == 1) {
        dt__widen_half(t, src, dst, n);
    } else {
        const uint16_t *s = (const uint16_t *)src;
        if (t == DT_F16) for (i = 0; i < n; i++) dst[i] = dt__h2f(s[(int64_t)i * st]);
        else for (i = 0; i < n; i++) dst[i] = dt__b2f(s[(int64_t)i * st]);
    }
}

/* float -> F32/F16/BF16 (round to nearest even) */
static void dt__scatter_f32(dt_dtype t, const float *src, void *dst, int64_t st, size_t n) {
    size_t i;
    if (t == DT_F32) {
        float *d = (float *)dst;
        if (st == 1) memmove(d, src, n * sizeof *src);
        else for (i = 0; i < n; i++) d[(int64_t)i * st] = src[i];
    } else if (st == 1) {
        dt__narrow_half(t, src, dst, n);
    } else {
        uint16_t *d = (uint16_t *)dst;
        if (t == DT_F16) for (i = 0; i < n; i++) d[(int64_t)i * st] = dt__f2h(src[i]);
        else for (i = 0; i < n; i++) d[(int64_t)i * st] = dt__f2b(src[i]);
    }
}

/* any dtype -> double (exact except I64 beyond 2^53) */
static void dt__gather_f64(dt_dtype t, const void *src, int64_t st, double *dst, size_t n) {
    size_t i;
    switch (t) {
    case DT_F64: {
        const double *s = (const double *)src;
        if (st == 1) memcpy(dst, s, n * sizeof *dst);
        else for (i = 0; i < n; i++) dst[i] = s[(int64_t)i * st];
        break;
    }
    case DT_F32: {
        const float *s = (const float *)src;
        for (i = 0; i < n; i++) dst[i] = (double)s[(int64_t)i * st];
        break;
    }
    case DT_F16: {
        const uint16_t *s = (const uint16_t *)src;
        for (i = 0; i < n; i++) dst[i] = (double)dt__h2f(s[(int64_t)i * st]);
        break;
    }
    case DT_BF16: {
        const uint16_t *s = (const uint16_t *)src;
        for (i = 0; i < n; i++) dst[i] = (double)dt__b2f(s[(int64_t)i * st]);
        break;
    }
    case DT_I32: {
        const int32_t *s = (const int32_t *)src;
        for (i = 0; i < n; i++) dst[i] = (double)s[(int64_t)i * st];
        break;
    }
    case DT_I64: {
        const int64_t *s = (const int64_t *)src;
        for (i = 0; i < n; i++) dst[i] = (double)s[(int64_t)i * st];
        break;
    }
    default: {
        const uint8_t *s = (const uint8_t *)src;
        for (i = 0; i < n; i++) dst[i] = (double)s[(int64_t)i * st];
        break;
    }
    }
}

/* double -> any dtype: floats round to nearest even, integers truncate and
   saturate (NaN -> 0) */
static void dt__scatter_f64(dt_dtype t, const double *src, void *dst, int64_t st, size_t n) {
    size_t i;
    switch (t) {
    case DT_F64: {
        double *d = (double *)dst;
        if (st == 1) memmove(d, src, n * sizeof *src);
        else for (i = 0; i < n; i++) d[(int64_t)i * st] = src[i];
        break;
    }
    case DT_F32: {
        float *d = (float *)dst;
        for (i = 0; i < n; i++) d[(int64_t)i * st] = (float)src[i];
        break;
    }
    case DT_F16: {
        uint16_t *d = (uint16_t *)dst;
        for (i = 0; i < n; i++) d[(int64_t)i * st] = dt__f2h(dt__f64_to_f32_odd(src[i]));
        break;
    }
    case DT_BF16: {
        uint16_t *d = (uint16_t *)dst;
        for (i = 0; i < n; i++) d[(int64_t)i * st] = dt__f2b(dt__f64_to_f32_odd(src[i]));
        break;
    }
    case DT_I32: {
        int32_t *d = (int32_t *)dst;
        for (i = 0; i < n; i++) d[(int64_t)i * st] = (int32_t)dt__sat_i64(src[i], INT32_MIN, INT32_MAX);
        break;
    }
    case DT_I64: {
        int64_t *d = (int64_t *)dst;
        for (i = 0; i < n; i++) d[(int64_t)i * st] = dt__sat_i64(src[i], INT64_MIN, INT64_MAX);
        break;
    }
    default: {
        uint8_t *d = (uint8_t *)dst;
        for (i = 0; i < n; i++) d[(int64_t)i * st] = (uint8_t)dt__sat_i64(src[i], 0, UINT8_MAX);
        break;
    }
    }
}

/* I32/I64/U8 -> int64 (float dtypes, never passed by the ops layer, saturate) */
static void dt__gather_i64(dt_dtype t, const void *src, int64_t st, int64_t *dst, size_t n) {
    size_t i;
    switch (t) {
    case DT_I32: {
        const int32_t *s = (const int32_t *)src;
        for (i = 0; i < n; i++) dst[i] = s[(int64_t)i * st];
        break;
    }
    case DT_I64: {
        const int64_t *s = (const int64_t *)src;
        if (st == 1) memcpy(dst, s, n * sizeof *dst);
        else for (i = 0; i < n; i++) dst[i] = s[(int64_t)i * st];
        break;
    }
    case DT_U8: {
        const uint8_t *s = (const uint8_t *)src;
        for (i = 0; i < n; i++) dst[i] = s[(int64_t)i * st];
        break;
    }
    default:
        for (i = 0; i < n; i++) {
            double v;
            dt__gather_f64(t, dt__at(src, (int64_t)i * st, dt_dtype_size(t)), 1, &v, 1);
            dst[i] = dt__i64_of(v);
        }
        break;
    }
}

/* int64 -> I32/I64/U8 keeping the low bits (wrap-around, as C conversion) */
static void dt__scatter_i64(dt_dtype t, const int64_t *src, void *dst, int64_t st, size_t n) {
    size_t i;
    switch (t) {
    case DT_I32: {
        int32_t *d = (int32_t *)dst;
        for (i = 0; i < n; i++) d[(int64_t)i * st] = (int32_t)src[i];
        break;
    }
    case DT_I64: {
        int64_t *d = (int64_t *)dst;
        if (st == 1) memmove(d, src, n * sizeof *src);
        else for (i = 0; i < n; i++) d[(int64_t)i * st] = src[i];
        break;
    }
    case DT_U8: {
        uint8_t *d = (uint8_t *)dst;
        for (i = 0; i < n; i++) d[(int64_t)i * st] = (uint8_t)src[i];
        break;
    }
    default:
        for (i = 0; i < n; i++) {
            double v = (double)src[i];
            dt__scatter_f64(t, &v, dt__at_mut(dst, (int64_t)i * st, dt_dtype_size(t)), 1, 1);
        }
        break;
    }
}

/* >>kernels ---------------------------------------------------------------
   Local compute on one rank's row-major buffers, behind a table per device
   (dtensor_cuda.h registers its own). The ops layer has already checked
   everything (shapes, dtypes, which ops a dtype allows); kernels do not
   fail except for memory (the F32 copies of F16/BF16 gemm). Working precision: F32 for
   F32/F16/BF16, F64 for F64, int64 for I32/I64/U8. Loops are written so
   the compiler vectorises them (blocks of up to DT__BLOCK elements
   converted to the working type, a plain loop over the block, converted
   back). Empty inputs (n == 0, any extent 0) are fine. */

#define DT__BLOCK 256

typedef enum dt__rkind { DT__RK_UNIFORM, DT__RK_NORMAL, DT__RK_BERNOULLI, DT__RK_RANDINT, DT__RK_DROPOUT } dt__rkind;

/* one random op on one rank's box (>>rng fills it; the mapping is documented at the public API) */
typedef struct dt__rng_op {
    uint64_t seed, offset; /* the mesh's stream state before the op              */
    dt__rkind kind;
    dt_dtype t;         /* of the values drawn (dropout: of x)                 */
    int w;              /* words per element                                     */
    double a, b;        /* uniform lo, hi; normal mean, std; bernoulli p; dropout 1-p */
    int64_t lo;         /* randint                                               */
    uint64_t range;     /* randint hi - lo (0: 2^64 never happens; lo < hi)      */
    uint64_t thr;       /* bernoulli/dropout: keep when the u24/u53 integer < thr */
    const void *x;      /* dropout input                                          */
    void *mask;         /* dropout keep mask (U8) or NULL                          */
} dt__rng_op;

typedef struct dt__kernels {
    /* y[i] = f(x[i]; a), n elements; y may equal x */
    void (*unary)(dt__uop op, dt_dtype t, const void *x, void *y, size_t n, double a);
    /* y[i] = (to)x[i]; float -> int truncates toward zero, saturating, NaN -> 0 */
    void (*cast)(dt_dtype from, const void *x, dt_dtype to, void *y, size_t n);
    /* out (contiguous, row-major, `shape`) = op(a, b); sa/sb: element strides of a and b
       per dim (0 where that operand is broadcast). out may equal a or b when that
       operand's strides are the contiguous ones. */
    void (*binary)(dt__bop op, dt_dtype t, int ndim, const int64_t *shape, const void *a, const int64_t *sa,
                   const void *b, const int64_t *sb, void *out, double alpha);
    /* x: contiguous `shape`; reduce over the dims whose bit is set in `mask`; out:
       contiguous, shape with those dims 1. SUM/SUMSQ accumulate in double (floats) or
       int64 (ints) and write sum*scale (scale is 1.0 except for mean). MAX/MIN of an
       empty set: -inf/+inf (floats), the type's min/max (ints), so that a rank with an
       empty shard is the identity of the Partial combine. ARGMAX: out is I64, the
       row-major index within the reduced dims of the first maximum (NaN counts as
       maximum); empty: 0. out_t == t except ARGMAX (DT_I64). */
    void (*reduce)(dt__rop op, dt_dtype t, int ndim, const int64_t *shape, unsigned mask, const void *x,
                   void *out, double scale);
    /* x viewed as [outer, n, inner]; softmax (or log_softmax) over the middle dim,
       max-subtracted; y may equal x */
    void (*softmax)(dt_dtype t, const void *x, void *y, size_t outer, size_t n, size_t inner, int log);
    /* rows of n: (x - mean)/sqrt(var + eps) * w + b (layer norm, biased variance), or
       rms: x / sqrt(mean(x^2) + eps) * w; w, b may be NULL (1 and 0); y may equal x */
    void (*norm)(dt_dtype t, const void *x, const void *w, const void *b, void *y, size_t rows, size_t n,
                 double eps, int rms);
    /* C[m,n] = alpha * A[m,k] B[k,n] + beta * C, element strides (row stride, col stride)
       for each matrix, so transposed views cost no copy. beta == 0: C is not read
       (may hold NaN). F32/F64: the BLAS DTENSOR_BLAS picks (BLIS's general strides; a
       CBLAS/Fortran BLAS's ld + transposes, other strides packed), or loops;
       F16/BF16: widened to F32 buffers (DT_ERR_NOMEM possible);
       ints: loops in int64 (alpha, beta integral). */
    dt_status (*gemm)(dt_dtype t, int64_t m, int64_t n, int64_t k, double alpha, const void *a, int64_t rsa,
                      int64_t csa, const void *b, int64_t rsb, int64_t csb, double beta, void *c, int64_t rsc,
                      int64_t csc);
    /* y = x permuted: y has ndim dims, y.shape[j] = xshape[perm[j]]; es-byte elements */
    void (*permute)(size_t es, int ndim, const int64_t *xshape, const int *perm, const void *x, void *y);
    /* out[i, :] = table[idx[i] - row0, :] when row0 <= idx[i] < row0 + nrows, else zeros;
       table is [nrows, dim] contiguous; idx is I32 or I64 (idx_t), nidx of them */
    void (*embedding)(dt_dtype t, const void *table, int64_t row0, int64_t nrows, int64_t dim, dt_dtype idx_t,
                      const void *idx, size_t nidx, void *out);
    /* cross-entropy pieces over local logits [rows, ncls] holding the global classes
       [cls0, cls0 + ncls): for each row r, with the row's global max M[r] given:
       sumexp[r] = sum_c exp(x[r,c] - M[r]); tlogit[r] = x[r, target[r] - cls0] if the
       target class is local, else 0. target is I32 or I64. rowmax[r] = max_c x[r,c]
       (-inf if ncls == 0) is the first pass (M = NULL: only rowmax is computed). */
    void (*xent)(dt_dtype t, const void *x, size_t rows, size_t ncls, int64_t cls0, dt_dtype target_t,
                 const void *target, const double *M, double *rowmax, double *sumexp, double *tlogit);
    /* the random op's values for the local box (lo, ext per dim) of a tensor of global
       shape gs, into y (row-major over the box); dropout also reads op->x, writes op->mask */
    void (*rng)(const dt__rng_op *op, int ndim, const int64_t *gs, const int64_t *lo, const int64_t *ext, void *y);
    /* integer Partial(AVG) without overflow (dt__avg_split, dt__avg_join): x (I32/I64/U8, n elements)
       split as q*k + r (C division) into I64 q[n], r[n]; out[i] = the mean from the summed parts,
       sum(q) + sum(r)/k truncated toward zero (dt__avg_mean) */
    void (*avg_split)(dt_dtype t, const void *x, size_t n, int k, int64_t *q, int64_t *r);
    void (*avg_join)(dt_dtype t, const int64_t *q, const int64_t *r, size_t n, int k, void *out);
} dt__kernels;


/* ---- implementation ----
   Every kernel converts blocks of DT__BLOCK elements to its working type in
   stack arrays, runs a plain loop the compiler can vectorise, and converts
   back; F32/F64 data is used in place where the layout allows. The dtype
   and op switches sit outside the element loops. Integer results are
   computed in int64 with wrapping (unsigned) arithmetic, so overflow is never
   undefined, and stored by C conversion: I32 and U8 keep the low bits (U8 is
   arithmetic mod 256). */



#define DT__LANES 8     /* independent accumulators: vectorisable, and less rounding error */
#define DT__GEMM_MB 64  /* loop-GEMM block: rows of C per packed panel of B */
#define DT__GEMM_KB 128 /* depth of a packed panel of B */
#define DT__GEMM_NB DT__BLOCK
#define DT__GEMM_SMALL 4096 /* m*n*k at or below which GEMM runs the loops, not BLIS */
#define DT__GEMM_STACK 2048 /* loop-GEMM work space (elements) taken from the stack, not the heap */
#define DT__TILE 16     /* permute: square tiles keep both sides of a transpose in cache (16 measured best) */


/* ---- small helpers ---- */

static int dt__is_int(dt_dtype t) { return dt__work_kind(t) == DT__WK_I64; }

static size_t dt__blk(size_t left) { return left < DT__BLOCK ? left : DT__BLOCK; }

static void dt__int_range(dt_dtype t, int64_t *lo, int64_t *hi) {
    switch (t) {
    case DT_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case DT_U8: *lo = 0; *hi = UINT8_MAX; break;
    default: *lo = INT64_MIN; *hi = INT64_MAX; break;
    }
}

static int64_t dt__index_at(dt_dtype idx_t, const void *idx, size_t i) {
    return idx_t == DT_I32 ? (int64_t)((const int32_t *)idx)[i] : ((const int64_t *)idx)[i];
}

/* ---- sums over lanes (double) ---- */

static double dt__lanes_total(const double *acc) {
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

#define DT__DEFINE_LANE_SUMS(SFX, W)                                               \
    static double dt__sum_##SFX(const W *v, size_t n) {                            \
        double acc[DT__LANES] = {0};                                               \
        size_t i = 0, j;                                                           \
        for (; i + DT__LANES <= n; i += DT__LANES)                                 \
            for (j = 0; j < DT__LANES; j++) acc[j] += (double)v[i + j];            \
        for (; i < n; i++) acc[0] += (double)v[i];                                 \
        return dt__lanes_total(acc);                                               \
    }                                                                              \
    /* sum of (v - mu)^2 */                                                        \
    static double dt__sqdev_##SFX(const W *v, size_t n, double mu) {               \
        double acc[DT__LANES] = {0};                                               \
        size_t i = 0, j;                                                           \
        for (; i + DT__LANES <= n; i += DT__LANES)                                 \
            for (j = 0; j < DT__LANES; j++) {                                      \
                double d = (double)v[i + j] - mu;                                  \
                acc[j] += d * d;                                                   \
            }                                                                      \
        for (; i < n; i++) acc[0] += ((double)v[i] - mu) * ((double)v[i] - mu);    \
        return dt__lanes_total(acc);                                               \
    }                                                                              \
    DT__DEFS_END

DT__DEFINE_LANE_SUMS(f32, float);
DT__DEFINE_LANE_SUMS(f64, double);

/* (DT__FMAX, DT__FMIN, DT__IMAX, DT__IMIN, DT__IADD & co.: >>math) */

/* NaN-propagating max (or min) of n values and `init`: independent lanes
   whose compare-and-select the compiler vectorises, plus lanes that catch
   a NaN (a plain max would drop it) */
#define DT__DEFINE_MAX_LANES(SFX, W, L)                                                      \
    static W dt__maxv_##SFX(const W *v, size_t n, W init, int want_min) {                    \
        W acc[L], nan[L];                                                                    \
        size_t i = 0, j;                                                                     \
        for (j = 0; j < L; j++) {                                                            \
            acc[j] = init;                                                                   \
            nan[j] = (W)0;                                                                   \
        }                                                                                    \
        if (want_min) {                                                                      \
            for (; i + L <= n; i += L)                                                       \
                for (j = 0; j < L; j++) {                                                    \
                    W x = v[i + j];                                                          \
                    acc[j] = x < acc[j] ? x : acc[j];                                        \
                    nan[j] = x != x ? x : nan[j];                                            \
                }                                                                            \
            for (; i < n; i++) acc[0] = DT__FMIN(v[i], acc[0]);                              \
            for (j = 1; j < L; j++) acc[0] = DT__FMIN(acc[j], acc[0]);                       \
        } else {                                                                             \
            for (; i + L <= n; i += L)                                                       \
                for (j = 0; j < L; j++) {                                                    \
                    W x = v[i + j];                                                          \
                    acc[j] = x > acc[j] ? x : acc[j];                                        \
                    nan[j] = x != x ? x : nan[j];                                            \
                }                                                                            \
            for (; i < n; i++) acc[0] = DT__FMAX(v[i], acc[0]);                              \
            for (j = 1; j < L; j++) acc[0] = DT__FMAX(acc[j], acc[0]);                       \
        }                                                                                    \
        for (j = 0; j < L; j++)                                                              \
            if (nan[j] != nan[j]) return nan[j];                                             \
        return acc[0];                                                                       \
    }                                                                                        \
    DT__DEFS_END

DT__DEFINE_MAX_LANES(f32, float, 16);
DT__DEFINE_MAX_LANES(f64, double, 8);

/* Contiguous block views for the row kernels (softmax, norm, xent): the data
   itself when its dtype is the working type, else a widened copy in buf;
   results go to dt__target_* and are narrowed by dt__commit_*. */
static const float *dt__view_f32(dt_dtype t, const void *base, size_t off, size_t n, float *buf) {
    if (t == DT_F32) return (const float *)base + off;
    dt__widen_half(t, (const uint16_t *)base + off, buf, n);
    return buf;
}
static float *dt__target_f32(dt_dtype t, void *base, size_t off, float *buf) {
    return t == DT_F32 ? (float *)base + off : buf;
}
static void dt__commit_f32(dt_dtype t, const float *buf, void *base, size_t off, size_t n) {
    if (t != DT_F32) dt__narrow_half(t, buf, (uint16_t *)base + off, n);
}
static const double *dt__view_f64(dt_dtype t, const void *base, size_t off, size_t n, double *buf) {
    (void)t; (void)n; (void)buf;
    return (const double *)base + off;
}
static double *dt__target_f64(dt_dtype t, void *base, size_t off, double *buf) {
    (void)t; (void)buf;
    return (double *)base + off;
}
static void dt__commit_f64(dt_dtype t, const double *buf, void *base, size_t off, size_t n) {
    (void)t; (void)buf; (void)base; (void)off; (void)n;
}

/* NaN-propagating max of n elements at element off: one pass over the data
   itself when it is in the working type (the lanes' setup is paid once),
   else block by block */
#define DT__DEFINE_ROWMAX(SFX, W)                                                              \
    static W dt__rowmax_##SFX(dt_dtype t, const void *x, size_t off, size_t n) {               \
        W buf[DT__BLOCK], m = (W)-HUGE_VAL;                                                    \
        size_t i, len;                                                                         \
        if (t == DT_F32 || t == DT_F64) return dt__maxv_##SFX((const W *)x + off, n, m, 0);    \
        for (i = 0; i < n; i += len) {                                                         \
            len = dt__blk(n - i);                                                              \
            m = dt__maxv_##SFX(dt__view_##SFX(t, x, off + i, len, buf), len, m, 0);            \
        }                                                                                      \
        return m;                                                                              \
    }                                                                                          \
    DT__DEFS_END

DT__DEFINE_ROWMAX(f32, float);
DT__DEFINE_ROWMAX(f64, double);

/* ---- unary ---- */

/* ---- the loops over the ops' element functions (>>math) ---- */

/* one loop per op, each its own function so that it vectorises with the
   element function inlined into it */
#define DT__SFXNAME(base) DT__SFXNAME_(base, DT__SFX)
#define DT__SFXNAME_(base, sfx) DT__SFXNAME__(base, sfx)
#define DT__SFXNAME__(base, sfx) base##_##sfx
#define DT__ULOOP(NAME, name, wrap, fl, pm, fmath, imath)                                               \
    static void DT__ENAME(dt__, uloop, name, DT__SFX)(const DT__W *x, DT__W *y, size_t n, DT__W a) { \
        size_t i;                                                                                      \
        if (DT__U_##NAME != DT__U_COPY)                                                                \
            for (i = 0; i < n; i++) y[i] = DT__ENAME(dt__, u, name, DT__SFX)(x[i], a);                \
        else if (n && y != x) /* data movement: memmove, whatever the overlap */                      \
            memmove(y, x, n * sizeof *x);                                                              \
    }
#define DT__ULOOP_CASE(NAME, name, wrap, fl, pm, fmath, imath) \
    case DT__U_##NAME: DT__ENAME(dt__, uloop, name, DT__SFX)(x, y, n, a); break;
/* o[i] = op(a[i], b[i]); an operand flagged scalar is its element 0 for all
   i. The scalar cases are separate loops so that each one vectorises: one
   switch per case, its operands A and B (av, bv: the scalars) */
#define DT__BLOOP(name, A, B) for (i = 0; i < n; i++) o[i] = DT__ENAME(dt__, b, name, DT__SFX)(A, B, alpha)
#define DT__BCASE_SS(NAME, name, k, fl, pr, fmath, imath) case DT__B_##k: DT__BLOOP(name, av, bv); break;
#define DT__BCASE_VS(NAME, name, k, fl, pr, fmath, imath) case DT__B_##k: DT__BLOOP(name, a[i], bv); break;
#define DT__BCASE_SV(NAME, name, k, fl, pr, fmath, imath) case DT__B_##k: DT__BLOOP(name, av, b[i]); break;
#define DT__BCASE_VV(NAME, name, k, fl, pr, fmath, imath) case DT__B_##k: DT__BLOOP(name, a[i], b[i]); break;
/* the kernels of working type DT__W: dt__unary_<sfx> and dt__binary_row_<sfx> */
#define DT__DEFINE_POINTWISE()                                                                                  \
    DT__UNARY_OPS(DT__ULOOP)                                                                                    \
    static void DT__SFXNAME(dt__unary)(dt__uop op, const DT__W *x, DT__W *y, size_t n, DT__W a) {               \
        switch (op) {                                                                                          \
            DT__UNARY_OPS(DT__ULOOP_CASE)                                                                      \
        default: break;                                                                                        \
        }                                                                                                      \
    }                                                                                                          \
    static void DT__SFXNAME(dt__binary_row)(dt__bop op, const DT__W *a, int a_scalar, const DT__W *b,          \
                                            int b_scalar, DT__W *o, size_t n, DT__W alpha) {                   \
        size_t i;                                                                                              \
        if (a_scalar && b_scalar) {                                                                            \
            DT__W av = a[0], bv = b[0];                                                                        \
            switch (op) { DT__BINARY_OPS(DT__BCASE_SS) default: break; }                                       \
        } else if (b_scalar) {                                                                                 \
            DT__W bv = b[0];                                                                                   \
            switch (op) { DT__BINARY_OPS(DT__BCASE_VS) default: break; }                                       \
        } else if (a_scalar) {                                                                                 \
            DT__W av = a[0];                                                                                   \
            switch (op) { DT__BINARY_OPS(DT__BCASE_SV) default: break; }                                       \
        } else {                                                                                               \
            switch (op) { DT__BINARY_OPS(DT__BCASE_VV) default: break; }                                       \
        }                                                                                                      \
    }                                                                                                          \
    DT__DEFS_END

#define DT__W float
#define DT__SFX f32
DT__DEFINE_POINTWISE();
#undef DT__W
#undef DT__SFX

#define DT__W double
#define DT__SFX f64
DT__DEFINE_POINTWISE();
#undef DT__W
#undef DT__SFX

#define DT__W int64_t
#define DT__SFX i64
DT__DEFINE_POINTWISE();
#undef DT__W
#undef DT__SFX
#undef DT__DEFINE_POINTWISE
#undef DT__ULOOP
#undef DT__ULOOP_CASE
#undef DT__BLOOP
#undef DT__BCASE_SS
#undef DT__BCASE_VS
#undef DT__BCASE_SV
#undef DT__BCASE_VV

/* ---- complex ----
   C64/C128 kernels, element by element on dt__cx pairs (>>math). The ops
   layer lets through only the ops defined on complex (dt__complex_allowed);
   an op that treats the two parts alike (neg, scale, copy, add, sub, axpy,
   sum) runs as the real kernel on the parts where that is simpler. */


/* the unary ops complex takes: neg, scale, copy act on the parts alike; the
   scalar of fill and shift is the real number a + 0i (torch's) */
static void dt__cx_unary(dt__uop op, dt_dtype t, const void *x, void *y, size_t n, double a) {
    size_t i;
    if (op == DT__U_NEG || op == DT__U_SCALE || op == DT__U_COPY) {
        if (t == DT_C64) dt__unary_f32(op, (const float *)x, (float *)y, 2 * n, (float)a);
        else dt__unary_f64(op, (const double *)x, (double *)y, 2 * n, a);
        return;
    }
    for (i = 0; i < n; i++) {
        dt__cx z = op == DT__U_FILL ? dt__cx_make(a, 0.0) : dt__cx_load(t, x, (int64_t)i);
        if (op == DT__U_SHIFT) z.re += a;
        else if (op == DT__U_EXP) z = dt__cx_exp(z);
        dt__cx_store(t, y, (int64_t)i, z);
    }
}

/* real <-> complex casts: a real x becomes x + 0i; complex -> real keeps the
   real part (the ops layer refuses that direction; the kernel defines it);
   C64 <-> C128 converts both parts */
static void dt__cx_cast(dt_dtype from, const void *x, dt_dtype to, void *y, size_t n) {
    size_t i, len, fs = dt_dtype_size(from), ts = dt_dtype_size(to);
    for (i = 0; i < n; i += len) {
        double buf[DT__BLOCK];
        size_t j;
        len = dt__blk(n - i);
        if (!dt__is_complex(from)) {
            dt__gather_f64(from, dt__at(x, (int64_t)i, fs), 1, buf, len);
            for (j = 0; j < len; j++) dt__cx_store(to, y, (int64_t)(i + j), dt__cx_make(buf[j], 0.0));
        } else if (dt__is_complex(to)) {
            for (j = 0; j < len; j++) dt__cx_store(to, y, (int64_t)(i + j), dt__cx_load(from, x, (int64_t)(i + j)));
        } else {
            for (j = 0; j < len; j++) buf[j] = dt__cx_load(from, x, (int64_t)(i + j)).re;
            dt__scatter_f64(to, buf, dt__at_mut(y, (int64_t)i, ts), 1, len);
        }
    }
}

/* (DT__HD: dtensor_cuda.h's complex binary kernel calls it too) */
DT__HD dt__cx dt__cx_binary_elem(dt__bop op, dt__cx p, dt__cx q, double alpha) {
    switch (op) {
    case DT__B_ADD: return dt__cx_make(p.re + q.re, p.im + q.im);
    case DT__B_SUB: return dt__cx_make(p.re - q.re, p.im - q.im);
    case DT__B_MUL: return dt__cx_mul(p, q);
    case DT__B_DIV: return dt__cx_div(p, q);
    case DT__B_AXPY: return dt__cx_make(DT__DMUL(alpha, p.re) + q.re, DT__DMUL(alpha, p.im) + q.im);
    default: return dt__cx_make(NAN, NAN); /* never: refused by the ops layer */
    }
}

/* out (contiguous) = op(a, b), a and b at any element strides (0: broadcast),
   in one row-major walk; each element is read before it is written, so out
   may be a or b where the binary kernel allows it */
static void dt__cx_binary(dt__bop op, dt_dtype t, int ndim, const int64_t *shape, const void *a, const int64_t *sa,
                          const void *b, const int64_t *sb, void *out, double alpha) {
    int64_t idx[DT_MAX_DIMS], oa = 0, ob = 0, o, total = 1;
    int d;
    for (d = 0; d < ndim; d++) {
        total *= shape[d];
        idx[d] = 0;
    }
    for (o = 0; o < total; o++) {
        dt__cx_store(t, out, o, dt__cx_binary_elem(op, dt__cx_load(t, a, oa), dt__cx_load(t, b, ob), alpha));
        for (d = ndim - 1; d >= 0; d--) {
            oa += sa[d];
            ob += sb[d];
            if (++idx[d] < shape[d]) break;
            oa -= sa[d] * shape[d];
            ob -= sb[d] * shape[d];
            idx[d] = 0;
        }
    }
}

/* A complex reduction (sum: both parts alike) as a real one over the parts:
   the tensor is its part dtype with a trailing dim of 2, kept. Runs of
   adjacent dims alike (all reduced or all kept) merge first, so the extra
   dim fits unless DT_MAX_DIMS dims alternate; then the leading dim (kept:
   the last is reduced) is walked one slice at a time. geo[0..nd): the real
   shape; returns nd, and *rmask the mask over it. */
static int dt__cx_reduce_geom(int ndim, const int64_t *shape, unsigned mask, int64_t *geo, unsigned *rmask) {
    int d, nd = 0, prev = -1;
    *rmask = 0;
    for (d = 0; d < ndim; d++) {
        int red = (int)((mask >> d) & 1u);
        if (shape[d] == 1) continue;
        if (nd > 0 && red == prev) geo[nd - 1] *= shape[d];
        else {
            if (red) *rmask |= 1u << nd;
            geo[nd++] = shape[d];
        }
        prev = red;
    }
    return nd;
}

static void dt__k_unary(dt__uop op, dt_dtype t, const void *x, void *y, size_t n, double a) {
    size_t i, len;
    if (dt__is_complex(t)) { dt__cx_unary(op, t, x, y, n, a); return; }
    switch (dt__work_kind(t)) {
    case DT__WK_F64:
        dt__unary_f64(op, (const double *)x, (double *)y, n, a);
        break;
    case DT__WK_F32:
        if (t == DT_F32) {
            dt__unary_f32(op, (const float *)x, (float *)y, n, (float)a);
            break;
        }
        for (i = 0; i < n; i += len) {
            float buf[DT__BLOCK];
            len = dt__blk(n - i);
            dt__widen_half(t, (const uint16_t *)x + i, buf, len);
            dt__unary_f32(op, buf, buf, len, (float)a);
            dt__narrow_half(t, buf, (uint16_t *)y + i, len);
        }
        break;
    case DT__WK_I64: {
        size_t es = dt_dtype_size(t);
        int64_t ia = dt__i64_of(a);
        for (i = 0; i < n; i += len) {
            int64_t buf[DT__BLOCK];
            len = dt__blk(n - i);
            dt__gather_i64(t, dt__at(x, (int64_t)i, es), 1, buf, len);
            dt__unary_i64(op, buf, buf, len, ia);
            dt__scatter_i64(t, buf, dt__at_mut(y, (int64_t)i, es), 1, len);
        }
        break;
    }
    }
}

/* ---- cast ---- */

/* int64 -> a float dtype, rounded once to nearest even */
static void dt__scatter_i64_as_float(dt_dtype t, const int64_t *src, void *dst, size_t n) {
    size_t i;
    switch (t) {
    case DT_F64: for (i = 0; i < n; i++) ((double *)dst)[i] = (double)src[i]; break;
    case DT_F32: for (i = 0; i < n; i++) ((float *)dst)[i] = (float)dt__i64_to_f64_odd(src[i]); break;
    case DT_F16:
        for (i = 0; i < n; i++) ((uint16_t *)dst)[i] = dt__f2h(dt__f64_to_f32_odd(dt__i64_to_f64_odd(src[i])));
        break;
    default:
        for (i = 0; i < n; i++) ((uint16_t *)dst)[i] = dt__f2b(dt__f64_to_f32_odd(dt__i64_to_f64_odd(src[i])));
        break;
    }
}

/* Integer -> integer wraps (C conversion, as torch); float <-> float goes
   through float when both are F32-kind (exact widening, one rounding), else
   through double with round-to-odd before a half narrowing; integer -> float
   rounds once. */
static void dt__k_cast(dt_dtype from, const void *x, dt_dtype to, void *y, size_t n) {
    size_t i, len, fs = dt_dtype_size(from), ts = dt_dtype_size(to);
    if (from == to) {
        if (x != y && n) memmove(y, x, n * fs);
        return;
    }
    if (dt__is_complex(from) || dt__is_complex(to)) {
        dt__cx_cast(from, x, to, y, n);
        return;
    }
    if (dt__is_int(from) && dt__is_int(to)) {
        for (i = 0; i < n; i += len) {
            int64_t buf[DT__BLOCK];
            len = dt__blk(n - i);
            dt__gather_i64(from, dt__at(x, (int64_t)i, fs), 1, buf, len);
            dt__scatter_i64(to, buf, dt__at_mut(y, (int64_t)i, ts), 1, len);
        }
    } else if (dt__is_int(from)) {
        for (i = 0; i < n; i += len) {
            int64_t buf[DT__BLOCK];
            len = dt__blk(n - i);
            dt__gather_i64(from, dt__at(x, (int64_t)i, fs), 1, buf, len);
            dt__scatter_i64_as_float(to, buf, dt__at_mut(y, (int64_t)i, ts), len);
        }
    } else if (dt__work_kind(from) == DT__WK_F32 && dt__work_kind(to) == DT__WK_F32) {
        for (i = 0; i < n; i += len) {
            float buf[DT__BLOCK];
            len = dt__blk(n - i);
            dt__gather_f32(from, dt__at(x, (int64_t)i, fs), 1, buf, len);
            dt__scatter_f32(to, buf, dt__at_mut(y, (int64_t)i, ts), 1, len);
        }
    } else {
        for (i = 0; i < n; i += len) {
            double buf[DT__BLOCK];
            len = dt__blk(n - i);
            dt__gather_f64(from, dt__at(x, (int64_t)i, fs), 1, buf, len);
            dt__scatter_f64(to, buf, dt__at_mut(y, (int64_t)i, ts), 1, len);
        }
    }
}

/* ---- binary ---- */


/* one innermost row of n outputs; a, b, o point at the row's first elements */
static void dt__binary_row(dt__bop op, dt_dtype t, const void *a, int64_t sa, const void *b, int64_t sb, void *o,
                           size_t n, double alpha) {
    size_t es = dt_dtype_size(t), i, len;
    int as = sa == 0, bs = sb == 0;
    switch (dt__work_kind(t)) {
    case DT__WK_F32:
        if (t == DT_F32 && (as || sa == 1) && (bs || sb == 1)) {
            dt__binary_row_f32(op, (const float *)a, as, (const float *)b, bs, (float *)o, n, (float)alpha);
            return;
        }
        for (i = 0; i < n; i += len) {
            float ba[DT__BLOCK], bb[DT__BLOCK], bo[DT__BLOCK];
            float *dst = t == DT_F32 ? (float *)o + i : bo;
            len = dt__blk(n - i);
            dt__gather_f32(t, dt__at(a, (int64_t)i * sa, es), sa, ba, as ? 1 : len);
            dt__gather_f32(t, dt__at(b, (int64_t)i * sb, es), sb, bb, bs ? 1 : len);
            dt__binary_row_f32(op, ba, as, bb, bs, dst, len, (float)alpha);
            if (t != DT_F32) dt__narrow_half(t, bo, (uint16_t *)o + i, len);
        }
        return;
    case DT__WK_F64:
        if ((as || sa == 1) && (bs || sb == 1)) {
            dt__binary_row_f64(op, (const double *)a, as, (const double *)b, bs, (double *)o, n, alpha);
            return;
        }
        for (i = 0; i < n; i += len) {
            double ba[DT__BLOCK], bb[DT__BLOCK];
            len = dt__blk(n - i);
            dt__gather_f64(t, dt__at(a, (int64_t)i * sa, es), sa, ba, as ? 1 : len);
            dt__gather_f64(t, dt__at(b, (int64_t)i * sb, es), sb, bb, bs ? 1 : len);
            dt__binary_row_f64(op, ba, as, bb, bs, (double *)o + i, len, alpha);
        }
        return;
    case DT__WK_I64: {
        int64_t ialpha = dt__i64_of(alpha);
        for (i = 0; i < n; i += len) {
            int64_t ba[DT__BLOCK], bb[DT__BLOCK], bo[DT__BLOCK];
            len = dt__blk(n - i);
            dt__gather_i64(t, dt__at(a, (int64_t)i * sa, es), sa, ba, as ? 1 : len);
            dt__gather_i64(t, dt__at(b, (int64_t)i * sb, es), sb, bb, bs ? 1 : len);
            dt__binary_row_i64(op, ba, as, bb, bs, bo, len, ialpha);
            dt__scatter_i64(t, bo, dt__at_mut(o, (int64_t)i, es), 1, len);
        }
        return;
    }
    }
}

/* the iteration space of a binary op after dropping extent-1 dims and merging
   neighbours both operands step through as one */
typedef struct dt__bgeom {
    int nd;
    int64_t ext[DT_MAX_DIMS], sa[DT_MAX_DIMS], sb[DT_MAX_DIMS];
} dt__bgeom;

/* 0 when the output is empty */
static int dt__bgeom_make(int ndim, const int64_t *shape, const int64_t *sa, const int64_t *sb, dt__bgeom *g) {
    int d;
    g->nd = 0;
    for (d = 0; d < ndim; d++) {
        int64_t e = shape[d];
        if (e == 0) return 0;
        if (e == 1) continue;
        if (g->nd > 0 && g->sa[g->nd - 1] == sa[d] * e && g->sb[g->nd - 1] == sb[d] * e) {
            g->ext[g->nd - 1] *= e;
        } else {
            g->ext[g->nd] = e;
            g->nd++;
        }
        g->sa[g->nd - 1] = sa[d];
        g->sb[g->nd - 1] = sb[d];
    }
    if (g->nd == 0) { /* a single element */
        g->nd = 1;
        g->ext[0] = 1;
        g->sa[0] = g->sb[0] = 0;
    }
    return 1;
}

/* An operand read across its inner rows (a transposed view) touches a new
   cache line per element; tiles of DT__TILE rows x DT__BLOCK columns reuse
   each line for DT__TILE rows before it is evicted. */
static void dt__binary_tiled(dt__bop op, dt_dtype t, const dt__bgeom *g, const void *a, const void *b, void *out,
                             double alpha) {
    int64_t idx[DT_MAX_DIMS], offa = 0, offb = 0, outer = 1, o, r0, r, c0, len;
    int64_t R = g->ext[g->nd - 2], C = g->ext[g->nd - 1];
    int64_t sar = g->sa[g->nd - 2], sac = g->sa[g->nd - 1], sbr = g->sb[g->nd - 2], sbc = g->sb[g->nd - 1];
    size_t es = dt_dtype_size(t);
    int d;
    for (d = 0; d < g->nd - 2; d++) {
        outer *= g->ext[d];
        idx[d] = 0;
    }
    for (o = 0; o < outer; o++) {
        for (r0 = 0; r0 < R; r0 += DT__TILE)
            for (c0 = 0; c0 < C; c0 += len) {
                len = C - c0 < DT__BLOCK ? C - c0 : DT__BLOCK;
                for (r = r0; r < R && r < r0 + DT__TILE; r++)
                    dt__binary_row(op, t, dt__at(a, offa + r * sar + c0 * sac, es), sac,
                                   dt__at(b, offb + r * sbr + c0 * sbc, es), sbc,
                                   dt__at_mut(out, (o * R + r) * C + c0, es), (size_t)len, alpha);
            }
        for (d = g->nd - 3; d >= 0; d--) {
            offa += g->sa[d];
            offb += g->sb[d];
            if (++idx[d] < g->ext[d]) break;
            offa -= g->sa[d] * g->ext[d];
            offb -= g->sb[d] * g->ext[d];
            idx[d] = 0;
        }
    }
}

static int dt__strided(int64_t s) { return s != 0 && s != 1; }

/* (kept out of line: its stack frame is not paid by dt__k_binary's one-row case) */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
__attribute__((noinline))
#endif
static void dt__k_binary_nd(dt__bop op, dt_dtype t, int ndim, const int64_t *shape, const void *a, const int64_t *sa,
                            const void *b, const int64_t *sb, void *out, double alpha) {
    dt__bgeom g;
    int64_t idx[DT_MAX_DIMS], offa = 0, offb = 0, rows = 1, r, n;
    size_t es = dt_dtype_size(t);
    int d, in;
    if (!dt__bgeom_make(ndim, shape, sa, sb, &g)) return;
    in = g.nd - 1;
    if (g.nd >= 2 && (dt__strided(g.sa[in]) || dt__strided(g.sb[in]))) {
        dt__binary_tiled(op, t, &g, a, b, out, alpha);
        return;
    }
    n = g.ext[in];
    for (d = 0; d < in; d++) {
        rows *= g.ext[d];
        idx[d] = 0;
    }
    for (r = 0; r < rows; r++) {
        dt__binary_row(op, t, dt__at(a, offa, es), g.sa[in], dt__at(b, offb, es), g.sb[in], dt__at_mut(out, r * n, es),
                       (size_t)n, alpha);
        for (d = in - 1; d >= 0; d--) { /* next row: a row-major counter over the outer dims */
            offa += g.sa[d];
            offb += g.sb[d];
            if (++idx[d] < g.ext[d]) break;
            offa -= g.sa[d] * g.ext[d];
            offb -= g.sb[d] * g.ext[d];
            idx[d] = 0;
        }
    }
}

static void dt__k_binary(dt__bop op, dt_dtype t, int ndim, const int64_t *shape, const void *a, const int64_t *sa,
                         const void *b, const int64_t *sb, void *out, double alpha) {
    if (dt__is_complex(t)) {
        dt__cx_binary(op, t, ndim, shape, a, sa, b, sb, out, alpha);
        return;
    }
    if (ndim == 1 && sa[0] == 1 && sb[0] == 1) { /* one contiguous row (the ops' flat case) */
        if (shape[0] <= 0) return;
        if (t == DT_F32) /* (what dt__binary_row does for it, less the dispatch on the dtype) */
            dt__binary_row_f32(op, (const float *)a, 0, (const float *)b, 0, (float *)out, (size_t)shape[0], (float)alpha);
        else if (t == DT_F64)
            dt__binary_row_f64(op, (const double *)a, 0, (const double *)b, 0, (double *)out, (size_t)shape[0], alpha);
        else dt__binary_row(op, t, a, 1, b, 1, out, (size_t)shape[0], alpha);
        return;
    }
    dt__k_binary_nd(op, t, ndim, shape, a, sa, b, sb, out, alpha);
}

/* ---- reduce ---- */

/* Floats reduce in double, integers in int64 (wrapping sums). A running
   reduction of one output: v (floats) or iv (ints), arg for ARGMAX. */
typedef struct dt__racc {
    double v;
    int64_t iv, arg;
} dt__racc;

static void dt__racc_init(dt__rop op, dt_dtype t, dt__racc *acc) {
    int64_t lo, hi;
    dt__int_range(t, &lo, &hi);
    acc->arg = 0;
    acc->v = op == DT__R_MIN ? HUGE_VAL : (op == DT__R_MAX || op == DT__R_ARGMAX) ? -HUGE_VAL : 0.0;
    acc->iv = op == DT__R_MIN ? hi : op == DT__R_MAX ? lo : op == DT__R_ARGMAX ? INT64_MIN : 0;
}

/* fold a contiguous block (reduced indices idx0..idx0+n) into one output */
static void dt__rrow_f64(dt__rop op, const double *v, size_t n, int64_t idx0, dt__racc *acc) {
    size_t i;
    switch (op) {
    case DT__R_SUM: acc->v += dt__sum_f64(v, n); break;
    case DT__R_SUMSQ: acc->v += dt__sqdev_f64(v, n, 0.0); break;
    case DT__R_MAX: acc->v = dt__maxv_f64(v, n, acc->v, 0); break;
    case DT__R_MIN: acc->v = dt__maxv_f64(v, n, acc->v, 1); break;
    default: /* ARGMAX: strictly greater keeps the first; the first NaN beats any number */
        for (i = 0; i < n; i++)
            if (v[i] > acc->v || (v[i] != v[i] && acc->v == acc->v)) {
                acc->v = v[i];
                acc->arg = idx0 + (int64_t)i;
            }
        break;
    }
}

static void dt__rrow_i64(dt__rop op, const int64_t *v, size_t n, int64_t idx0, dt__racc *acc) {
    size_t i;
    int64_t s = acc->iv;
    switch (op) {
    case DT__R_SUM: for (i = 0; i < n; i++) s = DT__IADD(s, v[i]); break;
    case DT__R_SUMSQ: for (i = 0; i < n; i++) s = DT__IADD(s, DT__IMUL(v[i], v[i])); break;
    case DT__R_MAX: for (i = 0; i < n; i++) s = DT__IMAX(v[i], s); break;
    case DT__R_MIN: for (i = 0; i < n; i++) s = DT__IMIN(v[i], s); break;
    default:
        for (i = 0; i < n; i++)
            if (v[i] > s) {
                s = v[i];
                acc->arg = idx0 + (int64_t)i;
            }
        break;
    }
    acc->iv = s;
}

/* fold a block of n outputs' next input (reduced index r) elementwise */
static void dt__rcols_f64(dt__rop op, const double *v, size_t n, int64_t r, double *acc, int64_t *arg) {
    size_t j;
    switch (op) {
    case DT__R_SUM: for (j = 0; j < n; j++) acc[j] += v[j]; break;
    case DT__R_SUMSQ: for (j = 0; j < n; j++) acc[j] += v[j] * v[j]; break;
    case DT__R_MAX: for (j = 0; j < n; j++) acc[j] = DT__FMAX(v[j], acc[j]); break;
    case DT__R_MIN: for (j = 0; j < n; j++) acc[j] = DT__FMIN(v[j], acc[j]); break;
    default:
        for (j = 0; j < n; j++)
            if (v[j] > acc[j] || (v[j] != v[j] && acc[j] == acc[j])) {
                acc[j] = v[j];
                arg[j] = r;
            }
        break;
    }
}

static void dt__rcols_i64(dt__rop op, const int64_t *v, size_t n, int64_t r, int64_t *acc, int64_t *arg) {
    size_t j;
    switch (op) {
    case DT__R_SUM: for (j = 0; j < n; j++) acc[j] = DT__IADD(acc[j], v[j]); break;
    case DT__R_SUMSQ: for (j = 0; j < n; j++) acc[j] = DT__IADD(acc[j], DT__IMUL(v[j], v[j])); break;
    case DT__R_MAX: for (j = 0; j < n; j++) acc[j] = DT__IMAX(v[j], acc[j]); break;
    case DT__R_MIN: for (j = 0; j < n; j++) acc[j] = DT__IMIN(v[j], acc[j]); break;
    default:
        for (j = 0; j < n; j++)
            if (v[j] > acc[j]) {
                acc[j] = v[j];
                arg[j] = r;
            }
        break;
    }
}

/* write n finished outputs at out[off..]: ARGMAX indices, or values with the
   mean's scale applied to sums (integers: exact when scale is 1, else
   truncated and saturated) */
static void dt__rstore(dt__rop op, dt_dtype t, const double *fv, const int64_t *iv, const int64_t *arg, size_t n,
                       void *out, size_t off, double scale) {
    size_t j;
    int scaled = (op == DT__R_SUM || op == DT__R_SUMSQ) && scale != 1.0;
    if (op == DT__R_ARGMAX) {
        memcpy((int64_t *)out + off, arg, n * sizeof *arg);
    } else if (!dt__is_int(t)) {
        double tmp[DT__BLOCK];
        if (scaled) {
            for (j = 0; j < n; j++) tmp[j] = fv[j] * scale;
            fv = tmp;
        }
        dt__scatter_f64(t, fv, dt__at_mut(out, (int64_t)off, dt_dtype_size(t)), 1, n);
    } else if (scaled) {
        double tmp[DT__BLOCK];
        for (j = 0; j < n; j++) tmp[j] = (double)iv[j] * scale;
        dt__scatter_f64(t, tmp, dt__at_mut(out, (int64_t)off, dt_dtype_size(t)), 1, n);
    } else {
        dt__scatter_i64(t, iv, dt__at_mut(out, (int64_t)off, dt_dtype_size(t)), 1, n);
    }
}

/* x's dims after dropping extent-1 dims and merging neighbours that are
   both reduced or both kept; x stays contiguous */
typedef struct dt__rgeom {
    int nd;
    int64_t ext[DT_MAX_DIMS], st[DT_MAX_DIMS];
    int red[DT_MAX_DIMS];
} dt__rgeom;

static void dt__rgeom_make(int ndim, const int64_t *shape, unsigned mask, dt__rgeom *g) {
    int d;
    int64_t s = 1;
    g->nd = 0;
    for (d = 0; d < ndim; d++) {
        int red = (mask >> d) & 1u;
        if (shape[d] == 1) continue;
        if (g->nd > 0 && g->red[g->nd - 1] == red) {
            g->ext[g->nd - 1] *= shape[d];
        } else {
            g->ext[g->nd] = shape[d];
            g->red[g->nd] = red;
            g->nd++;
        }
    }
    for (d = g->nd - 1; d >= 0; d--) {
        g->st[d] = s;
        s *= g->ext[d];
    }
}

/* a row-major counter over some dims: idx advances, returns the new offset */
static int64_t dt__odo_next(int nd, const int64_t *ext, const int64_t *st, int64_t *idx, int64_t off) {
    int d;
    for (d = nd - 1; d >= 0; d--) {
        off += st[d];
        if (++idx[d] < ext[d]) return off;
        off -= st[d] * ext[d];
        idx[d] = 0;
    }
    return off;
}

/* the dims of g with red == want, except dim `skip` */
static int dt__rgeom_pick(const dt__rgeom *g, int want, int skip, int64_t *ext, int64_t *st, int64_t *count) {
    int d, k = 0;
    *count = 1;
    for (d = 0; d < g->nd; d++)
        /* cppcheck-suppress negativeIndex ; d >= 0 always: skip = -1 skips no dim */
        if (g->red[d] == want && d != skip) {
            ext[k] = g->ext[d];
            st[k] = g->st[d];
            *count *= g->ext[d];
            k++;
        }
    return k;
}

/* the innermost dim is reduced: each output folds rows of it */
static void dt__reduce_inner(dt__rop op, dt_dtype t, const dt__rgeom *g, const void *x, void *out, double scale) {
    int64_t kext[DT_MAX_DIMS], kst[DT_MAX_DIMS], rext[DT_MAX_DIMS], rst[DT_MAX_DIMS];
    int64_t kidx[DT_MAX_DIMS] = {0}, ridx[DT_MAX_DIMS], nout, nrow, o, rc, koff = 0, roff;
    int last = g->nd - 1, nk = dt__rgeom_pick(g, 0, -1, kext, kst, &nout);
    int nr = dt__rgeom_pick(g, 1, last, rext, rst, &nrow);
    size_t R = (size_t)g->ext[last], es = dt_dtype_size(t), p, len;
    int isint = dt__is_int(t);
    for (o = 0; o < nout; o++) {
        dt__racc acc;
        dt__racc_init(op, t, &acc);
        memset(ridx, 0, sizeof ridx);
        roff = 0;
        for (rc = 0; rc < nrow; rc++) {
            for (p = 0; p < R; p += len) {
                const void *src = dt__at(x, koff + roff + (int64_t)p, es);
                len = dt__blk(R - p);
                if (isint) {
                    int64_t buf[DT__BLOCK];
                    dt__gather_i64(t, src, 1, buf, len);
                    dt__rrow_i64(op, buf, len, rc * (int64_t)R + (int64_t)p, &acc);
                } else {
                    double buf[DT__BLOCK];
                    dt__gather_f64(t, src, 1, buf, len);
                    dt__rrow_f64(op, buf, len, rc * (int64_t)R + (int64_t)p, &acc);
                }
            }
            roff = dt__odo_next(nr, rext, rst, ridx, roff);
        }
        dt__rstore(op, t, &acc.v, &acc.iv, &acc.arg, 1, out, (size_t)o, scale);
        koff = dt__odo_next(nk, kext, kst, kidx, koff);
    }
}

/* the innermost dim is kept: blocks of outputs fold whole rows elementwise */
static void dt__reduce_outer(dt__rop op, dt_dtype t, const dt__rgeom *g, const void *x, void *out, double scale) {
    int64_t kext[DT_MAX_DIMS], kst[DT_MAX_DIMS], rext[DT_MAX_DIMS], rst[DT_MAX_DIMS];
    int64_t kidx[DT_MAX_DIMS] = {0}, ridx[DT_MAX_DIMS], nko, nred, o, rc, koff = 0, roff;
    int last = g->nd - 1, nk = dt__rgeom_pick(g, 0, last, kext, kst, &nko);
    int nr = dt__rgeom_pick(g, 1, -1, rext, rst, &nred);
    size_t K = (size_t)g->ext[last], es = dt_dtype_size(t), c0, len, j;
    int isint = dt__is_int(t);
    for (o = 0; o < nko; o++) {
        for (c0 = 0; c0 < K; c0 += len) {
            double fv[DT__BLOCK];
            int64_t iv[DT__BLOCK], arg[DT__BLOCK];
            dt__racc init;
            len = dt__blk(K - c0);
            dt__racc_init(op, t, &init);
            for (j = 0; j < len; j++) {
                fv[j] = init.v;
                iv[j] = init.iv;
                arg[j] = 0;
            }
            memset(ridx, 0, sizeof ridx);
            roff = 0;
            for (rc = 0; rc < nred; rc++) {
                const void *src = dt__at(x, koff + roff + (int64_t)c0, es);
                if (isint) {
                    int64_t buf[DT__BLOCK];
                    dt__gather_i64(t, src, 1, buf, len);
                    dt__rcols_i64(op, buf, len, rc, iv, arg);
                } else {
                    double buf[DT__BLOCK];
                    dt__gather_f64(t, src, 1, buf, len);
                    dt__rcols_f64(op, buf, len, rc, fv, arg);
                }
                roff = dt__odo_next(nr, rext, rst, ridx, roff);
            }
            dt__rstore(op, t, fv, iv, arg, len, out, (size_t)o * K + c0, scale);
        }
        koff = dt__odo_next(nk, kext, kst, kidx, koff);
    }
}

typedef void (*dt__reduce_kernel)(dt__rop op, dt_dtype t, int ndim, const int64_t *shape, unsigned mask,
                                  const void *x, void *out, double scale);

/* a complex reduction as reductions of the parts (dt__cx_reduce_geom) by
   `real`: the host's kernel, or a device's (dtensor_cuda.h) */
static void dt__cx_reduce(dt__reduce_kernel real, dt__rop op, dt_dtype t, int ndim, const int64_t *shape,
                          unsigned mask, const void *x, void *out, double scale) {
    int d;
    int64_t geo[DT_MAX_DIMS + 1], slice = 1, i;
    unsigned rmask;
    size_t ps = dt_dtype_size(dt__part_dtype(t));
    int64_t kept = 1;
    int nd = dt__cx_reduce_geom(ndim, shape, mask, geo, &rmask);
    if (nd < DT_MAX_DIMS || !(rmask >> (nd - 1))) { /* a trailing 2, or a kept last dim doubled */
        if (nd < DT_MAX_DIMS) geo[nd++] = 2;
        else geo[nd - 1] *= 2;
        real(op, dt__part_dtype(t), nd, geo, rmask, x, out, scale);
        return;
    }
    for (d = 1; d < nd; d++) {
        slice *= geo[d];
        if (!((rmask >> d) & 1u)) kept *= geo[d];
    }
    geo[nd] = 2;
    for (i = 0; i < geo[0]; i++) /* alternating, the last reduced: geo[0] is kept, its slices reduce alone */
        real(op, dt__part_dtype(t), nd, geo + 1, rmask >> 1, (const char *)x + (size_t)(i * slice * 2) * ps,
             (char *)out + (size_t)(i * kept * 2) * ps, scale);
}

static void dt__k_reduce(dt__rop op, dt_dtype t, int ndim, const int64_t *shape, unsigned mask, const void *x,
                         void *out, double scale) {
    int64_t nout = 1, nred = 1;
    int d;
    dt__rgeom g;
    if (dt__is_complex(t)) { dt__cx_reduce(dt__k_reduce, op, t, ndim, shape, mask, x, out, scale); return; }
    for (d = 0; d < ndim; d++) {
        if ((mask >> d) & 1u) nred *= shape[d];
        else nout *= shape[d];
    }
    if (nout == 0) return;
    if (nred == 0) { /* the identity of op, so that an empty shard combines as a no-op; scaled, so that a mean
                        over an empty extent (scale 1/0) is 0 * inf = NaN, torch's 0/0, on every shard */
        size_t o, len;
        for (o = 0; o < (size_t)nout; o += len) {
            double fv[DT__BLOCK];
            int64_t iv[DT__BLOCK], arg[DT__BLOCK];
            dt__racc init;
            size_t j;
            len = dt__blk((size_t)nout - o);
            dt__racc_init(op, t, &init);
            for (j = 0; j < len; j++) {
                fv[j] = init.v;
                iv[j] = init.iv;
                arg[j] = 0;
            }
            dt__rstore(op, t, fv, iv, arg, len, out, o, scale);
        }
        return;
    }
    dt__rgeom_make(ndim, shape, mask, &g);
    if (g.nd == 0) { /* one element */
        g.nd = 1;
        g.ext[0] = 1;
        g.st[0] = 1;
        g.red[0] = 1;
    }
    if (g.red[g.nd - 1]) dt__reduce_inner(op, t, &g, x, out, scale);
    else dt__reduce_outer(op, t, &g, x, out, scale);
}

/* ---- softmax ---- */

/* Three passes (max, sum of exp in double, write). F32/F64 softmax keeps the
   exponentials in y between the last two passes; half types recompute them
   rather than round them twice. y may equal x: each pass reads a block
   before writing it. Each step is its own loop over a block so that it
   vectorises (EXPFN is dt__expf for the F32 kind). */
#define DT__DEFINE_SOFTMAX(SFX, W, F, EXPFN)                                                      \
    static void dt__softmax_row_##SFX(dt_dtype t, const void *x, void *y, size_t n, int want_log) { \
        W buf[DT__BLOCK], obuf[DT__BLOCK], m, f;                                                  \
        const W *v;                                                                               \
        W *o;                                                                                     \
        double s = 0.0;                                                                           \
        int keep = !want_log && (t == DT_F32 || t == DT_F64);                                     \
        size_t i, j, len;                                                                         \
        m = dt__rowmax_##SFX(t, x, 0, n);                                                         \
        for (i = 0; i < n; i += len) {                                                            \
            len = dt__blk(n - i);                                                                 \
            v = dt__view_##SFX(t, x, i, len, buf);                                                \
            o = keep ? dt__target_##SFX(t, y, i, obuf) : obuf;                                    \
            for (j = 0; j < len; j++) o[j] = EXPFN(v[j] - m);                                     \
            s += dt__sum_##SFX(o, len);                                                           \
        }                                                                                         \
        f = want_log ? log##F((W)s) : (W)(1.0 / s);                                               \
        for (i = 0; i < n; i += len) {                                                            \
            len = dt__blk(n - i);                                                                 \
            o = dt__target_##SFX(t, y, i, obuf);                                                  \
            if (keep) {                                                                           \
                for (j = 0; j < len; j++) o[j] *= f;                                              \
            } else {                                                                              \
                v = dt__view_##SFX(t, x, i, len, buf);                                            \
                if (want_log) for (j = 0; j < len; j++) o[j] = (v[j] - m) - f;                    \
                else for (j = 0; j < len; j++) o[j] = EXPFN(v[j] - m) * f;                        \
            }                                                                                     \
            dt__commit_##SFX(t, o, y, i, len);                                                    \
        }                                                                                         \
    }                                                                                             \
    /* [n, inner] with inner > 1: blocks of columns, each pass over the n rows */                 \
    static void dt__softmax_cols_##SFX(dt_dtype t, const void *x, void *y, size_t n, size_t inner, \
                                       int want_log) {                                            \
        int keep = !want_log && (t == DT_F32 || t == DT_F64);                                     \
        size_t c0, r, j, len;                                                                     \
        for (c0 = 0; c0 < inner; c0 += len) {                                                     \
            W buf[DT__BLOCK], obuf[DT__BLOCK], m[DT__BLOCK], f[DT__BLOCK];                        \
            double s[DT__BLOCK];                                                                  \
            const W *v;                                                                           \
            W *o;                                                                                 \
            len = dt__blk(inner - c0);                                                            \
            for (j = 0; j < len; j++) {                                                           \
                m[j] = (W)-HUGE_VAL;                                                              \
                s[j] = 0.0;                                                                       \
            }                                                                                     \
            for (r = 0; r < n; r++) {                                                             \
                v = dt__view_##SFX(t, x, r * inner + c0, len, buf);                               \
                for (j = 0; j < len; j++) m[j] = DT__FMAX(v[j], m[j]);                            \
            }                                                                                     \
            for (r = 0; r < n; r++) {                                                             \
                v = dt__view_##SFX(t, x, r * inner + c0, len, buf);                               \
                o = keep ? dt__target_##SFX(t, y, r * inner + c0, obuf) : obuf;                   \
                for (j = 0; j < len; j++) o[j] = EXPFN(v[j] - m[j]);                              \
                for (j = 0; j < len; j++) s[j] += (double)o[j];                                   \
            }                                                                                     \
            for (j = 0; j < len; j++) f[j] = want_log ? log##F((W)s[j]) : (W)(1.0 / s[j]);        \
            for (r = 0; r < n; r++) {                                                             \
                o = dt__target_##SFX(t, y, r * inner + c0, obuf);                                 \
                if (keep) {                                                                       \
                    for (j = 0; j < len; j++) o[j] *= f[j];                                       \
                } else {                                                                          \
                    v = dt__view_##SFX(t, x, r * inner + c0, len, buf);                           \
                    if (want_log) for (j = 0; j < len; j++) o[j] = (v[j] - m[j]) - f[j];          \
                    else for (j = 0; j < len; j++) o[j] = EXPFN(v[j] - m[j]) * f[j];              \
                }                                                                                 \
                dt__commit_##SFX(t, o, y, r * inner + c0, len);                                   \
            }                                                                                     \
        }                                                                                         \
    }                                                                                             \
    DT__DEFS_END

DT__DEFINE_SOFTMAX(f32, float, f, dt__expf);
DT__DEFINE_SOFTMAX(f64, double, , exp);

static void dt__k_softmax(dt_dtype t, const void *x, void *y, size_t outer, size_t n, size_t inner, int want_log) {
    size_t o, es = dt_dtype_size(t), slab = n * inner;
    int f64 = dt__work_kind(t) == DT__WK_F64;
    if (n == 0 || inner == 0) return;
    for (o = 0; o < outer; o++) {
        const void *xs = dt__at(x, (int64_t)(o * slab), es);
        void *ys = dt__at_mut(y, (int64_t)(o * slab), es);
        if (inner == 1) {
            if (f64) dt__softmax_row_f64(t, xs, ys, n, want_log);
            else dt__softmax_row_f32(t, xs, ys, n, want_log);
        } else {
            if (f64) dt__softmax_cols_f64(t, xs, ys, n, inner, want_log);
            else dt__softmax_cols_f32(t, xs, ys, n, inner, want_log);
        }
    }
}

/* ---- norm ---- */

/* mean and variance in double, two passes (no cancellation); the output
   pass in the working type */
#define DT__DEFINE_NORM(SFX, W)                                                                        \
    static void dt__norm_rows_##SFX(dt_dtype t, const void *x, const void *w, const void *b, void *y,  \
                                    size_t rows, size_t n, double eps, int rms) {                      \
        size_t r, i, j, len;                                                                           \
        for (r = 0; r < rows; r++) {                                                                   \
            W buf[DT__BLOCK], wbuf[DT__BLOCK], bbuf[DT__BLOCK], obuf[DT__BLOCK];                       \
            double mean = 0.0, sq = 0.0;                                                               \
            size_t off = r * n;                                                                        \
            W mu, scale;                                                                               \
            if (!rms) {                                                                                \
                double s = 0.0;                                                                        \
                for (i = 0; i < n; i += len) {                                                         \
                    len = dt__blk(n - i);                                                              \
                    s += dt__sum_##SFX(dt__view_##SFX(t, x, off + i, len, buf), len);                  \
                }                                                                                      \
                mean = s / (double)n;                                                                  \
            }                                                                                          \
            for (i = 0; i < n; i += len) {                                                             \
                len = dt__blk(n - i);                                                                  \
                sq += dt__sqdev_##SFX(dt__view_##SFX(t, x, off + i, len, buf), len, mean);             \
            }                                                                                          \
            mu = (W)mean;                                                                              \
            scale = (W)(1.0 / sqrt(sq / (double)n + eps));                                             \
            for (i = 0; i < n; i += len) {                                                             \
                const W *v, *wv, *bv;                                                                  \
                W *o;                                                                                  \
                len = dt__blk(n - i);                                                                  \
                v = dt__view_##SFX(t, x, off + i, len, buf);                                           \
                o = dt__target_##SFX(t, y, off + i, obuf);                                             \
                for (j = 0; j < len; j++) o[j] = (v[j] - mu) * scale;                                  \
                if (w) {                                                                               \
                    wv = dt__view_##SFX(t, w, i, len, wbuf);                                           \
                    for (j = 0; j < len; j++) o[j] *= wv[j];                                           \
                }                                                                                      \
                if (b && !rms) {                                                                       \
                    bv = dt__view_##SFX(t, b, i, len, bbuf);                                           \
                    for (j = 0; j < len; j++) o[j] += bv[j];                                           \
                }                                                                                      \
                dt__commit_##SFX(t, o, y, off + i, len);                                               \
            }                                                                                          \
        }                                                                                              \
    }                                                                                                  \
    DT__DEFS_END

DT__DEFINE_NORM(f32, float);
DT__DEFINE_NORM(f64, double);

static void dt__k_norm(dt_dtype t, const void *x, const void *w, const void *b, void *y, size_t rows, size_t n,
                       double eps, int rms) {
    if (n == 0) return;
    if (dt__work_kind(t) == DT__WK_F64) dt__norm_rows_f64(t, x, w, b, y, rows, n, eps, rms);
    else dt__norm_rows_f32(t, x, w, b, y, rows, n, eps, rms);
}

/* ---- permute ---- */

#define DT__TILE_COPY(ES)                                                                        \
    for (r = 0; r < nr; r++)                                                                     \
        for (q = 0; q < nc; q++) memcpy(y + (r * ys_r + q) * (ES), x + (r + q * xs_c) * (ES), ES);

/* y[r * ys_r + q] = x[r + q * xs_c] for r < nr, q < nc: the transposing core,
   where x runs contiguously along r and y along q. Constant-size memcpy
   compiles to one move. */
static void dt__transpose_tile(size_t es, const char *x, int64_t xs_c, char *y, int64_t ys_r, int64_t nr, int64_t nc) {
    int64_t r, q;
    switch (es) {
    case 1: DT__TILE_COPY(1) break;
    case 2: DT__TILE_COPY(2) break;
    case 4: DT__TILE_COPY(4) break;
    case 8: DT__TILE_COPY(8) break;
    default:
        for (r = 0; r < nr; r++)
            for (q = 0; q < nc; q++) memcpy(y + (size_t)(r * ys_r + q) * es, x + (size_t)(r + q * xs_c) * es, es);
        break;
    }
}

static void dt__k_permute(size_t es, int ndim, const int64_t *xshape, const int *perm, const void *x, void *y) {
    int64_t xst[DT_MAX_DIMS], ext[DT_MAX_DIMS], st[DT_MAX_DIMS], yst[DT_MAX_DIMS], idx[DT_MAX_DIMS];
    int64_t total = 1, xo = 0, yo = 0, outer = 1, o;
    int d, nd = 0, q = -1, last;
    for (d = ndim - 1; d >= 0; d--) {
        xst[d] = total;
        total *= xshape[d];
    }
    if (total == 0) return;
    /* y's dims with their x strides; drop extent 1, merge dims still adjacent in x */
    for (d = 0; d < ndim; d++) {
        int64_t e = xshape[perm[d]], s = xst[perm[d]];
        if (e == 1) continue;
        if (nd > 0 && st[nd - 1] == s * e) ext[nd - 1] *= e;
        else ext[nd++] = e;
        st[nd - 1] = s;
    }
    if (nd <= 1) { /* no reordering left */
        memcpy(y, x, (size_t)total * es);
        return;
    }
    last = nd - 1;
    yst[last] = 1;
    for (d = last - 1; d >= 0; d--) yst[d] = yst[d + 1] * ext[d + 1];
    if (st[last] == 1) { /* rows stay contiguous: copy rows */
        size_t row = (size_t)ext[last] * es;
        outer = total / ext[last];
        for (d = 0; d < last; d++) idx[d] = 0;
        for (o = 0; o < outer; o++) {
            memcpy((char *)y + (size_t)o * row, (const char *)x + (size_t)xo * es, row);
            xo = dt__odo_next(last, ext, st, idx, xo);
        }
        return;
    }
    for (d = 0; d < nd; d++)
        if (st[d] == 1) q = d;
    /* tiles of the plane (q: contiguous in x, last: contiguous in y), for every
       index of the other dims */
    {
        int64_t oext[DT_MAX_DIMS], oxs[DT_MAX_DIMS], oys[DT_MAX_DIMS], oidx[DT_MAX_DIMS];
        int no = 0;
        for (d = 0; d < nd; d++)
            if (d != q && d != last) {
                oext[no] = ext[d];
                oxs[no] = st[d];
                oys[no] = yst[d];
                oidx[no] = 0;
                outer *= ext[d];
                no++;
            }
        for (o = 0; o < outer; o++) {
            int64_t r0, c0, nr, nc;
            /* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult): q >= 0: some dim of a non-empty permuted array has x stride 1 */
            for (r0 = 0; r0 < ext[q]; r0 += DT__TILE)
                for (c0 = 0; c0 < ext[last]; c0 += DT__TILE) {
                    nr = ext[q] - r0 < DT__TILE ? ext[q] - r0 : DT__TILE;
                    nc = ext[last] - c0 < DT__TILE ? ext[last] - c0 : DT__TILE;
                    dt__transpose_tile(es, (const char *)x + (size_t)(xo + r0 + c0 * st[last]) * es, st[last],
                                       (char *)y + (size_t)(yo + r0 * yst[q] + c0) * es, yst[q], nr, nc);
                }
            /* advance the other dims' counter, both offsets */
            for (d = no - 1; d >= 0; d--) {
                xo += oxs[d];
                yo += oys[d];
                if (++oidx[d] < oext[d]) break;
                xo -= oxs[d] * oext[d];
                yo -= oys[d] * oext[d];
                oidx[d] = 0;
            }
        }
    }
}

/* ---- embedding ---- */

static void dt__k_embedding(dt_dtype t, const void *table, int64_t row0, int64_t nrows, int64_t dim, dt_dtype idx_t,
                            const void *idx, size_t nidx, void *out) {
    size_t row = (size_t)dim * dt_dtype_size(t), i;
    for (i = 0; i < nidx; i++) {
        int64_t v = dt__index_at(idx_t, idx, i);
        char *dst = (char *)out + i * row;
        if (v >= row0 && v - row0 < nrows) memcpy(dst, (const char *)table + (size_t)(v - row0) * row, row);
        else memset(dst, 0, row);
    }
}

/* ---- xent ---- */

/* the first pass (M == NULL) writes only rowmax; the second only sumexp and
   tlogit (either may be NULL), so M may be the rowmax buffer */
#define DT__DEFINE_XENT(SFX, W, EXPFN)                                                                       \
    static void dt__xent_rows_##SFX(dt_dtype t, const void *x, size_t rows, size_t ncls, int64_t cls0,       \
                                    dt_dtype target_t, const void *target, const double *M, double *rowmax,  \
                                    double *sumexp, double *tlogit) {                                        \
        size_t r, i, j, len;                                                                                 \
        for (r = 0; r < rows; r++) {                                                                         \
            W buf[DT__BLOCK], e[DT__BLOCK];                                                                  \
            const W *v;                                                                                      \
            size_t off = r * ncls;                                                                           \
            if (!M) {                                                                                        \
                if (rowmax) rowmax[r] = (double)dt__rowmax_##SFX(t, x, off, ncls);                           \
                continue;                                                                                    \
            }                                                                                                \
            if (sumexp) {                                                                                    \
                W mr = (W)M[r];                                                                              \
                double s = 0.0;                                                                              \
                for (i = 0; i < ncls; i += len) {                                                            \
                    len = dt__blk(ncls - i);                                                                 \
                    v = dt__view_##SFX(t, x, off + i, len, buf);                                             \
                    for (j = 0; j < len; j++) e[j] = EXPFN(v[j] - mr);                                       \
                    s += dt__sum_##SFX(e, len);                                                              \
                }                                                                                            \
                sumexp[r] = s;                                                                               \
            }                                                                                                \
            if (tlogit) {                                                                                    \
                int64_t c = dt__index_at(target_t, target, r);                                               \
                tlogit[r] = 0.0;                                                                             \
                if (c >= cls0 && c - cls0 < (int64_t)ncls)                                                   \
                    tlogit[r] = (double)dt__view_##SFX(t, x, off + (size_t)(c - cls0), 1, buf)[0];           \
            }                                                                                                \
        }                                                                                                    \
    }                                                                                                        \
    DT__DEFS_END

DT__DEFINE_XENT(f32, float, dt__expf);
DT__DEFINE_XENT(f64, double, exp);

static void dt__k_xent(dt_dtype t, const void *x, size_t rows, size_t ncls, int64_t cls0, dt_dtype target_t,
                       const void *target, const double *M, double *rowmax, double *sumexp, double *tlogit) {
    if (dt__work_kind(t) == DT__WK_F64)
        dt__xent_rows_f64(t, x, rows, ncls, cls0, target_t, target, M, rowmax, sumexp, tlogit);
    else dt__xent_rows_f32(t, x, rows, ncls, cls0, target_t, target, M, rowmax, sumexp, tlogit);
}

/* >>gemm ------------------------------------------------------------------
   The local GEMM behind the kernel table's gemm: C = alpha A B + beta C on
   strided blocks, through the BLAS this build selected (DTENSOR_BLAS: BLIS,
   CBLAS, Fortran BLAS, or none; the selection and its headers are at the
   top of >>util) or through cache-blocked loops for small, strided or
   integer blocks; F16/BF16 widened to F32 copies. */

#define DT__FMAC(s, p, q) ((s) + (p) * (q))
#define DT__IMAC(s, p, q) DT__IADD(s, DT__IMUL(p, q))

/* C = alpha A B + beta C by cache blocks: a KB x NB panel of B is packed in
   the working type, an MB x NB block of C accumulates in the working type,
   and the inner loop runs along a packed row (i-k-j order). Any strides. */
#define DT__DEFINE_GEMM_LOOP(SFX, W, GATHER, SCATTER, MAC, MUL)                                              \
    static dt_status dt__gemm_loop_##SFX(dt_dtype t, int64_t m, int64_t n, int64_t k, W alpha, const void *a, \
                                         int64_t rsa, int64_t csa, const void *b, int64_t rsb, int64_t csb,   \
                                         W beta, int beta_zero, void *c, int64_t rsc, int64_t csc) {          \
        size_t es = dt_dtype_size(t);                                                                        \
        int64_t kbmax = k < DT__GEMM_KB ? k : DT__GEMM_KB, nbmax = n < DT__GEMM_NB ? n : DT__GEMM_NB;         \
        int64_t mbmax = m < DT__GEMM_MB ? m : DT__GEMM_MB, i0, j0, p0, i, j, p, mb, nb, kb;                  \
        void *mem = NULL;                                                                                    \
        W *bp, *acc, small[DT__GEMM_STACK]; /* small products: no allocation in a time loop */               \
        size_t need = (size_t)((kbmax + mbmax) * nbmax);                                                     \
        if (need > DT__GEMM_STACK) {                                                                         \
            dt_status st = dt__alloc("dt gemm", need * sizeof(W), &mem);                                     \
            if (st) return st;                                                                               \
        }                                                                                                    \
        bp = mem ? (W *)mem : small;                                                                         \
        acc = bp + kbmax * nbmax;                                                                            \
        for (j0 = 0; j0 < n; j0 += nb) {                                                                     \
            nb = n - j0 < DT__GEMM_NB ? n - j0 : DT__GEMM_NB;                                                \
            for (i0 = 0; i0 < m; i0 += mb) {                                                                 \
                mb = m - i0 < DT__GEMM_MB ? m - i0 : DT__GEMM_MB;                                            \
                for (i = 0; i < mb * nb; i++) acc[i] = (W)0;                                                 \
                for (p0 = 0; p0 < k; p0 += kb) {                                                             \
                    kb = k - p0 < DT__GEMM_KB ? k - p0 : DT__GEMM_KB;                                        \
                    for (p = 0; p < kb; p++)                                                                 \
                        GATHER(t, dt__at(b, (p0 + p) * rsb + j0 * csb, es), csb, bp + p * nb, (size_t)nb);   \
                    for (i = 0; i < mb; i++) {                                                               \
                        W arow[DT__GEMM_KB], *ci = acc + i * nb;                                             \
                        GATHER(t, dt__at(a, (i0 + i) * rsa + p0 * csa, es), csa, arow, (size_t)kb);          \
                        for (p = 0; p < kb; p++) {                                                           \
                            const W av = arow[p], *bq = bp + p * nb;                                         \
                            for (j = 0; j < nb; j++) ci[j] = MAC(ci[j], av, bq[j]);                          \
                        }                                                                                    \
                    }                                                                                        \
                }                                                                                            \
                for (i = 0; i < mb; i++) {                                                                   \
                    W crow[DT__GEMM_NB];                                                                     \
                    const W *ci = acc + i * nb;                                                              \
                    void *cp = dt__at_mut(c, (i0 + i) * rsc + j0 * csc, es);                                 \
                    if (beta_zero) { /* C is not read: it may hold NaN */                                    \
                        for (j = 0; j < nb; j++) crow[j] = MUL(alpha, ci[j]);                                \
                    } else {                                                                                 \
                        GATHER(t, cp, csc, crow, (size_t)nb);                                                \
                        for (j = 0; j < nb; j++) crow[j] = MAC(MUL(alpha, ci[j]), beta, crow[j]);            \
                    }                                                                                        \
                    SCATTER(t, crow, cp, csc, (size_t)nb);                                                   \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        DT_FREE(mem);                                                                                        \
        return DT_OK;                                                                                        \
    }                                                                                                        \
    DT__DEFS_END

DT__DEFINE_GEMM_LOOP(f32, float, dt__gather_f32, dt__scatter_f32, DT__FMAC, DT__FMUL);
DT__DEFINE_GEMM_LOOP(f64, double, dt__gather_f64, dt__scatter_f64, DT__FMAC, DT__FMUL);
DT__DEFINE_GEMM_LOOP(i64, int64_t, dt__gather_i64, dt__scatter_i64, DT__IMAC, DT__IMUL);

#if DT__BLAS != 0
/* how dt__k_gemm ran its F32/F64/F16/BF16 calls on this thread: the BLAS on
   the caller's strides (or on F16/BF16's F32 copies), the BLAS after
   packing an F32/F64 matrix it cannot take, the loops (small, or no BLAS
   linked). For the tests and bench/blas.c. */
static DT__TLS long dt__gemm_count[3];

#if DT__BLAS_WEAK
/* 0 when the BLAS's weak symbols are absent (no BLAS linked): the loops run */
static int dt__blas_linked(void) {
#if DT__BLAS == 1
    return bli_sgemm_ex != NULL && bli_dgemm_ex != NULL && bli_rntm_init_from_global != NULL;
#elif DT__BLAS == 2
    return cblas_sgemm != NULL && cblas_dgemm != NULL;
#else
    return sgemm_ != NULL && dgemm_ != NULL;
#endif
}
#define DT__WITH_BLAS(c) ((c) && dt__blas_linked())
/* the same for the complex ?gemm: a BLAS build may lack them */
static int dt__blas_linked_cx(void) {
#if DT__BLAS == 1
    return bli_cgemm_ex != NULL && bli_zgemm_ex != NULL && bli_rntm_init_from_global != NULL;
#elif DT__BLAS == 2
    return cblas_cgemm != NULL && cblas_zgemm != NULL;
#else
    return cgemm_ != NULL && zgemm_ != NULL;
#endif
}
#define DT__WITH_BLAS_CX(c) ((c) && dt__blas_linked_cx())
#else
#define DT__WITH_BLAS(c) (c)
#define DT__WITH_BLAS_CX(c) (c)
#endif

#if DT__BLAS == 1
/* BLIS accepts a rows x cols matrix only with positive, non-overlapping
   strides, and checks them even along an extent-1 dim (where any stride
   describes the same data): give such dims the stride a contiguous layout
   would have. 0 if BLIS cannot take the matrix (it is packed). */
static int dt__blas_takes(int64_t rows, int64_t cols, int64_t *rs, int64_t *cs) {
    if (rows == 1 && cols == 1) {
        *rs = *cs = 1;
        return 1;
    }
    if (rows == 1) {
        if (*cs <= 0) return 0;
        *rs = cols * *cs;
        return 1;
    }
    if (cols == 1) {
        if (*rs <= 0) return 0;
        *cs = rows * *rs;
        return 1;
    }
    if (*rs <= 0 || *cs <= 0 || *rs == *cs) return 0;
    return *rs < *cs ? rows * *rs <= *cs : cols * *cs <= *rs;
}

/* F32/F64 through BLIS's general strides; 0 if it cannot take them (m, n, k > 0).
   The small-matrix ("sup") kernels of BLIS 0.9 (Debian 12's) read past the
   end of A or C for some edge sizes (flame/blis#635, #821: a segfault when
   the matrix ends a page), so they are switched off; the packed path is as
   fast here from 3x3 to 1024^3. The thread settings stay BLIS's own. */
static int dt__gemm_lib(dt_dtype t, int64_t m, int64_t n, int64_t k, double alpha, const void *a, int64_t rsa,
                        int64_t csa, const void *b, int64_t rsb, int64_t csb, double beta, void *c, int64_t rsc,
                        int64_t csc) {
    rntm_t rntm;
    if (!dt__blas_takes(m, k, &rsa, &csa) || !dt__blas_takes(k, n, &rsb, &csb) || !dt__blas_takes(m, n, &rsc, &csc))
        return 0;
    bli_rntm_init_from_global(&rntm);
    bli_rntm_disable_l3_sup(&rntm);
    if (t == DT_C64) { /* complex: the real alpha, beta as (x, 0) pairs */
        float al[2], be[2];
        al[0] = (float)alpha, be[0] = (float)beta, al[1] = be[1] = 0.0f;
        bli_cgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, (scomplex *)(void *)al, (scomplex *)(void *)a,
                     rsa, csa, (scomplex *)(void *)b, rsb, csb, (scomplex *)(void *)be, (scomplex *)c, rsc, csc,
                     NULL, &rntm);
    } else if (t == DT_C128) {
        double al[2], be[2];
        al[0] = alpha, be[0] = beta, al[1] = be[1] = 0.0;
        bli_zgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, (dcomplex *)(void *)al, (dcomplex *)(void *)a,
                     rsa, csa, (dcomplex *)(void *)b, rsb, csb, (dcomplex *)(void *)be, (dcomplex *)c, rsc, csc,
                     NULL, &rntm);
    } else if (t == DT_F32) {
        float al = (float)alpha, be = (float)beta;
        bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &al, (float *)a, rsa, csa, (float *)b, rsb, csb,
                     &be, (float *)c, rsc, csc, NULL, &rntm);
    } else {
        bli_dgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &alpha, (double *)a, rsa, csa, (double *)b, rsb,
                     csb, &beta, (double *)c, rsc, csc, NULL, &rntm);
    }
    return 1;
}
#else
/* a CBLAS or Fortran BLAS takes a matrix only as op(X), X column-major with a
   leading dimension ld >= its rows: the rows x cols matrix at (rs, cs) is
   X itself when rs == 1 (ld = cs), X^T when cs == 1 (ld = rs); a stride along
   an extent-1 dim is free. 0 if neither (zero, negative, overlapping or two
   non-unit strides: the matrix is packed), or a size does not fit the BLAS's
   integer. */
static int dt__blas_fits(int64_t v) { return (int64_t)(DTENSOR_BLAS_INT)v == v; }
static int dt__blas_cm(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int *trans, int64_t *ld) {
    int64_t l;
    if (rs == 1 || rows == 1) {
        l = cols == 1 ? rows : cs;
        if (l >= rows && l >= 1 && dt__blas_fits(l)) {
            *trans = 0;
            *ld = l;
            return 1;
        }
    }
    if (cs == 1 || cols == 1) {
        l = rows == 1 ? cols : rs;
        if (l >= cols && l >= 1 && dt__blas_fits(l)) {
            *trans = 1;
            *ld = l;
            return 1;
        }
    }
    return 0;
}
static int dt__blas_takes(int64_t rows, int64_t cols, int64_t *rs, int64_t *cs) {
    int tr;
    int64_t ld;
    return dt__blas_cm(rows, cols, *rs, *cs, &tr, &ld);
}

/* C = alpha A B + beta C in column-major terms; a C that is only expressible
   transposed is computed as C^T = B^T A^T (the same call with the operands
   swapped and each one's strides exchanged). 0 if a matrix cannot be taken. */
static int dt__gemm_lib(dt_dtype t, int64_t m, int64_t n, int64_t k, double alpha, const void *a, int64_t rsa,
                        int64_t csa, const void *b, int64_t rsb, int64_t csb, double beta, void *c, int64_t rsc,
                        int64_t csc) {
    int ta, tb, tc;
    int64_t lda, ldb, ldc;
    DTENSOR_BLAS_INT im, in, ik, ila, ilb, ilc;
    if (!dt__blas_cm(m, n, rsc, csc, &tc, &ldc) || !dt__blas_fits(m) || !dt__blas_fits(n) || !dt__blas_fits(k))
        return 0;
    if (tc) {
        const void *tp = a;
        int64_t ti = m, r = rsa, q = csa;
        m = n;
        n = ti;
        a = b;
        b = tp;
        rsa = csb;
        csa = rsb;
        rsb = q;
        csb = r;
    }
    if (!dt__blas_cm(m, k, rsa, csa, &ta, &lda) || !dt__blas_cm(k, n, rsb, csb, &tb, &ldb)) return 0;
    im = (DTENSOR_BLAS_INT)m;
    in = (DTENSOR_BLAS_INT)n;
    ik = (DTENSOR_BLAS_INT)k;
    ila = (DTENSOR_BLAS_INT)lda;
    ilb = (DTENSOR_BLAS_INT)ldb;
    ilc = (DTENSOR_BLAS_INT)ldc;
#if DT__BLAS == 2
    if (dt__is_complex(t)) { /* complex: the real alpha, beta as (x, 0) pairs */
        double al[2], be[2];
        float alf[2], bef[2];
        al[0] = alpha, be[0] = beta, al[1] = be[1] = 0.0;
        alf[0] = (float)alpha, bef[0] = (float)beta, alf[1] = bef[1] = 0.0f;
        if (t == DT_C64)
            cblas_cgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, im, in, ik, alf,
                        a, ila, b, ilb, bef, c, ilc);
        else
            cblas_zgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, im, in, ik, al,
                        a, ila, b, ilb, be, c, ilc);
    } else if (t == DT_F32)
        cblas_sgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, im, in, ik,
                    (float)alpha, (const float *)a, ila, (const float *)b, ilb, (float)beta, (float *)c, ilc);
    else
        cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, im, in, ik, alpha,
                    (const double *)a, ila, (const double *)b, ilb, beta, (double *)c, ilc);
#else
    {
        const char *sa = ta ? "T" : "N", *sb = tb ? "T" : "N";
        if (dt__is_complex(t)) { /* complex: the real alpha, beta as (x, 0) pairs */
            double al[2], be[2];
            float alf[2], bef[2];
            al[0] = alpha, be[0] = beta, al[1] = be[1] = 0.0;
            alf[0] = (float)alpha, bef[0] = (float)beta, alf[1] = bef[1] = 0.0f;
            if (t == DT_C64)
                cgemm_(sa, sb, &im, &in, &ik, alf, (const float *)a, &ila, (const float *)b, &ilb, bef, (float *)c,
                       &ilc, 1, 1);
            else
                zgemm_(sa, sb, &im, &in, &ik, al, (const double *)a, &ila, (const double *)b, &ilb, be, (double *)c,
                       &ilc, 1, 1);
        } else if (t == DT_F32) {
            float al = (float)alpha, be = (float)beta;
            sgemm_(sa, sb, &im, &in, &ik, &al, (const float *)a, &ila, (const float *)b, &ilb, &be, (float *)c, &ilc,
                   1, 1);
        } else {
            dgemm_(sa, sb, &im, &in, &ik, &alpha, (const double *)a, &ila, (const double *)b, &ilb, &beta,
                   (double *)c, &ilc, 1, 1);
        }
    }
#endif
    return 1;
}
#endif

/* F32/F64 through the BLAS (m, n, k > 0). A matrix whose strides it cannot
   take (see dt__blas_takes) is first packed into a contiguous row-major copy
   (C: copied in when beta != 0, out after); 0 if that is not possible (a C
   whose elements overlap or whose strides are not positive, no memory, a
   size past the BLAS's integer): the loops run. */
static int dt__gemm_blas(dt_dtype t, int64_t m, int64_t n, int64_t k, double alpha, const void *a, int64_t rsa,
                         int64_t csa, const void *b, int64_t rsb, int64_t csb, double beta, void *c, int64_t rsc,
                         int64_t csc) {
    size_t es = dt_dtype_size(t), na = 0, nb = 0, nc = 0;
    int64_t r1 = rsa, c1 = csa, r2 = rsb, c2 = csb, r3 = rsc, c3 = csc, i;
    int pa, pb, pc, ok;
    void *mem;
    char *pm;
    if (dt__gemm_lib(t, m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc)) {
        dt__gemm_count[0]++;
        return 1;
    }
    pa = !dt__blas_takes(m, k, &r1, &c1);
    pb = !dt__blas_takes(k, n, &r2, &c2);
    pc = !dt__blas_takes(m, n, &r3, &c3);
    if (pc) {
        /* positive strides, elements disjoint: the rows x cols box fits between them */
        int64_t lo = rsc < csc ? rsc : csc, hi = rsc < csc ? csc : rsc, nlo = rsc < csc ? m : n;
        if (m > 1 && n > 1 && (lo <= 0 || hi < lo * nlo)) return 0;
        if ((m > 1 && rsc <= 0) || (n > 1 && csc <= 0)) return 0;
    }
    if ((double)m * (double)k + (double)k * (double)n + (double)m * (double)n > (double)(SIZE_MAX / es / 2)) return 0;
    if (pa) na = (size_t)m * (size_t)k;
    if (pb) nb = (size_t)k * (size_t)n;
    if (pc) nc = (size_t)m * (size_t)n;
    mem = DT_MALLOC((na + nb + nc) * es + 1);
    if (!mem) return 0;
    pm = (char *)mem;
#define DT__PACK_ROWS(ROWS, COLS, SRC, RS, CS, DST)                                                                \
    for (i = 0; i < (ROWS); i++) {                                                                                 \
        if (t == DT_F32)                                                                                           \
            dt__gather_f32(t, dt__at(SRC, i * (RS), es), CS, (float *)(void *)(DST) + (size_t)i * (size_t)(COLS),  \
                           (size_t)(COLS));                                                                        \
        else                                                                                                       \
            dt__gather_f64(t, dt__at(SRC, i * (RS), es), CS, (double *)(void *)(DST) + (size_t)i * (size_t)(COLS), \
                           (size_t)(COLS));                                                                        \
    }
    if (pa) {
        DT__PACK_ROWS(m, k, a, rsa, csa, pm)
        a = pm;
        rsa = k;
        csa = 1;
    }
    if (pb) {
        DT__PACK_ROWS(k, n, b, rsb, csb, pm + na * es)
        b = pm + na * es;
        rsb = n;
        csb = 1;
    }
    if (pc && beta != 0.0) DT__PACK_ROWS(m, n, c, rsc, csc, pm + (na + nb) * es)
#undef DT__PACK_ROWS
    ok = dt__gemm_lib(t, m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, pc ? (void *)(pm + (na + nb) * es) : c,
                      pc ? n : rsc, pc ? 1 : csc);
    if (ok && pc)
        for (i = 0; i < m; i++) {
            if (t == DT_F32)
                dt__scatter_f32(t, (const float *)(void *)(pm + (na + nb) * es) + (size_t)i * (size_t)n,
                                dt__at_mut(c, i * rsc, es), csc, (size_t)n);
            else
                dt__scatter_f64(t, (const double *)(void *)(pm + (na + nb) * es) + (size_t)i * (size_t)n,
                                dt__at_mut(c, i * rsc, es), csc, (size_t)n);
        }
    DT_FREE(mem);
    if (ok) dt__gemm_count[1]++;
    return ok;
}

/* F16/BF16: A, B (and C when beta != 0) widened into contiguous F32 copies,
   one sgemm, C narrowed back */
static dt_status dt__gemm_half_widened(dt_dtype t, int64_t m, int64_t n, int64_t k, double alpha, const void *a,
                                      int64_t rsa, int64_t csa, const void *b, int64_t rsb, int64_t csb, double beta,
                                      void *c, int64_t rsc, int64_t csc) {
    size_t es = dt_dtype_size(t), na = (size_t)m * (size_t)k, nb = (size_t)k * (size_t)n, nc = (size_t)m * (size_t)n;
    float *af, *bf, *cf;
    void *mem = NULL;
    int64_t i;
    dt_status st;
    if (na / (size_t)m != (size_t)k || nb / (size_t)k != (size_t)n || nc / (size_t)m != (size_t)n ||
        na + nb + nc < na || (na + nb + nc) > SIZE_MAX / sizeof(float))
        return dt__fail(DT_ERR_NOMEM, "dt gemm: %lld x %lld x %lld F32 copy does not fit in memory", (long long)m,
                        (long long)n, (long long)k);
    if ((st = dt__alloc("dt gemm", (na + nb + nc) * sizeof(float), &mem))) return st;
    af = (float *)mem;
    bf = af + na;
    cf = bf + nb;
    for (i = 0; i < m; i++) dt__gather_f32(t, dt__at(a, i * rsa, es), csa, af + (size_t)i * (size_t)k, (size_t)k);
    for (i = 0; i < k; i++) dt__gather_f32(t, dt__at(b, i * rsb, es), csb, bf + (size_t)i * (size_t)n, (size_t)n);
    if (beta != 0.0)
        for (i = 0; i < m; i++) dt__gather_f32(t, dt__at(c, i * rsc, es), csc, cf + (size_t)i * (size_t)n, (size_t)n);
    if (dt__gemm_lib(DT_F32, m, n, k, alpha, af, k, 1, bf, n, 1, beta, cf, n, 1))
        dt__gemm_count[0]++;
    else if ((st = dt__gemm_loop_f32(DT_F32, m, n, k, (float)alpha, af, k, 1, bf, n, 1, (float)beta, beta == 0.0, cf, n,
                                     1))) {
        DT_FREE(mem);
        return st;
    }
    for (i = 0; i < m; i++) dt__scatter_f32(t, cf + (size_t)i * (size_t)n, dt__at_mut(c, i * rsc, es), csc, (size_t)n);
    DT_FREE(mem);
    return DT_OK;
}
#endif

/* which local GEMM this build runs (for the tests and benchmarks) */
static DT__MAYBE_UNUSED const char *dt__gemm_backend(void) {
#if DT__BLAS == 0
    return "none";
#else
#if DT__BLAS_WEAK
    if (!dt__blas_linked()) return "none (no BLAS linked)";
#endif
    return DT__BLAS == 1 || DT__BLAS_F77_OF_BLIS ? "blis" : DT__BLAS == 2 ? "cblas" : "f77";
#endif
}

/* complex C = alpha A B + beta C by loops (no BLAS, small, or strides the
   BLAS cannot take): each C element a dot product of pairs in double (C64
   rounded once at the end); beta == 0: C is not read */
/* C[i, j] of a complex GEMM: the pairs' products summed in double (the
   device's loop kernel runs this very function) */
DT__HD void dt__gemm_cx_elem(dt_dtype t, int64_t i, int64_t j, int64_t k, double alpha, const void *a, int64_t rsa,
                             int64_t csa, const void *b, int64_t rsb, int64_t csb, double beta, void *c, int64_t rsc,
                             int64_t csc) {
    dt__cx acc = dt__cx_make(0.0, 0.0), r;
    int64_t p;
    for (p = 0; p < k; p++) {
        dt__cx x = dt__cx_mul(dt__cx_load(t, a, i * rsa + p * csa), dt__cx_load(t, b, p * rsb + j * csb));
        acc.re += x.re;
        acc.im += x.im;
    }
    r = dt__cx_make(alpha * acc.re, alpha * acc.im);
    if (beta != 0.0) {
        dt__cx old = dt__cx_load(t, c, i * rsc + j * csc);
        r.re += beta * old.re;
        r.im += beta * old.im;
    }
    dt__cx_store(t, c, i * rsc + j * csc, r);
}

static void dt__gemm_loop_cx(dt_dtype t, int64_t m, int64_t n, int64_t k, double alpha, const void *a, int64_t rsa,
                             int64_t csa, const void *b, int64_t rsb, int64_t csb, double beta, void *c, int64_t rsc,
                             int64_t csc) {
    int64_t i, j;
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++) dt__gemm_cx_elem(t, i, j, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc);
}

/* complex through the BLAS's cgemm/zgemm when it takes the strides as they
   are (no packing of pairs: the loops run otherwise); counted as the real
   calls are (dt__gemm_count) */
static dt_status dt__gemm_cx(dt_dtype t, int64_t m, int64_t n, int64_t k, double alpha, const void *a, int64_t rsa,
                             int64_t csa, const void *b, int64_t rsb, int64_t csb, double beta, void *c, int64_t rsc,
                             int64_t csc) {
#if DT__BLAS != 0
    int small = (double)m * (double)n * (double)k <= DT__GEMM_SMALL;
    if (DT__WITH_BLAS_CX(k > 0 && !small) &&
        dt__gemm_lib(t, m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc)) {
        dt__gemm_count[0]++;
        return DT_OK;
    }
    dt__gemm_count[2]++;
#endif
    dt__gemm_loop_cx(t, m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc);
    return DT_OK;
}

static dt_status dt__k_gemm(dt_dtype t, int64_t m, int64_t n, int64_t k, double alpha, const void *a, int64_t rsa,
                            int64_t csa, const void *b, int64_t rsb, int64_t csb, double beta, void *c, int64_t rsc,
                            int64_t csc) {
    int beta_zero = beta == 0.0;
    /* below ~16^3 multiply-adds a BLAS call (pack buffers, its thread
       dispatch) costs microseconds; the loops take nanoseconds */
    int small = (double)m * (double)n * (double)k <= DT__GEMM_SMALL;
    (void)small; /* (unused without a BLAS) */
    if (m <= 0 || n <= 0) return DT_OK;
    if (k <= 0) alpha = 0.0; /* C = beta C: the loops with no products (alpha * 0 could be NaN) */
    if (dt__is_complex(t)) return dt__gemm_cx(t, m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc);
    switch (dt__work_kind(t)) {
    case DT__WK_F64:
#if DT__BLAS != 0
        if (DT__WITH_BLAS(k > 0 && !small) &&
            dt__gemm_blas(t, m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc))
            return DT_OK;
        dt__gemm_count[2]++;
#endif
        return dt__gemm_loop_f64(t, m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, beta_zero, c, rsc, csc);
    case DT__WK_F32:
#if DT__BLAS != 0
        if (DT__WITH_BLAS(k > 0 && !small && t == DT_F32) &&
            dt__gemm_blas(t, m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc))
            return DT_OK;
        if (DT__WITH_BLAS(k > 0 && !small && t != DT_F32))
            return dt__gemm_half_widened(t, m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc);
        dt__gemm_count[2]++;
#endif
        return dt__gemm_loop_f32(t, m, n, k, (float)alpha, a, rsa, csa, b, rsb, csb, (float)beta, beta_zero, c, rsc,
                                 csc);
    default:
        return dt__gemm_loop_i64(t, m, n, k, dt__i64_of(alpha), a, rsa, csa, b, rsb, csb, dt__i64_of(beta), beta_zero,
                                 c, rsc, csc);
    }
}

/* >>philox ----------------------------------------------------------------
   Philox4x32-10 fills for the random ops, the kernel table's rng.
   The element with global row-major index g reads the words at stream
   positions offset + w*g, so the kernel walks the spans of the local box
   that are contiguous in the global index space and generates exactly
   their words: O(local) work. Philox's 32x32->64 multiplies do not auto-vectorise well (GCC 12
   at -O2/-O3 made them 0.7-1.2x the scalar loop, measured), so on x86-64
   with GCC/Clang the block generator is written with AVX2 / AVX-512F
   intrinsics in 64-bit lanes (vpmuludq gives the full product of each
   lane's low 32 bits, no even/odd shuffles), chosen at run time; the
   word -> value loops run over fixed-size chunks the compiler vectorises.
   DTENSOR_SIMD=avx2 / =none (environment, read once) caps the path: the
   values are the same on every path. */

/* (the constants DT__PX_M0 & co., one block dt__philox and dt__px_word_at: >>math) */
#define DT__PX_CH 48          /* words handed to the value loops per step (a multiple of 4) */
#define DT__PX_NB 24          /* blocks per generator call: a step's words, + 1 for an unaligned start */

#if !defined(DTENSOR_NO_SIMD) && !defined(__CUDACC__) && defined(__x86_64__) && \
    (defined(__GNUC__) || defined(__clang__))
#define DT__PX_X86 1
#include <immintrin.h>
#endif

/* generators: blocks b, b+1, ... (counter word 2 = 0), 4 words each, in order */
typedef void (*dt__px_gen_fn)(uint32_t k0, uint32_t k1, uint64_t b, uint32_t *out);

/* two blocks in lockstep: their multiplies overlap instead of waiting on one chain */
static void dt__px_gen_scalar2(uint32_t k0, uint32_t k1, uint64_t b, uint32_t *out) {
    uint32_t a0 = (uint32_t)b, a1 = (uint32_t)(b >> 32), a2 = 0, a3 = 0;
    uint32_t b0 = (uint32_t)(b + 1), b1 = (uint32_t)((b + 1) >> 32), b2 = 0, b3 = 0;
    int r;
    for (r = 0; r < 10; r++) {
        DT__PX_SROUND(a0, a1, a2, a3, k0, k1);
        DT__PX_SROUND(b0, b1, b2, b3, k0, k1);
        k0 += DT__PX_W0;
        k1 += DT__PX_W1;
    }
    out[0] = a0; out[1] = a1; out[2] = a2; out[3] = a3;
    out[4] = b0; out[5] = b1; out[6] = b2; out[7] = b3;
}

static void dt__px_gen_scalar(uint32_t k0, uint32_t k1, uint64_t b, uint32_t *out) {
    int i;
    for (i = 0; i < DT__PX_NB; i += 2) dt__px_gen_scalar2(k0, k1, b + (uint64_t)i, out + 4 * i);
}

#ifdef DT__PX_X86
/* State in 64-bit lanes, one block per lane, three independent groups for
   the multiplier's latency. Only the low 32 bits of a lane are the word:
   the multiply ignores the high half, so the garbage there is masked off
   once, at the output, instead of every round. */
#define DT__PX_ROUND(MUL, SRL, XOR, a0, a1, a2, a3)                              \
    do {                                                                         \
        p0 = MUL(a0, m0); p1 = MUL(a2, m1);                                      \
        a0 = XOR(XOR(SRL(p1, 32), a1), kk0); a1 = p1;                            \
        a2 = XOR(XOR(SRL(p0, 32), a3), kk1); a3 = p0;                            \
    } while (0)

__attribute__((target("avx2"))) static void dt__px_gen_avx2_12(uint32_t k0, uint32_t k1, uint64_t b, uint32_t *out) {
    /* 12 blocks: 3 groups of 4 */
    const __m256i m0 = _mm256_set1_epi64x(DT__PX_M0), m1 = _mm256_set1_epi64x(DT__PX_M1);
    const __m256i lo32 = _mm256_set1_epi64x(0xffffffffLL), z = _mm256_setzero_si256(), four = _mm256_set1_epi64x(4);
    __m256i c = _mm256_add_epi64(_mm256_set1_epi64x((long long)b), _mm256_set_epi64x(3, 2, 1, 0));
    __m256i a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, p0, p1, kk0, kk1;
    int r;
    a0 = _mm256_and_si256(c, lo32); a1 = _mm256_srli_epi64(c, 32); a2 = z; a3 = z; c = _mm256_add_epi64(c, four);
    b0 = _mm256_and_si256(c, lo32); b1 = _mm256_srli_epi64(c, 32); b2 = z; b3 = z; c = _mm256_add_epi64(c, four);
    c0 = _mm256_and_si256(c, lo32); c1 = _mm256_srli_epi64(c, 32); c2 = z; c3 = z;
    for (r = 0; r < 10; r++) {
        kk0 = _mm256_set1_epi64x(k0);
        kk1 = _mm256_set1_epi64x(k1);
        DT__PX_ROUND(_mm256_mul_epu32, _mm256_srli_epi64, _mm256_xor_si256, a0, a1, a2, a3);
        DT__PX_ROUND(_mm256_mul_epu32, _mm256_srli_epi64, _mm256_xor_si256, b0, b1, b2, b3);
        DT__PX_ROUND(_mm256_mul_epu32, _mm256_srli_epi64, _mm256_xor_si256, c0, c1, c2, c3);
        k0 += DT__PX_W0;
        k1 += DT__PX_W1;
    }
#define DT__PX_OUT2(x0, x1, x2, x3, o)                                                          \
    do {                                                                                        \
        __m256i lo = _mm256_or_si256(_mm256_and_si256(x0, lo32), _mm256_slli_epi64(x1, 32));    \
        __m256i hi = _mm256_or_si256(_mm256_and_si256(x2, lo32), _mm256_slli_epi64(x3, 32));    \
        __m256i u = _mm256_unpacklo_epi64(lo, hi), v = _mm256_unpackhi_epi64(lo, hi);            \
        _mm256_storeu_si256((__m256i *)(void *)(o), _mm256_permute2x128_si256(u, v, 0x20));      \
        _mm256_storeu_si256((__m256i *)(void *)((o) + 8), _mm256_permute2x128_si256(u, v, 0x31)); \
    } while (0)
    DT__PX_OUT2(a0, a1, a2, a3, out);
    DT__PX_OUT2(b0, b1, b2, b3, out + 16);
    DT__PX_OUT2(c0, c1, c2, c3, out + 32);
#undef DT__PX_OUT2
}

/* the maskz forms: the plain ones start from _mm512_undefined_epi32(), which
   g++ -Wall flags as self-initialised (GCC 12); all-ones masks, same result */
#define DT__PX_MUL512(a, b) _mm512_maskz_mul_epu32((__mmask8)0xff, a, b)
#define DT__PX_SRL512(a, n) _mm512_maskz_srli_epi64((__mmask8)0xff, a, n)
#define DT__PX_SLL512(a, n) _mm512_maskz_slli_epi64((__mmask8)0xff, a, n)
static void dt__px_gen_avx2(uint32_t k0, uint32_t k1, uint64_t b, uint32_t *out) {
    dt__px_gen_avx2_12(k0, k1, b, out);
    dt__px_gen_avx2_12(k0, k1, b + 12, out + 48);
}

__attribute__((target("avx512f"))) static void dt__px_gen_avx512(uint32_t k0, uint32_t k1, uint64_t b, uint32_t *out) {
    /* 24 blocks: 3 groups of 8 */
    const __m512i m0 = _mm512_set1_epi64(DT__PX_M0), m1 = _mm512_set1_epi64(DT__PX_M1);
    const __m512i lo32 = _mm512_set1_epi64(0xffffffffLL), z = _mm512_setzero_si512(), eight = _mm512_set1_epi64(8);
    const __m512i first = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), second = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    __m512i c = _mm512_add_epi64(_mm512_set1_epi64((long long)b), _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
    __m512i a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, p0, p1, kk0, kk1;
    int r;
    a0 = _mm512_and_si512(c, lo32); a1 = DT__PX_SRL512(c, 32); a2 = z; a3 = z; c = _mm512_add_epi64(c, eight);
    b0 = _mm512_and_si512(c, lo32); b1 = DT__PX_SRL512(c, 32); b2 = z; b3 = z; c = _mm512_add_epi64(c, eight);
    c0 = _mm512_and_si512(c, lo32); c1 = DT__PX_SRL512(c, 32); c2 = z; c3 = z;
    for (r = 0; r < 10; r++) {
        kk0 = _mm512_set1_epi64(k0);
        kk1 = _mm512_set1_epi64(k1);
        DT__PX_ROUND(DT__PX_MUL512, DT__PX_SRL512, _mm512_xor_si512, a0, a1, a2, a3);
        DT__PX_ROUND(DT__PX_MUL512, DT__PX_SRL512, _mm512_xor_si512, b0, b1, b2, b3);
        DT__PX_ROUND(DT__PX_MUL512, DT__PX_SRL512, _mm512_xor_si512, c0, c1, c2, c3);
        k0 += DT__PX_W0;
        k1 += DT__PX_W1;
    }
    /* lo = words 0,1 of blocks 0..7, hi = words 2,3: interleave them per block */
#define DT__PX_OUT4(x0, x1, x2, x3, o)                                                         \
    do {                                                                                       \
        __m512i lo = _mm512_or_si512(_mm512_and_si512(x0, lo32), DT__PX_SLL512(x1, 32));   \
        __m512i hi = _mm512_or_si512(_mm512_and_si512(x2, lo32), DT__PX_SLL512(x3, 32));   \
        _mm512_storeu_si512((void *)(o), _mm512_permutex2var_epi64(lo, first, hi));           \
        _mm512_storeu_si512((void *)((o) + 16), _mm512_permutex2var_epi64(lo, second, hi));   \
    } while (0)
    DT__PX_OUT4(a0, a1, a2, a3, out);
    DT__PX_OUT4(b0, b1, b2, b3, out + 32);
    DT__PX_OUT4(c0, c1, c2, c3, out + 64);
#undef DT__PX_OUT4
}
#undef DT__PX_ROUND
#endif /* DT__PX_X86 */

/* the widest generator this CPU runs (capped by DTENSOR_SIMD); read once */
static void dt__px_pick(dt__px_gen_fn *gen) {
    static int level = -1; /* 0 scalar, 1 avx2, 2 avx512 */
    if (level < 0) {
        const char *cap = getenv("DTENSOR_SIMD");
        int lv = 0;
#ifdef DT__PX_X86
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2")) lv = 1;
        if (__builtin_cpu_supports("avx512f")) lv = 2;
#endif
        if (cap && (!strcmp(cap, "none") || !strcmp(cap, "0") || !strcmp(cap, "scalar"))) lv = 0;
        else if (cap && !strcmp(cap, "avx2") && lv > 1) lv = 1;
        level = lv;
    }
    *gen = dt__px_gen_scalar;
#ifdef DT__PX_X86
    if (level == 2) *gen = dt__px_gen_avx512;
    if (level == 1) *gen = dt__px_gen_avx2;
#endif
}

/* A window on the stream: generated blocks [b, b + nblk), kept so that
   short spans close together (a box sharded along the last dim) share them. */
typedef struct dt__px {
    uint32_t k0, k1;
    dt__px_gen_fn gen;
    int have;                          /* buf holds blocks from `b`            */
    uint64_t b;
    uint32_t buf[4 * DT__PX_NB];
} dt__px;

static void dt__px_init(dt__px *s, uint64_t seed) {
    s->k0 = (uint32_t)seed;
    s->k1 = (uint32_t)(seed >> 32);
    dt__px_pick(&s->gen);
    s->have = 0;
    s->b = 0;
}

/* DT__PX_CH consecutive words starting at stream position `pos` */
static const uint32_t *dt__px_words(dt__px *s, uint64_t pos) {
    uint64_t b = pos >> 2, last = (pos + DT__PX_CH - 1) >> 2;
    /* the window must hold [pos, pos + CH): blocks b .. last */
    if (!s->have || b < s->b || last >= s->b + DT__PX_NB) {
        s->gen(s->k0, s->k1, b, s->buf);
        s->b = b;
        s->have = 1;
    }
    return s->buf + (size_t)(pos - 4 * s->b);
}

/* (words -> values, dt__w64/u24/u53 and dt__down_*: >>math) */

/* store n values of working type (float for F32/F16/BF16, double for F64) as t */
static void dt__rng_store_f(dt_dtype t, const float *v, void *y, size_t i0, size_t n) {
    if (t == DT_F32) memcpy((float *)y + i0, v, n * sizeof(float));
    else dt__narrow_half(t, v, (uint16_t *)y + i0, n);
}

/* uniform [a, b) for the general bounds; the fast [0,1) paths are below */
static void dt__rng_uniform(const dt__rng_op *op, const uint32_t *wv, void *y, size_t i0, size_t n) {
    double lo = op->a, width = op->b - op->a;
    size_t i;
    if (op->t == DT_F64) {
        double *o = (double *)y + i0;
        if (lo == 0 && width == 1) {
            double v[DT__PX_CH / 2];
            if (n == DT__PX_CH / 2) {
                for (i = 0; i < DT__PX_CH / 2; i++) v[i] = dt__u53(dt__w64(wv + 2 * i));
                memcpy(o, v, sizeof v);
            } else
                for (i = 0; i < n; i++) o[i] = dt__u53(dt__w64(wv + 2 * i));
            return;
        }
        for (i = 0; i < n; i++) {
            double v = lo + width * dt__u53(dt__w64(wv + 2 * i));
            while (v >= op->b) v = dt__down_f64(v);
            o[i] = v;
        }
        return;
    }
    if (op->t == DT_F32 && lo == 0 && width == 1) { /* the hot path: exact, never reaches 1 */
        float v[DT__PX_CH];
        if (n == DT__PX_CH) {
            for (i = 0; i < DT__PX_CH; i++) v[i] = dt__u24(wv[i]);
            memcpy((float *)y + i0, v, sizeof v);
        } else
            for (i = 0; i < n; i++) ((float *)y)[i0 + i] = dt__u24(wv[i]);
        return;
    }
    {
        float v[DT__PX_CH] = {0}; /* (only to quiet -Wmaybe-uninitialized) */
        for (i = 0; i < n; i++) v[i] = (float)(lo + width * (double)dt__u24(wv[i]));
        dt__rng_store_f(op->t, v, y, i0, n);
        for (i = 0; i < n; i++) { /* rounding may reach hi: step down (rare) */
            if (op->t == DT_F32) {
                float *o = (float *)y + i0 + i;
                while ((double)*o >= op->b) *o = dt__down_f32(*o);
            } else {
                uint16_t *o = (uint16_t *)y + i0 + i;
                while ((double)(op->t == DT_F16 ? dt__h2f(*o) : dt__b2f(*o)) >= op->b) *o = dt__down_half(*o);
            }
        }
    }
}

/* Box-Muller: dt__bm_pair_f / dt__bm_pair_d (>>math, the GPU's too) */
/* Box-Muller over npairs pairs into z[2k], z[2k+1] (working precision) */
static void dt__rng_normal_f(const uint32_t *wv, float *z, size_t npairs) {
    size_t k;
    for (k = 0; k < npairs; k++) dt__bm_pair_f(wv[2 * k], wv[2 * k + 1], &z[2 * k], &z[2 * k + 1]);
}
static void dt__rng_normal_d(const uint32_t *wv, double *z, size_t npairs) {
    size_t k;
    for (k = 0; k < npairs; k++) dt__bm_pair_d(dt__w64(wv + 4 * k), dt__w64(wv + 4 * k + 2), &z[2 * k], &z[2 * k + 1]);
}

/* keep flags: u < p as an integer compare (u24 < thr, u53 < thr) */
static void dt__rng_keep(const dt__rng_op *op, const uint32_t *wv, uint8_t *keep, size_t n) {
    size_t i;
    if (op->w == 1) {
        uint32_t thr = (uint32_t)op->thr;
        for (i = 0; i < n; i++) keep[i] = (uint8_t)((wv[i] >> 8) < thr);
    } else
        for (i = 0; i < n; i++) keep[i] = (uint8_t)((dt__w64(wv + 2 * i) >> 11) < op->thr);
}

static void dt__rng_store_int(dt_dtype t, const int64_t *v, void *y, size_t i0, size_t n) {
    size_t i;
    switch (t) {
    case DT_F32: for (i = 0; i < n; i++) ((float *)y)[i0 + i] = (float)v[i]; break;
    case DT_F64: for (i = 0; i < n; i++) ((double *)y)[i0 + i] = (double)v[i]; break;
    case DT_F16: for (i = 0; i < n; i++) ((uint16_t *)y)[i0 + i] = dt__f2h((float)v[i]); break;
    case DT_BF16: for (i = 0; i < n; i++) ((uint16_t *)y)[i0 + i] = dt__f2b((float)v[i]); break;
    case DT_I32: for (i = 0; i < n; i++) ((int32_t *)y)[i0 + i] = (int32_t)v[i]; break;
    case DT_I64: for (i = 0; i < n; i++) ((int64_t *)y)[i0 + i] = v[i]; break;
    case DT_U8: for (i = 0; i < n; i++) ((uint8_t *)y)[i0 + i] = (uint8_t)v[i]; break;
    case DT_C64: case DT_C128: break; /* never: randint is refused on complex */
    }
}

/* 0/1 flags as t's 0 and 1 */
static void dt__rng_store_flags(dt_dtype t, const uint8_t *k, void *y, size_t i0, size_t n) {
    size_t i;
    switch (t) {
    case DT_F32: for (i = 0; i < n; i++) ((float *)y)[i0 + i] = (float)k[i]; break;
    case DT_F64: for (i = 0; i < n; i++) ((double *)y)[i0 + i] = (double)k[i]; break;
    case DT_F16: for (i = 0; i < n; i++) ((uint16_t *)y)[i0 + i] = (uint16_t)(k[i] ? 0x3c00u : 0u); break;
    case DT_BF16: for (i = 0; i < n; i++) ((uint16_t *)y)[i0 + i] = (uint16_t)(k[i] ? 0x3f80u : 0u); break;
    case DT_I32: for (i = 0; i < n; i++) ((int32_t *)y)[i0 + i] = k[i]; break;
    case DT_I64: for (i = 0; i < n; i++) ((int64_t *)y)[i0 + i] = k[i]; break;
    case DT_U8: memcpy((uint8_t *)y + i0, k, n); break;
    case DT_C64: case DT_C128: break; /* never: bernoulli is refused on complex */
    }
}

/* Lemire's bounded draw with redraws (dt__px_bounded, >>math) */
static uint64_t dt__rng_bounded(const dt__px *s, const dt__rng_op *op, uint64_t pos, uint64_t x) {
    return dt__px_bounded(s->k0, s->k1, op->w, op->range, pos, x);
}

/* element values for elements [i0, i0+n) of the local buffer y from the
   words wv (w*n of them, the first at stream position pos) */
static void dt__rng_chunk(dt__px *s, const dt__rng_op *op, const uint32_t *wv, uint64_t pos, void *y, size_t i0, size_t n) {
    size_t i;
    switch (op->kind) {
    case DT__RK_UNIFORM: dt__rng_uniform(op, wv, y, i0, n); break;
    case DT__RK_NORMAL: break; /* pairs: dt__rng_span_normal */
    case DT__RK_BERNOULLI: {
        uint8_t keep[DT__PX_CH];
        dt__rng_keep(op, wv, keep, n);
        dt__rng_store_flags(op->t, keep, y, i0, n);
        break;
    }
    case DT__RK_RANDINT: {
        int64_t v[DT__PX_CH];
        for (i = 0; i < n; i++) {
            uint64_t x = op->w == 1 ? wv[i] : dt__w64(wv + 2 * i);
            v[i] = (int64_t)((uint64_t)op->lo + dt__rng_bounded(s, op, pos + (uint64_t)op->w * i, x));
        }
        dt__rng_store_int(op->t, v, y, i0, n);
        break;
    }
    case DT__RK_DROPOUT: {
        uint8_t keep[DT__PX_CH];
        dt__rng_keep(op, wv, keep, n);
        if (op->mask) memcpy((uint8_t *)op->mask + i0, keep, n);
        if (op->t == DT_F64) {
            const double *x = (const double *)op->x + i0;
            double *o = (double *)y + i0, sc = op->b > 0 ? 1.0 / op->b : 0.0;
            for (i = 0; i < n; i++) o[i] = keep[i] ? x[i] * sc : 0.0;
        } else {
            float v[DT__PX_CH], sc = op->b > 0 ? (float)(1.0 / op->b) : 0.0f;
            if (op->t == DT_F32) memcpy(v, (const float *)op->x + i0, n * sizeof(float));
            else dt__widen_half(op->t, (const uint16_t *)op->x + i0, v, n);
            for (i = 0; i < n; i++) v[i] = keep[i] ? v[i] * sc : 0.0f;
            dt__rng_store_f(op->t, v, y, i0, n);
        }
        break;
    }
    }
}

/* normals for global elements [g, g+n) into y[i0..]: whole pairs are drawn
   and the elements of this span kept */
static void dt__rng_span_normal(dt__px *s, const dt__rng_op *op, uint64_t offset, uint64_t g, size_t n, void *y, size_t i0) {
    uint64_t ga = g & ~(uint64_t)1, end = g + n;
    size_t per = (size_t)(DT__PX_CH / op->w); /* elements (an even number) per step */
    while (ga < end) {
        const uint32_t *wv = dt__px_words(s, offset + (uint64_t)op->w * ga);
        size_t k, from = g > ga ? (size_t)(g - ga) : 0, to = end - ga < per ? (size_t)(end - ga) : per;
        if (op->t == DT_F64) {
            double z[DT__PX_CH / 2], *o = (double *)y + i0;
            dt__rng_normal_d(wv, z, (to + 1) / 2);
            for (k = from; k < to; k++) o[ga + k - g] = op->a + op->b * z[k];
        } else {
            float z[DT__PX_CH], mean = (float)op->a, sd = (float)op->b;
            dt__rng_normal_f(wv, z, (to + 1) / 2);
            for (k = from; k < to; k++) z[k] = mean + sd * z[k];
            dt__rng_store_f(op->t, z + from, y, (size_t)(i0 + (ga + from - g)), to - from);
        }
        ga += per;
    }
}

/* one span: global elements [g, g+n) are local elements [i0, i0+n) */
static void dt__rng_span(dt__px *s, const dt__rng_op *op, uint64_t offset, uint64_t g, size_t n, void *y, size_t i0) {
    size_t per = (size_t)(DT__PX_CH / op->w), i = 0;
    if (op->kind == DT__RK_NORMAL) { dt__rng_span_normal(s, op, offset, g, n, y, i0); return; }
    while (i < n) {
        size_t k = n - i < per ? n - i : per;
        uint64_t pos = offset + (uint64_t)op->w * (g + i);
        dt__rng_chunk(s, op, dt__px_words(s, pos), pos, y, i0 + i, k);
        i += k;
    }
}

/* Walk the local box as spans contiguous in the global row-major order: the
   trailing dims the box spans completely merge into one span. */
static void dt__k_rng(const dt__rng_op *op, int nd, const int64_t *gs, const int64_t *lo, const int64_t *ext,
                      void *y) {
    int d0 = nd - 1, d;
    int64_t idx[DT_MAX_DIMS] = {0};
    size_t span = 1, nspans = 1, r;
    dt__px s;
    for (d = 0; d < nd; d++)
        if (!ext[d]) return;
    dt__px_init(&s, op->seed);
    if (nd == 0) { dt__rng_span(&s, op, op->offset, 0, 1, y, 0); return; }
    while (d0 > 0 && lo[d0] == 0 && ext[d0] == gs[d0]) d0--;
    for (d = d0; d < nd; d++) span *= (size_t)ext[d];
    for (d = 0; d < d0; d++) nspans *= (size_t)ext[d];
    for (r = 0; r < nspans; r++) {
        uint64_t g = 0;
        for (d = 0; d < nd; d++) g = g * (uint64_t)gs[d] + (uint64_t)(lo[d] + (d < d0 ? idx[d] : 0));
        dt__rng_span(&s, op, op->offset, g, span, y, r * span);
        for (d = d0 - 1; d >= 0; d--) { /* next span: odometer over the leading dims */
            if (++idx[d] < ext[d]) break;
            idx[d] = 0;
        }
    }
}

/* >>device ----------------------------------------------------------------
   Where a tensor's bytes live. Device 0 is host memory; dtensor_cuda.h adds
   DT_CUDA. Everything the library does to a shard's bytes goes through the
   tensor's device: allocation, copies (either side may be host memory),
   zeroing, the strided box copy that packs and unpacks redistribution
   pieces, and the compute kernels (dt__kernels, >>kernels). A device whose
   memory the communication backend cannot take (plain MPI and CUDA) is
   staged through host buffers (>>redistribute). */
struct dt__kernels;

/* the host device's kernels (>>kernels, >>gemm, >>philox) */
static const dt__kernels dt__host_kernels = { dt__k_unary, dt__k_cast, dt__k_binary, dt__k_reduce, dt__k_softmax, dt__k_norm, dt__k_gemm, dt__k_permute, dt__k_embedding, dt__k_xent, dt__k_rng, dt__avg_split, dt__avg_join };
static const struct dt__kernels *dt__host_kernels_get(void) { return &dt__host_kernels; }

typedef struct dt__device {
    const char *name;
    /* bytes > 0 of this device's memory; DT_ERR_NOMEM / DT_ERR_DEVICE naming fn */
    dt_status (*alloc)(const char *fn, size_t bytes, void **p);
    void (*free)(void *p); /* p may be NULL */
    /* dst <- src; either may be host memory or this device's memory. Returns
       once host memory involved is safe to read or reuse. */
    dt_status (*copy)(const char *fn, void *dst, const void *src, size_t bytes);
    dt_status (*zero)(const char *fn, void *p, size_t bytes);
    /* dt__copy_box's contract, both arrays in this device's memory */
    dt_status (*copy_box)(const char *fn, const dt__array *s, const dt__array *d, const dt__box *p);
    /* host buffers for staging (pinned where the device has it); NULL: DT_MALLOC */
    dt_status (*alloc_host)(const char *fn, size_t bytes, void **p);
    void (*free_host)(void *p);
    /* is p this device's memory? 1 yes, 0 no (then copies treat it as host memory) */
    int (*owns)(const void *p);
    /* wait until the device's queued work is done; report asynchronous
       errors of the kernels (which return void) as DT_ERR_DEVICE naming fn */
    dt_status (*sync)(const char *fn);
    const struct dt__kernels *(*kernels)(void);
    /* dt__copy_box_op's contract with op >= 0 (d = d op s over box p, op a
       dt_reduce SUM/MAX/MIN for dtype t; complex SUM only), both arrays in
       this device's memory: dt_tensor_redistribute_reduce's combining */
    dt_status (*copy_box_op)(const char *fn, const dt__array *s, const dt__array *d, const dt__box *p, dt_dtype t,
                             int op);
} dt__device;

#define DT__MAX_DEVICES 4
static const dt__device *dt__devices[DT__MAX_DEVICES];

/* dtensor_cuda.h and tests register devices 1..DT__MAX_DEVICES-1 */
DT__MAYBE_UNUSED static void dt__device_register(int id, const dt__device *d) {
    if (id > 0 && id < DT__MAX_DEVICES) dt__devices[id] = d;
}

static void dt__host_free(void *p) { DT_FREE(p); }
static dt_status dt__host_copy(const char *fn, void *dst, const void *src, size_t bytes) {
    (void)fn;
    if (bytes && dst != src) memcpy(dst, src, bytes);
    return DT_OK;
}
static dt_status dt__host_zero(const char *fn, void *p, size_t bytes) {
    (void)fn;
    if (bytes) memset(p, 0, bytes);
    return DT_OK;
}
static dt_status dt__host_copy_box(const char *fn, const dt__array *s, const dt__array *d, const dt__box *p) {
    (void)fn;
    dt__copy_box(s, d, p);
    return DT_OK;
}
static dt_status dt__host_copy_box_op(const char *fn, const dt__array *s, const dt__array *d, const dt__box *p,
                                      dt_dtype t, int op) {
    (void)fn;
    dt__copy_box_op(s, d, p, t, op);
    return DT_OK;
}
static int dt__host_owns(const void *p) { (void)p; return 1; }
static dt_status dt__host_sync(const char *fn) { (void)fn; return DT_OK; }

static const dt__device dt__host_device = { "host", dt__alloc, dt__host_free, dt__host_copy, dt__host_zero,
                                            dt__host_copy_box, dt__alloc, dt__host_free, dt__host_owns,
                                            dt__host_sync, dt__host_kernels_get, dt__host_copy_box_op };

#ifdef DT__CUDA_BUILD
static const dt__device *dt__cuda_device(void); /* dtensor_cuda.h */
#endif

/* NULL: no such device in this build */
DT__MAYBE_UNUSED static const dt__device *dt__device_of(int id) {
    if (id == DT_HOST) return &dt__host_device;
#ifdef DT__CUDA_BUILD
    if (id == DT_CUDA) return dt__cuda_device();
#endif
    if (id > 0 && id < DT__MAX_DEVICES) return dt__devices[id];
    return NULL;
}

DT__MAYBE_UNUSED static int dt__on_host(const dt__device *d) { return d == &dt__host_device; }

static dt_status dt__pack_on(const dt__device *dev, const dt__array *a, const dt__box *piece, void *buf) {
    dt__array b;
    b.data = (char *)buf; b.ndim = a->ndim; b.es = a->es; b.box = *piece; b.stride = NULL;
    return dev->copy_box("dt_tensor_redistribute (pack)", a, &b, piece);
}

/* d = d (acc) s over box p on dev (acc >= 0: dt_tensor_redistribute_reduce's
   combining; every array in dev's memory), or a plain box copy (acc < 0) */
static dt_status dt__combine_on(const dt__device *dev, const dt__array *s, const dt__array *d, const dt__box *p,
                                dt_dtype t, int acc) {
    if (acc < 0) return dev->copy_box("dt_tensor_redistribute", s, d, p);
    return dev->copy_box_op("dt_tensor_redistribute_reduce", s, d, p, t, acc);
}

static void dt__dev_cast(const dt__device *dev, dt_dtype from, const void *src, dt_dtype to, void *dst, size_t n) {
    dev->kernels()->cast(from, src, to, dst, n);
}

/* buf[i] /= *divisor (a dtype-t value in dev's memory) */
static void dt__dev_divide(const dt__device *dev, dt_dtype t, void *buf, size_t n, const void *divisor) {
    int64_t len = (int64_t)n, one = 1, zero = 0;
    dev->kernels()->binary(DT__B_DIV, t, 1, &len, buf, &one, divisor, &zero, buf, 0);
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
/* The tags of started messages, one per kind of exchange, so that a halo
   exchange, redistributions begun and a matmul's panels in flight together
   match only their own messages, whatever order ranks posted them in
   (messages of one kind match in posting order: begin them in the same
   order on every rank). DT__TAG + 2 is the ring reduce-scatter's. All
   below 32767, the least MPI_TAG_UB MPI promises. */
#define DT__TAG_HALO (DT__TAG + 1)
#define DT__TAG_MOVE (DT__TAG + 3)
#define DT__TAG_MATMUL (DT__TAG + 4)

/* The largest count or displacement a backend collective is handed (MPI
   takes ints). An alltoallv whose pieces could be larger is done over
   sendrecv instead. Every rank of the call must choose the same way -- a
   rank in MPI_Alltoallv and another in MPI_Sendrecv hang -- so the choice
   is made from a bound all ranks compute alike (the largest shard), never
   from a rank's own counts. Overridable only for the tests. */
#ifndef DT__COUNT_MAX
#define DT__COUNT_MAX ((size_t)INT_MAX)
#endif

/* A backend's capabilities, set by the call that makes it (dt__comm_make)
   and inherited by its splits and groups: the library asks what a backend
   can do, never which functions it has. */
enum {
    DT__CAP_OWN_ERRORS = 1, /* self, MPI: its callbacks write their own dt_last_error message   */
    DT__CAP_MPI = 2,        /* an MPI communicator carries it (dt__mpi_comm(be.user)): MPI
                               datatypes on its messages, MPI-IO, the shared arena             */
    DT__CAP_ORDERED = 4     /* started messages to one peer match in posting order (per tag),
                               so one peer may get several                                      */
};

struct dt_comm {
    dt_comm_desc be;          /* callbacks and user data                       */
    char name[32];
    int rank, size;
    unsigned caps;            /* what the backend is and can do: DT__CAP_*      */
    dt_comm *base;            /* group: the comm carrying the traffic          */
    int *members;             /* group: base rank of each member               */
    dt_comm *root;            /* the user-made comm: its stats count it all    */
    dt_comm_stats stats;      /* root only                                     */
    int muted;                /* root only: >0 while control traffic runs      */
    int shm;                  /* root only: dt_comm_set_shm's mode + 2; 0: DTENSOR_SHM */
};

static void dt__count(dt_comm *c, uint64_t sent, uint64_t recv) {
    dt_comm *r = c->root;
    if (r->muted) return;
    r->stats.calls++;
    r->stats.bytes_sent += sent;
    r->stats.bytes_recv += recv;
}

static dt_status dt__backend_result(dt_comm *c, dt_status st, const char *what) {
    if (st == DT_OK || (c->caps & DT__CAP_OWN_ERRORS)) return st;
    return dt__fail(DT_ERR_COMM, "dt_comm: backend '%s' %s returned %s", c->name, what,
                    dt_status_string(st));
}

static int dt__native(const dt_comm *c) { return c->members == NULL; }

/* point-to-point on any comm (group ranks translated); no accounting */
static dt_status dt__sendrecv(dt_comm *c, const void *sb, size_t sn, int dest, void *rb,
                              size_t rn, int src) {
    if (dest < 0 && src < 0) return DT_OK;
    if (dest == c->rank && src == c->rank) { /* only in degenerate rings */
        if (sn && rb && sb) memcpy(rb, sb, sn); /* (non-NULL: GCC -O3 -Wnonnull can't tell) */
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
    /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): sb is NULL only when every send count is 0 */
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
    /* the loop below fills every entry, but only when n > 0, which gcc 13's
       -Wmaybe-uninitialized cannot see through the const arrays handed on */
    memset(v, 0, 4 * (size_t)n * sizeof(size_t));
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

static size_t dt__span(const size_t *counts, const size_t *displs, int n);

/* The emulations fill the caller's receive buffer only once every message
   has arrived: a sendrecv that fails part-way leaves it as it was (a
   redistribution into an existing *out keeps *out). The messages land in a
   buffer of the call's own, then the received ranges are copied over: one
   copy of the received bytes, paid only by backends without the collective.
   (emu_reduce_scatter already writes rb last, from its own buffer.) */
static void dt__copy_ranges(char *dst, const char *src, const size_t *counts, const size_t *displs, int n) {
    int j;
    for (j = 0; j < n; j++)
        if (counts[j]) memcpy(dst + displs[j], src + displs[j], counts[j]);
}

static dt_status dt__emu_alltoallv_kept(dt_comm *c, const void *sb, const size_t *sc, const size_t *sd, void *rb,
                                        const size_t *rc, const size_t *rd) {
    size_t span = dt__span(rc, rd, c->size);
    char *tmp = NULL;
    dt_status st;
    if (!span) return dt__emu_alltoallv(c, sb, sc, sd, rb, rc, rd);
    if ((st = dt__alloc("dt_comm alltoallv", span, (void **)&tmp))) return st;
    if (!(st = dt__emu_alltoallv(c, sb, sc, sd, tmp, rc, rd))) dt__copy_ranges((char *)rb, tmp, rc, rd, c->size);
    DT_FREE(tmp);
    return st;
}

static dt_status dt__emu_allgatherv_kept(dt_comm *c, const void *sb, size_t sn, void *rb, const size_t *rc,
                                         const size_t *rd) {
    size_t span = dt__span(rc, rd, c->size);
    char *tmp = NULL;
    dt_status st;
    if (!span) return dt__emu_allgatherv(c, sb, sn, rb, rc, rd);
    if ((st = dt__alloc("dt_comm allgatherv", span, (void **)&tmp))) return st;
    if (!(st = dt__emu_allgatherv(c, sb, sn, tmp, rc, rd))) dt__copy_ranges((char *)rb, tmp, rc, rd, c->size);
    DT_FREE(tmp);
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
    if (!st) st = dt__emu_allgatherv_kept(c, part, v[n + c->rank], rb, v + n, v + 2 * n);
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

/* A device-only backend (NCCL: dt_comm_desc.device > 0) takes only its
   device's memory. Host buffers handed to it (control traffic: agreement
   hashes, split colours) are staged through device copies; its one-rank
   short cuts copy with the device; and the sendrecv emulations, which
   combine data on the host, are not available to it. */
static const dt__device *dt__comm_device(const dt_comm *c) {
    int d = c->root->be.device;
    return d > 0 ? dt__device_of(d) : NULL;
}

/* a copy inside a one-rank collective: the buffers are in the backend's memory */
static dt_status dt__comm_copy(const dt_comm *c, void *dst, const void *src, size_t bytes) {
    const dt__device *d = dt__comm_device(c);
    int any = c->root->be.device == DT_ANY_MEMORY;
    if (!bytes || dst == src) return DT_OK;
    if (!d && any) d = dt__device_of(DT_CUDA);
    if (d) return d->copy("dt_comm", dst, src, bytes);
    /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): src is NULL only when bytes is 0 */
    memcpy(dst, src, bytes);
    return DT_OK;
}

static dt_status dt__comm_no_emulation(const dt_comm *c, const char *what) {
    return dt__fail(DT_ERR_UNSUPPORTED, "dt_comm: backend '%s' has no %s and takes device memory only, so the "
                    "library cannot emulate it over sendrecv", c->name, what);
}

/* host buffers over a device-only backend: dev copies of [send | recv] */
typedef struct dt__stage {
    const dt__device *dev;
    char *buf;
} dt__stage;

static int dt__needs_stage(const dt_comm *c, const void *a, const void *b) {
    const dt__device *d = dt__comm_device(c);
    return d && ((a && !d->owns(a)) || (b && !d->owns(b)));
}

static dt_status dt__stage_in(const dt_comm *c, dt__stage *g, const void *src, size_t sbytes, size_t rbytes) {
    dt_status st;
    g->dev = dt__comm_device(c);
    g->buf = NULL;
    if ((st = g->dev->alloc("dt_comm (staging host buffers for a device backend)", sbytes + rbytes + 1,
                            (void **)&g->buf)))
        return st;
    if (sbytes && (st = g->dev->copy("dt_comm", g->buf, src, sbytes))) { g->dev->free(g->buf); return st; }
    return DT_OK;
}

static dt_status dt__stage_out(dt__stage *g, dt_status st, void *dst, size_t off, size_t rbytes) {
    if (!st && rbytes) st = g->dev->copy("dt_comm", dst, g->buf + off, rbytes);
    g->dev->free(g->buf);
    return st;
}

static size_t dt__span(const size_t *counts, const size_t *displs, int n) {
    size_t hi = 0;
    int j;
    for (j = 0; j < n; j++)
        if (counts[j] && displs[j] + counts[j] > hi) hi = displs[j] + counts[j];
    return hi;
}

/* Does c take an alltoallv bounded by `bound` as the backend's collective
   (else: sendrecv, dt__emu_alltoallv_kept)? From c and the bound only, so
   the same on every rank of the call: a rank in MPI_Alltoallv and another
   in MPI_Sendrecv hang. */
static int dt__comm_alltoallv_native(const dt_comm *c, size_t bound) {
    return dt__native(c) && c->be.alltoallv && (bound <= DT__COUNT_MAX || dt__comm_device(c));
}

/* does c take an allgatherv as the backend's collective (else: a ring over sendrecv)? */
static int dt__comm_allgatherv_native(const dt_comm *c) { return dt__native(c) && c->be.allgatherv; }

/* bound: the same on every rank, >= every count and displacement of the call */
static dt_status dt__comm_alltoallv(dt_comm *c, const void *sb, const size_t *sc, const size_t *sd,
                                    void *rb, const size_t *rc, const size_t *rd, size_t bound) {
    if (c->size == 1) return rc[0] ? dt__comm_copy(c, (char *)rb + rd[0], (const char *)sb + sd[0], rc[0]) : DT_OK;
    if (dt__needs_stage(c, sb, rb)) {
        size_t ns = dt__span(sc, sd, c->size), nr = dt__span(rc, rd, c->size);
        dt__stage g;
        dt_status st = dt__stage_in(c, &g, sb, ns, nr);
        if (st) return st;
        st = dt__comm_alltoallv(c, g.buf, sc, sd, g.buf + ns, rc, rd, bound);
        return dt__stage_out(&g, st, rb, ns, nr);
    }
    dt__count(c, dt__sum_except(sc, c->size, c->rank), dt__sum_except(rc, c->size, c->rank));
    if (dt__comm_alltoallv_native(c, bound)) {
        dt_status st = c->be.alltoallv(c->be.user, sb, sc, sd, rb, rc, rd);
        if (st != DT_ERR_UNSUPPORTED) return dt__backend_result(c, st, "alltoallv");
    }
    if (dt__comm_device(c)) return dt__comm_no_emulation(c, "alltoallv");
    return dt__emu_alltoallv_kept(c, sb, sc, sd, rb, rc, rd);
}

static dt_status dt__comm_allgatherv(dt_comm *c, const void *sb, size_t sn, void *rb,
                                     const size_t *rc, const size_t *rd) {
    if (c->size == 1) return sn ? dt__comm_copy(c, (char *)rb + rd[0], sb, sn) : DT_OK;
    if (dt__needs_stage(c, sn ? sb : NULL, rb)) {
        size_t nr = dt__span(rc, rd, c->size);
        dt__stage g;
        dt_status st = dt__stage_in(c, &g, sb, sn, nr);
        if (st) return st;
        st = dt__comm_allgatherv(c, g.buf, sn, g.buf + sn, rc, rd);
        return dt__stage_out(&g, st, rb, sn, nr);
    }
    dt__count(c, sn * (uint64_t)(c->size - 1), dt__sum_except(rc, c->size, c->rank));
    if (dt__comm_allgatherv_native(c)) {
        dt_status st = c->be.allgatherv(c->be.user, sb, sn, rb, rc, rd);
        if (st != DT_ERR_UNSUPPORTED) return dt__backend_result(c, st, "allgatherv");
    }
    if (dt__comm_device(c)) return dt__comm_no_emulation(c, "allgatherv");
    return dt__emu_allgatherv_kept(c, sb, sn, rb, rc, rd);
}

static dt_status dt__comm_allreduce(dt_comm *c, const void *sb, void *rb, size_t count, dt_dtype t,
                                    dt_reduce op) {
    size_t bytes = count * dt_dtype_size(t);
    /* complex: a sum of pairs is the sums of the parts (MAX/MIN never come here:
       a complex Partial(MAX/MIN) is refused where placements are checked) */
    if (dt__is_complex(t)) return dt__comm_allreduce(c, sb, rb, 2 * count, dt__part_dtype(t), op);
    if (c->size == 1) return dt__comm_copy(c, rb, sb, bytes);
    if (bytes && dt__needs_stage(c, sb, rb)) {
        dt__stage g;
        dt_status st = dt__stage_in(c, &g, sb, bytes, 0);
        if (st) return st;
        st = dt__comm_allreduce(c, g.buf, g.buf, count, t, op);
        return dt__stage_out(&g, st, rb, 0, bytes);
    }
    dt__count(c, bytes * (uint64_t)(c->size - 1), bytes * (uint64_t)(c->size - 1));
    if (dt__native(c) && c->be.allreduce) {
        dt_status st = c->be.allreduce(c->be.user, sb, rb, count, t, op);
        if (st != DT_ERR_UNSUPPORTED) return dt__backend_result(c, st, "allreduce");
    }
    if (dt__comm_device(c)) return dt__comm_no_emulation(c, "allreduce");
    return dt__emu_allreduce(c, sb, rb, count, t, op);
}

static dt_status dt__comm_reduce_scatter(dt_comm *c, const void *sb, void *rb, const size_t *counts,
                                         dt_dtype t, dt_reduce op);

/* complex: reduce-scatter the parts, twice the counts (as dt__comm_allreduce) */
static dt_status dt__comm_reduce_scatter_parts(dt_comm *c, const void *sb, void *rb, const size_t *counts,
                                               dt_dtype t, dt_reduce op) {
    size_t *twice = NULL;
    int j;
    dt_status st = dt__alloc("dt_comm reduce_scatter", (size_t)c->size * sizeof(size_t), (void **)&twice);
    if (st) return st;
    for (j = 0; j < c->size; j++) twice[j] = 2 * counts[j];
    st = dt__comm_reduce_scatter(c, sb, rb, twice, dt__part_dtype(t), op);
    DT_FREE(twice);
    return st;
}

static dt_status dt__comm_reduce_scatter(dt_comm *c, const void *sb, void *rb, const size_t *counts,
                                         dt_dtype t, dt_reduce op) {
    size_t es = dt_dtype_size(t);
    if (dt__is_complex(t)) return dt__comm_reduce_scatter_parts(c, sb, rb, counts, t, op);
    if (c->size == 1) return dt__comm_copy(c, rb, sb, counts[0] * es);
    if (dt__needs_stage(c, sb, rb)) {
        size_t ns = (dt__sum_except(counts, c->size, c->rank) + counts[c->rank]) * es, nr = counts[c->rank] * es;
        dt__stage g;
        dt_status st = dt__stage_in(c, &g, sb, ns, nr);
        if (st) return st;
        st = dt__comm_reduce_scatter(c, g.buf, g.buf + ns, counts, t, op);
        return dt__stage_out(&g, st, rb, ns, nr);
    }
    dt__count(c, dt__sum_except(counts, c->size, c->rank) * es,
              counts[c->rank] * es * (uint64_t)(c->size - 1));
    if (dt__native(c) && c->be.reduce_scatter) {
        dt_status st = c->be.reduce_scatter(c->be.user, sb, rb, counts, t, op);
        if (st != DT_ERR_UNSUPPORTED) return dt__backend_result(c, st, "reduce_scatter");
    }
    if (dt__comm_device(c)) return dt__comm_no_emulation(c, "reduce_scatter");
    return dt__emu_reduce_scatter(c, sb, rb, counts, t, op);
}

static dt_status dt__comm_broadcast(dt_comm *c, void *buf, size_t bytes, int root) {
    if (c->size == 1) return DT_OK;
    if (bytes && dt__needs_stage(c, buf, NULL)) {
        dt__stage g;
        dt_status st = dt__stage_in(c, &g, buf, bytes, 0);
        if (st) return st;
        st = dt__comm_broadcast(c, g.buf, bytes, root);
        return dt__stage_out(&g, st, buf, 0, bytes);
    }
    dt__count(c, c->rank == root ? bytes * (uint64_t)(c->size - 1) : 0, c->rank == root ? 0 : bytes);
    if (dt__native(c) && c->be.broadcast) {
        dt_status st = c->be.broadcast(c->be.user, buf, bytes, root);
        if (st != DT_ERR_UNSUPPORTED) return dt__backend_result(c, st, "broadcast");
    }
    if (dt__comm_device(c)) return dt__comm_no_emulation(c, "broadcast");
    return dt__emu_broadcast(c, buf, bytes, root);
}

static dt_status dt__comm_barrier(dt_comm *c) {
    if (c->size == 1) return DT_OK;
    dt__count(c, 0, 0);
    if (dt__native(c) && c->be.barrier) {
        dt_status st = c->be.barrier(c->be.user);
        if (st != DT_ERR_UNSUPPORTED) return dt__backend_result(c, st, "barrier");
    }
    if (dt__comm_device(c)) return dt__comm_no_emulation(c, "barrier");
    return dt__emu_barrier(c);
}

/* ---- split-phase point-to-point (halo exchanges) ----
   The messages name their peers in the carrier's ranks (the comm whose
   backend moves the bytes: c itself, or the base of a group), translated
   once when the caller plans them, so that a time step translates nothing. */
static dt_comm *dt__comm_carrier(dt_comm *c) { return dt__native(c) ? c : c->base; }
static int dt__comm_carrier_rank(const dt_comm *c, int r) { return dt__native(c) ? r : c->members[r]; }

/* Without start/wait: pairwise rounds of sendrecv over the carrier, round k
   sending to me+k and receiving from me-k, the j-th message to a peer
   paired with the j-th from the other; blocking, so all done at start. */
static dt_status dt__p2p_rounds(dt_comm *carrier, int n, const dt_message *msgs) {
    int p = carrier->size, me = carrier->rank, k;
    for (k = 1; k < p; k++) {
        int dst = (me + k) % p, src = (me - k + p) % p, is = 0, ir = 0;
        for (;;) {
            const dt_message *sm = NULL, *rm = NULL;
            dt_status st;
            while (is < n && !(msgs[is].send && msgs[is].peer == dst)) is++;
            while (ir < n && !(!msgs[ir].send && msgs[ir].peer == src)) ir++;
            if (is < n) sm = &msgs[is++];
            if (ir < n) rm = &msgs[ir++];
            if (!sm && !rm) break;
            st = dt__sendrecv(carrier, sm ? sm->buf : NULL, sm ? sm->bytes : 0, sm ? dst : -1, rm ? rm->buf : NULL,
                              rm ? rm->bytes : 0, rm ? src : -1);
            if (st) return st;
        }
    }
    return DT_OK;
}

/* Post n messages on c (peers: carrier ranks), counted in c's stats as
   `sent` and `recv` bytes (their totals, which the caller planned once).
   With the backend's start/wait, *request is its handle for dt__comm_wait;
   otherwise the exchange is done here and *request is NULL. tag: the
   exchange's kind (DT__TAG_*), in every message. */
static dt_status dt__comm_start(dt_comm *c, int tag, int n, dt_message *msgs, uint64_t sent, uint64_t recv,
                                void **request) {
    dt_comm *w = dt__comm_carrier(c);
    dt_status st;
    int i;
    *request = NULL;
    if (!n) return DT_OK;
    for (i = 0; i < n; i++) msgs[i].tag = tag;
    dt__count(c, sent, recv);
    if (!w->be.start || !w->be.wait) return dt__p2p_rounds(w, n, msgs);
    if ((st = w->be.start(w->be.user, n, msgs, request))) {
        *request = NULL;
        return dt__backend_result(w, st, "start");
    }
    return DT_OK;
}

/* does c's backend move started messages forward on request (test)? */
static int dt__comm_can_test(dt_comm *c) { return dt__comm_carrier(c)->be.test != NULL; }

/* move what dt__comm_start posted forward, if the backend can (test);
   *done: 1 when it has all arrived (wait still frees it) */
static dt_status dt__comm_test(dt_comm *c, void *request, int *done) {
    dt_comm *w = dt__comm_carrier(c);
    *done = !request;
    if (!request || !w->be.test) return DT_OK;
    return dt__backend_result(w, w->be.test(w->be.user, request, done), "test");
}

/* complete what dt__comm_start posted (request NULL: nothing to wait for) */
static dt_status dt__comm_wait(dt_comm *c, void *request) {
    dt_comm *w = dt__comm_carrier(c);
    if (!request) return DT_OK;
    return dt__backend_result(w, w->be.wait(w->be.user, request), "wait");
}

/* A broadcast of control data (a file's header, an error message, a
   token): muted, like all control traffic, so dt_comm_stats counts only
   the user's data. */
static dt_status dt__comm_broadcast_ctl(dt_comm *c, void *buf, size_t bytes, int root) {
    dt_status st;
    c->root->muted++;
    st = dt__comm_broadcast(c, buf, bytes, root);
    c->root->muted--;
    return st;
}

/* Control traffic (mesh set-up, DT_VERIFY) is not what a user measures with
   dt_comm_stats, so it runs muted. Each rank contributes `n` int64 words;
   v: 2 * c->size counts, the caller's scratch (so this allocates nothing). */
static dt_status dt__comm_allgather_ctl_into(dt_comm *c, const int64_t *mine, int n, int64_t *all, size_t *v) {
    int j;
    dt_status st;
    for (j = 0; j < c->size; j++) {
        v[j] = (size_t)n * sizeof(int64_t);
        v[c->size + j] = (size_t)j * (size_t)n * sizeof(int64_t);
    }
    c->root->muted++;
    st = dt__comm_allgatherv(c, mine, (size_t)n * sizeof(int64_t), all, v, v + c->size);
    c->root->muted--;
    return st;
}

static dt_status dt__comm_allgather_ctl(dt_comm *c, const int64_t *mine, int n, int64_t *all) {
    size_t *v = NULL;
    dt_status st;
    if ((st = dt__alloc("dt_comm", 2 * (size_t)c->size * sizeof(size_t), (void **)&v))) return st;
    st = dt__comm_allgather_ctl_into(c, mine, n, all, v);
    DT_FREE(v);
    return st;
}

#define DT__CTL_MAX 8    /* words of dt__comm_allmax_ctl */
#ifndef DT__CTL_RANKS      /* (tests lower it to reach the reduction) */
#define DT__CTL_RANKS 32 /* up to this many ranks it allgathers them on the stack (2.5 KiB) */
#endif

/* a 64-bit value as 4 words whose maximum over the ranks tells whether all
   ranks hold the same value (its halves and their negations: max and -min) */
static void dt__ctl_words(uint64_t h, int64_t *v) {
    v[0] = (int64_t)(h >> 32);
    v[1] = (int64_t)(h & 0xffffffffu);
    v[2] = -v[0];
    v[3] = -v[1];
}
static int dt__ctl_same(const int64_t *v) { return v[0] == -v[2] && v[1] == -v[3]; }

/* Control traffic that allocates nothing: v[0..n) becomes the element-wise
   maximum over the ranks (n <= DT__CTL_MAX). Agreement steps start with it,
   so a rank that could not allocate still takes part and its peers learn of
   it instead of waiting. Up to DT__CTL_RANKS ranks the backend's own
   allgather into stack buffers (one small exchange, as cheap as it gets);
   beyond, its allreduce where it has one (MPI), otherwise dissemination
   over sendrecv
   (round d: to rank + d, from rank - d; max is idempotent, so the
   overlapping windows do no harm). Device-only backends stage host
   buffers, which allocates. */
static dt_status dt__comm_allmax_ctl(dt_comm *c, int64_t *v, int n) {
    int64_t mine[DT__CTL_MAX], in[DT__CTL_MAX] = {0};
    dt_status st = DT_ERR_UNSUPPORTED;
    int d, i;
    if (c->size == 1) return DT_OK;
    c->root->muted++;
    if (dt__comm_device(c)) {
        st = dt__comm_allreduce(c, v, v, (size_t)n, DT_I64, DT_MAX);
    } else if (c->size <= DT__CTL_RANKS && dt__native(c) && c->be.allgatherv) {
        /* small: an allgather on the stack, cheaper than an allreduce (only a backend's own: the
           emulated one allocates its receive buffer) */
        int64_t all[DT__CTL_RANKS * DT__CTL_MAX];
        size_t cnt[2 * DT__CTL_RANKS];
        memcpy(mine, v, (size_t)n * sizeof *v);
        st = dt__comm_allgather_ctl_into(c, mine, n, all, cnt);
        for (d = 0; d < c->size && !st; d++)
            for (i = 0; i < n; i++)
                if (all[d * n + i] > v[i]) v[i] = all[d * n + i];
    } else {
        if (dt__native(c) && c->be.allreduce) {
            memcpy(mine, v, (size_t)n * sizeof *v);
            st = c->be.allreduce(c->be.user, mine, v, (size_t)n, DT_I64, DT_MAX);
            if (st != DT_ERR_UNSUPPORTED) st = dt__backend_result(c, st, "allreduce");
        }
        if (st == DT_ERR_UNSUPPORTED)
            for (st = DT_OK, d = 1; d < c->size && !st; d *= 2) {
                memcpy(mine, v, (size_t)n * sizeof *v);
                st = dt__sendrecv(c, mine, (size_t)n * sizeof *v, (c->rank + d) % c->size, in,
                                  (size_t)n * sizeof *v, (c->rank - d + c->size) % c->size);
                for (i = 0; i < n && !st; i++)
                    if (in[i] > v[i]) v[i] = in[i];
            }
    }
    c->root->muted--;
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
        n->caps = c->caps;
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
        n->caps = c->caps;
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
                                            /* cppcheck-suppress knownConditionTrueFalse ; dest > 0 is false when only src > 0 */
                                            dest > 0 ? dest : src)
                                 : DT_OK;
}

static dt_status dt__comm_make(const char *fn, const dt_comm_desc *be, unsigned caps, dt_comm **out) {
    dt_status st;
    dt_comm *c = dt__comm_new(fn, &st);
    if (!c) return st;
    c->be = *be;
    snprintf(c->name, sizeof c->name, "%s", be->name ? be->name : "custom");
    c->rank = be->rank;
    c->size = be->size;
    c->caps = caps;
    *out = c;
    return DT_OK;
}

static dt_status dt__comm_self_body(dt_comm **out) {
    dt_comm_desc d;
    if (!out) return dt__fail(DT_ERR_ARG, "dt_comm_self: out is NULL");
    memset(&d, 0, sizeof d);
    d.name = "self";
    d.rank = 0;
    d.size = 1;
    d.sendrecv = dt__self_sendrecv;
    return dt__comm_make("dt_comm_self", &d, DT__CAP_OWN_ERRORS, out);
}
DT_API dt_status dt_comm_self(dt_comm **out) { DT__PUBLIC("dt_comm_self", dt__comm_self_body(out)); }

static dt_status dt__comm_custom_body(const dt_comm_desc *desc, dt_comm **out) {
    if (!out) return dt__fail(DT_ERR_ARG, "dt_comm_custom: out is NULL");
    if (!desc) return dt__fail(DT_ERR_ARG, "dt_comm_custom: desc is NULL");
    if (desc->size < 1 || desc->rank < 0 || desc->rank >= desc->size)
        return dt__fail(DT_ERR_ARG, "dt_comm_custom: rank %d / size %d is not a rank of a communicator",
                        desc->rank, desc->size);
    if (desc->size > 1 && !desc->sendrecv)
        return dt__fail(DT_ERR_ARG, "dt_comm_custom: desc->sendrecv is NULL (required when size %d > 1)",
                        desc->size);
    if (!desc->start != !desc->wait)
        return dt__fail(DT_ERR_ARG, "dt_comm_custom: desc->%s is set but desc->%s is NULL (both or neither)",
                        desc->start ? "start" : "wait", desc->start ? "wait" : "start");
    if (desc->test && !desc->start)
        return dt__fail(DT_ERR_ARG, "dt_comm_custom: desc->test is set but desc->start and desc->wait are NULL "
                        "(test moves a started request)");
    return dt__comm_make("dt_comm_custom", desc, 0, out);
}
DT_API dt_status dt_comm_custom(const dt_comm_desc *desc, dt_comm **out) {
    DT__PUBLIC("dt_comm_custom", dt__comm_custom_body(desc, out));
}

DT_API void dt_comm_destroy(dt_comm *c) { dt__comm_free(c); }
DT_API int dt_comm_rank(const dt_comm *c) { return c ? c->rank : -1; }
DT_API int dt_comm_size(const dt_comm *c) { return c ? c->size : 0; }

static dt_status dt__comm_barrier_body(dt_comm *c) {
    if (!c) return dt__fail(DT_ERR_ARG, "dt_comm_barrier: comm is NULL");
    return dt__within("dt_comm_barrier", dt__comm_barrier(c));
}
DT_API dt_status dt_comm_barrier(dt_comm *c) { DT__PUBLIC("dt_comm_barrier", dt__comm_barrier_body(c)); }

DT_API void dt_comm_get_stats(const dt_comm *c, dt_comm_stats *s) {
    if (!s) return;
    if (!c) { memset(s, 0, sizeof *s); return; }
    *s = c->root->stats;
}

/* a streamed matmul's received bytes and their lower bound (>>ops) */
static void dt__comm_note_matmul(dt_comm *c, uint64_t recv, uint64_t bound) {
    c->root->stats.matmul_bytes_recv += recv;
    c->root->stats.matmul_bound += bound;
}

DT_API void dt_comm_reset_stats(dt_comm *c) {
    if (c) memset(&c->root->stats, 0, sizeof c->root->stats);
}

static dt_status dt__comm_set_shm_body(dt_comm *c, int mode) {
    if (!c) return dt__fail(DT_ERR_ARG, "dt_comm_set_shm: c is NULL");
    if (mode < -1 || mode > 2)
        return dt__fail(DT_ERR_ARG, "dt_comm_set_shm: mode = %d (1 on, 0 off, 2 auto, -1 DTENSOR_SHM)", mode);
    c->root->shm = mode + 2;
    return DT_OK;
}
DT_API dt_status dt_comm_set_shm(dt_comm *c, int mode) { DT__PUBLIC("dt_comm_set_shm", dt__comm_set_shm_body(c, mode)); }

#ifndef DTENSOR_NO_MPI
/* the MPI backend: a dup of the user's communicator with MPI_ERRORS_RETURN,
   so an MPI failure comes back as DT_ERR_COMM instead of killing the job */
/* the piece size long point-to-point messages are cut into (overridable so
   that the tests can drive the big-message paths with small tensors) */
#ifndef DT__MPI_PIECE
#define DT__MPI_PIECE ((size_t)1 << 30)
#endif

/* reduce_scatter blocks at least DT__RING_MIN bytes go round a ring, in
   pieces of DT__RING_PIECE (smaller: MPI's own reduce_scatter); both
   overridable for the tests, like DT__MPI_PIECE */
#ifndef DT__RING_MIN
#define DT__RING_MIN ((size_t)64 << 10)
#endif
#ifndef DT__RING_PIECE
#define DT__RING_PIECE ((size_t)128 << 10)
#endif

typedef struct dt__mpi {
    MPI_Comm comm;
    void *ring;        /* the ring reduce-scatter's scratch, kept between calls */
    size_t ring_bytes;
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

/* MPICH 4.0 (Debian 12) compares MPI_UINT8_T and MPI_UNSIGNED_CHAR as signed
   in MPI_MAX/MPI_MIN (max(127, 128) = 127), so U8 max/min go through the
   library's own reduction */
static int dt__mpi_reduces(dt_dtype t, dt_reduce op, MPI_Datatype *ty) {
    return dt__mpi_type(t, ty) && op != DT_AVG && !(t == DT_U8 && (op == DT_MAX || op == DT_MIN));
}
static dt_status dt__mpi_allreduce(void *user, const void *sb, void *rb, size_t count, dt_dtype t, dt_reduce op) {
    MPI_Datatype ty;
    size_t es = dt_dtype_size(t), done = 0;
    if (!dt__mpi_reduces(t, op, &ty)) return DT_ERR_UNSUPPORTED;
    while (done < count) { /* int counts: large arrays in pieces */
        size_t k = count - done < DT__COUNT_MAX ? count - done : DT__COUNT_MAX;
        const void *s = sb == rb ? MPI_IN_PLACE : (const void *)((const char *)sb + done * es);
        int rc = MPI_Allreduce(s, (char *)rb + done * es, (int)k, ty, dt__mpi_op(op), dt__mpi_comm(user));
        if (rc != MPI_SUCCESS) return dt__mpi_check(rc, "MPI_Allreduce");
        done += k;
    }
    return DT_OK;
}

/* a scratch of at least `bytes` in the backend, grown and kept */
static dt_status dt__mpi_ring_scratch(dt__mpi *m, size_t bytes, char **out) {
    dt_status st = dt__grow(dt__alloc, dt__free, "dt_comm_mpi reduce_scatter", bytes, &m->ring, &m->ring_bytes);
    *out = (char *)m->ring;
    return st;
}

/* elements [lo, lo + piece) of a block of `count`, clipped to it */
static size_t dt__piece_len(size_t count, size_t lo, size_t piece) {
    return count > lo ? (count - lo < piece ? count - lo : piece) : 0;
}

/* Ring reduce-scatter: in step k (1..n-1) each rank receives from its left
   neighbour the partial result of block me-1-k, adds its own copy and passes
   it right in the next step; after n-1 steps block `me` is complete on rank
   me. It moves the bandwidth-optimal (n-1)/n of the input per rank. The
   blocks go round in pieces of DT__RING_PIECE bytes, one ring per piece, the
   piece of the output block serving as one of the two receive buffers, so
   the call holds the output plus one piece (two where this rank's block is
   shorter than the longest). Open MPI 4.1's Reduce_scatter_block holds two
   copies of the whole input (8x the shard at 4 ranks, measured by
   bench/redistribute.c --mem), and both MPIs' are slower on shared memory.
   Each block is reduced in a fixed order (ranks j+1, ..., j), whatever the
   message timing. */
static dt_status dt__mpi_ring_reduce_scatter(dt__mpi *m, int n, int me, const char *sb, char *rb,
                                             const size_t *counts, dt_dtype t, dt_reduce op) {
    size_t es = dt_dtype_size(t), big = 0, piece = DT__RING_PIECE / dt_dtype_size(t), lo, *off;
    char *scratch, *buf[2];
    int j, k, right = (me + 1) % n, left = (me - 1 + n) % n;
    dt_status st;
    for (j = 0; j < n; j++) big = counts[j] > big ? counts[j] : big;
    if (piece == 0) piece = 1;
    if (piece > big) piece = big;
    st = dt__mpi_ring_scratch(m, (size_t)n * sizeof(size_t) + piece * es * (counts[me] < big ? 2 : 1), &scratch);
    if (st) return st;
    off = (size_t *)(void *)scratch; /* dt__alloc's blocks are max-aligned */
    for (j = 0, off[0] = 0; j + 1 < n; j++) off[j + 1] = off[j] + counts[j] * es;
    buf[0] = scratch + (size_t)n * sizeof(size_t);
    for (lo = 0; lo < big; lo += piece) {
        /* my output's piece is the second buffer where it is as long as any */
        buf[1] = counts[me] >= lo + dt__piece_len(big, lo, piece) ? rb + lo * es : buf[0] + piece * es;
        for (k = 1; k < n; k++) {
            int sblk = ((me - k) % n + n) % n, rblk = ((me - 1 - k) % n + n) % n;
            size_t sn = dt__piece_len(counts[sblk], lo, piece), rn = dt__piece_len(counts[rblk], lo, piece);
            /* the buffers alternate so that the last step receives into rb */
            char *into = k == n - 1 ? rb + lo * es : buf[1 - (n - 1 - k) % 2];
            const char *from = k == 1 ? sb + off[sblk] + lo * es : buf[1 - (n - k) % 2];
            st = dt__mpi_sendrecv(m, from, sn * es, right, into, rn * es, left, DT__TAG + 2);
            if (st) return st;
            dt__reduce_elems(t, op, into, sb + off[rblk] + lo * es, rn);
        }
    }
    return DT_OK;
}

static dt_status dt__mpi_reduce_scatter(void *user, const void *sb, void *rb, const size_t *counts, dt_dtype t,
                                        dt_reduce op) {
    MPI_Comm comm = dt__mpi_comm(user);
    MPI_Datatype ty;
    int n, me, j, rcode, *v = NULL;
    size_t big = 0;
    dt_status st;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    if (!dt__mpi_reduces(t, op, &ty)) return DT_ERR_UNSUPPORTED;
    for (j = 0; j < n; j++) big = counts[j] > big ? counts[j] : big;
    if (n > 1 && big * dt_dtype_size(t) >= DT__RING_MIN)
        return dt__mpi_ring_reduce_scatter((dt__mpi *)user, n, me, (const char *)sb, (char *)rb, counts, t, op);
    if (!dt__fits_int(counts, n)) return DT_ERR_UNSUPPORTED;
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

/* (MPI_Wait one by one: GCC 12 misreads MPICH's access attribute on
   MPI_Waitall's MPI_STATUSES_IGNORE as a zero-size array) */
static dt_status dt__mpi_wait(void *user, void *request) {
    MPI_Request *rq = (MPI_Request *)request;
    int rc = MPI_SUCCESS, n;
    (void)user;
    for (n = 0; rq[n] != MPI_REQUEST_NULL; n++) {
        int r = MPI_Wait(&rq[n], MPI_STATUS_IGNORE);
        if (r != MPI_SUCCESS && rc == MPI_SUCCESS) rc = r;
    }
    DT_FREE(rq);
    return dt__mpi_check(rc, "MPI_Wait");
}

/* test: MPI_Testall over the request list (which leaves the requests as
   they were until all are done, then nulls them: wait's end marker then
   comes first and it only frees) */
static dt_status dt__mpi_test(void *user, void *request, int *done) {
    MPI_Request *rq = (MPI_Request *)request;
    MPI_Status few[8], *sts = few; /* (real statuses: GCC takes MPI_STATUSES_IGNORE for an empty array) */
    int n, flag = 0, rc;
    dt_status st;
    (void)user;
    for (n = 0; rq[n] != MPI_REQUEST_NULL; n++) {}
    if (n > 8 && (st = dt__alloc("dt test", (size_t)n * sizeof *sts, (void **)&sts))) return st;
    rc = MPI_Testall(n, rq, &flag, sts);
    if (sts != few) DT_FREE(sts);
    *done = flag != 0;
    return dt__mpi_check(rc, "MPI_Testall");
}

/* start/wait: Irecv/Isend with the message's tag, each message in pieces
   of at most DT__COUNT_MAX bytes (both ends cut alike: they agree on the
   size), all completed by Waitall */
static dt_status dt__mpi_start(void *user, int n, const dt_message *msgs, void **request) {
    MPI_Request *rq = NULL;
    size_t total = 1, k = 0;
    int i, pass;
    dt_status st;
    for (i = 0; i < n; i++) total += (msgs[i].bytes + DT__COUNT_MAX - 1) / DT__COUNT_MAX;
    if ((st = dt__alloc("dt halo exchange", total * sizeof *rq, (void **)&rq))) return st;
    for (pass = 0; pass < 2; pass++) /* receives first */
        for (i = 0; i < n; i++) {
            size_t done;
            if (msgs[i].send != pass) continue;
            for (done = 0; done < msgs[i].bytes; done += DT__COUNT_MAX) {
                size_t left = msgs[i].bytes - done;
                int cnt = (int)(left < DT__COUNT_MAX ? left : DT__COUNT_MAX), rc;
                char *b = (char *)msgs[i].buf + done;
                rc = pass ? MPI_Isend(b, cnt, MPI_BYTE, msgs[i].peer, msgs[i].tag, dt__mpi_comm(user), &rq[k])
                          : MPI_Irecv(b, cnt, MPI_BYTE, msgs[i].peer, msgs[i].tag, dt__mpi_comm(user), &rq[k]);
                if (rc != MPI_SUCCESS) {
                    rq[k] = MPI_REQUEST_NULL;
                    dt__mpi_wait(user, rq); /* the ones posted */
                    return dt__mpi_check(rc, pass ? "MPI_Isend" : "MPI_Irecv");
                }
                k++;
            }
        }
    rq[k] = MPI_REQUEST_NULL; /* the end marker */
    *request = rq;
    return DT_OK;
}


/* Post n messages on c's carrier (a dt_comm_mpi comm: its start is
   dt__mpi_start), each as (base[i], count[i], type[i]) -- a halo's MPI
   derived datatypes (>>halo) -- with `tag` (the one dt__comm_start gives
   the same messages as bytes) and dt__mpi_start's order (receives first),
   so a peer that posts the same messages as bytes matches them. Counted
   in c's stats as `sent` / `recv`. rq: n requests of the caller's; *nrq:
   how many were posted (wait with dt__comm_wait_typed). */
static dt_status dt__comm_start_typed(dt_comm *c, int tag, int n, const dt_message *msgs, char *const *base,
                                      const int *count, const MPI_Datatype *type, MPI_Request *rq, MPI_Status *sts,
                                      int *nrq, uint64_t sent, uint64_t recv) {
    MPI_Comm comm = dt__mpi_comm(dt__comm_carrier(c)->be.user);
    int pass, i, k = 0;
    *nrq = 0;
    dt__count(c, sent, recv); /* (n = 0 too: one call, as the collective it stands for) */
    if (!n) return DT_OK;
    for (pass = 0; pass < 2; pass++)
        for (i = 0; i < n; i++) {
            int rc;
            if (msgs[i].send != pass) continue;
            rc = pass ? MPI_Isend(base[i], count[i], type[i], msgs[i].peer, tag, comm, &rq[k])
                      : MPI_Irecv(base[i], count[i], type[i], msgs[i].peer, tag, comm, &rq[k]);
            if (rc != MPI_SUCCESS) {
                if (k) MPI_Waitall(k, rq, sts); /* the ones posted */
                return dt__mpi_check(rc, pass ? "MPI_Isend" : "MPI_Irecv");
            }
            k++;
        }
    *nrq = k;
    return DT_OK;
}

static dt_status dt__comm_wait_typed(int nrq, MPI_Request *rq, MPI_Status *sts) {
    return nrq ? dt__mpi_check(MPI_Waitall(nrq, rq, sts), "MPI_Waitall") : DT_OK;
}

/* Box b of array a as an MPI datatype of elements `el` (the same element
   type for every message of a plan, packed or not, so the type signatures
   of the two ends match whichever way each moves it; a halo's faces, a
   typed exchange's pieces): the innermost dims that
   are one span fold into a block, the next dim is an hvector of such
   blocks, each dim outside it an hvector of the type inside. A contiguous
   box: (*count, *type) = (its elements, el). 0 where a count does not fit
   an int or MPI refuses (then: packing). (Elements, not bytes: MPICH's
   engine moves an hvector of 8-byte blocks of MPI_BYTE 2.5x slower than of
   one 8-byte integer.) min_run: 0 where the contiguous runs are shorter
   than that many bytes (a transposing piece: our tiled pack beats an
   element-by-element type). */
static int dt__mpi_box_type(const dt__array *a, const dt__box *b, MPI_Datatype el, size_t min_run, char **base,
                            int *count, MPI_Datatype *type) {
    size_t stride[DT_MAX_DIMS] = {0}, span = a->es, bytes = dt__box_numel(a->ndim, b) * a->es;
    MPI_Datatype t = el, u = MPI_DATATYPE_NULL;
    int d = a->ndim - 1;
    *base = a->data;
    *count = 0;
    *type = el;
    if (!bytes) return 1;
    if (bytes > DT__COUNT_MAX) return 0;
    dt__array_strides(a, stride);
    *base = a->data + dt__array_offset(a, stride, b);
    *count = (int)(bytes / a->es);
    for (; d >= 0; d--) { /* the contiguous run */
        if (b->ext[d] == 1) continue;
        if (stride[d] != span) break;
        span *= (size_t)b->ext[d];
    }
    if (d < 0) return 1;
    if (span < min_run) return 0;
    for (; d >= 0; d--) {
        int rc;
        if (b->ext[d] == 1) continue;
        if (stride[d] > (size_t)PTRDIFF_MAX) rc = MPI_ERR_ARG; /* (ext <= bytes <= INT_MAX) */
        else if (t == el) rc = MPI_Type_create_hvector((int)b->ext[d], (int)(span / a->es), (MPI_Aint)stride[d], t, &u);
        else rc = MPI_Type_create_hvector((int)b->ext[d], 1, (MPI_Aint)stride[d], t, &u);
        if (t != el) MPI_Type_free(&t);
        if (rc != MPI_SUCCESS) return 0;
        t = u;
    }
    if (MPI_Type_commit(&t) != MPI_SUCCESS) { MPI_Type_free(&t); return 0; }
    *count = 1;
    *type = t;
    return 1;
}


/* The MPI type of one element of es bytes (1, 2, 4, 8 bytes, or a multiple
   of 8 as a contiguous run of 8-byte words: *owned = 1, free it after);
   0 where there is none. */
static int dt__mpi_elem_known(size_t es) { /* (dt__mpi_elem_type's rule; it creates nothing) */
    return es && (es <= 8 ? (es & (es - 1)) == 0 : es % 8 == 0 && es / 8 <= (size_t)INT_MAX);
}

static int dt__mpi_elem_type(size_t es, MPI_Datatype *el, int *owned) {
    *owned = 0;
    if (!dt__mpi_elem_known(es)) return 0;
    switch (es) {
    case 1: *el = MPI_UINT8_T; return 1;
    case 2: *el = MPI_UINT16_T; return 1;
    case 4: *el = MPI_UINT32_T; return 1;
    case 8: *el = MPI_UINT64_T; return 1;
    default: break;
    }
    if (MPI_Type_contiguous((int)(es / 8), MPI_UINT64_T, el) != MPI_SUCCESS) return 0;
    if (MPI_Type_commit(el) != MPI_SUCCESS) { MPI_Type_free(el); return 0; }
    *owned = 1;
    return 1;
}

/* Free n message types of a plan (those dt__mpi_box_type made: not el, the
   element type, nor null ones; each left null), then el itself where
   el_owned (dt__mpi_elem_type); after MPI_Finalize nothing (the types went
   with MPI: a tensor destroyed late). */
static void dt__mpi_types_free(MPI_Datatype *types, int n, MPI_Datatype *el, int el_owned) {
    int i, fin = 0;
    if (!(types && n) && !el_owned) return;
    MPI_Finalized(&fin);
    if (fin) return;
    for (i = 0; types && i < n; i++)
        if (types[i] != *el && types[i] != MPI_DATATYPE_NULL) MPI_Type_free(&types[i]);
    if (el_owned) MPI_Type_free(el);
}

/* some of n requests completed: *got of them, their indices in idx */
static dt_status dt__mpi_waitsome(int n, MPI_Request *rq, int *got, int *idx, MPI_Status *sts) {
    int rc = MPI_Waitsome(n, rq, got, idx, sts);
    if (rc == MPI_SUCCESS && *got != MPI_UNDEFINED) return DT_OK;
    *got = 0;
    return dt__mpi_check(rc == MPI_SUCCESS ? MPI_ERR_REQUEST : rc, "MPI_Waitsome");
}


static dt_status dt__mpi_barrier(void *user) { return dt__mpi_check(MPI_Barrier(dt__mpi_comm(user)), "MPI_Barrier"); }

static dt_status dt__mpi_wrap(MPI_Comm comm, void **out) {
    dt__mpi *m = NULL;
    dt_status st = dt__alloc("dt_comm_mpi", sizeof *m, (void **)&m);
    if (st) return st;
    m->comm = comm;
    m->ring = NULL;
    m->ring_bytes = 0;
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
    DT_FREE(m->ring);
    DT_FREE(m);
}

static dt_status dt__comm_mpi_body(MPI_Comm comm, dt_comm **out) {
    int init = 0, fin = 0, rc, level = MPI_THREAD_SINGLE, is_main = 1;
    MPI_Comm dup;
    dt_comm_desc d;
    dt_status st;
    void *user = NULL;
    if (!out) return dt__fail(DT_ERR_ARG, "dt_comm_mpi: out is NULL");
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin)
        return dt__fail(DT_ERR_COMM, "dt_comm_mpi: MPI is %s", fin ? "already finalized (MPI_Finalize was called)"
                                                                  : "not initialized (call MPI_Init or MPI_Init_thread first)");
    /* dtensor calls MPI only from the thread that calls it: below
       MPI_THREAD_SERIALIZED that must be the main thread (the header's
       THREADS paragraph) */
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_SERIALIZED && MPI_Is_thread_main(&is_main) == MPI_SUCCESS && !is_main)
        return dt__fail(DT_ERR_COMM,
                        "dt_comm_mpi: called from a thread other than MPI's main thread, but MPI provides %s: "
                        "dtensor calls MPI from the calling thread, so call it from the main thread or "
                        "initialize MPI with MPI_Init_thread(MPI_THREAD_SERIALIZED) (one thread in MPI at a time)",
                        level == MPI_THREAD_SINGLE ? "MPI_THREAD_SINGLE" : "MPI_THREAD_FUNNELED");
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
    d.start = dt__mpi_start;
    d.test = dt__mpi_test;
    d.wait = dt__mpi_wait;
    d.destroy = dt__mpi_destroy;
    d.alpha = 2e-6; /* shared-memory MPI: a few us per message, ~10 GB/s */
    d.beta = 1e-10;
    if ((st = dt__comm_make("dt_comm_mpi", &d, DT__CAP_OWN_ERRORS | DT__CAP_MPI | DT__CAP_ORDERED, out)))
        dt__mpi_destroy(user);
    return st;
}
DT_API dt_status dt_comm_mpi(MPI_Comm comm, dt_comm **out) { DT__PUBLIC("dt_comm_mpi", dt__comm_mpi_body(comm, out)); }
/* the C handle of a Fortran communicator (dtensor.f90's dt_comm_mpi, >>fortran) */
static MPI_Comm dt__mpi_comm_f2c(MPI_Fint comm) { return MPI_Comm_f2c(comm); }
/* the MPI communicator under c, if c is a dt_comm_mpi comm (or split from
   one) with 2+ ranks: MPI-IO (>>io) runs on it. 0 otherwise (one-rank
   comms may share their parent's MPI_Comm, so they never qualify). */
static int dt__comm_mpi_handle(const dt_comm *c, MPI_Comm *out) {
    if (!c || !dt__native(c) || c->size < 2 || !(c->caps & DT__CAP_MPI) || !c->be.user) return 0;
    *out = dt__mpi_comm(c->be.user);
    return 1;
}
#endif /* DTENSOR_NO_MPI */

/* ---- shm ----
   Single-copy exchanges inside a node. A mesh over the built-in MPI
   backend whose ranks all share one node (MPI_Comm_split_type(
   MPI_COMM_TYPE_SHARED) of its comm keeps every rank) gets an arena: at
   creation with the path on (dt_comm_set_shm(comm, 1) before
   dt_mesh_create, or DTENSOR_SHM=1), at its first large redistribution
   with it on auto (the default; dt__shm_auto in >>redistribute). The
   arena is one MPI-3 shared window (MPI_Win_allocate_shared
   over the mesh comm; DTENSOR_SHM_ARENA bytes per rank, default 256 MiB,
   whose pages are only touched when used), every rank's segment mapped into
   every rank's address space, locked once (MPI_Win_lock_all) for its life.
   Host tensors the library allocates on that mesh with at least
   DTENSOR_SHM_MIN bytes (default 64 KiB; 0: all) take their storage from
   this rank's own segment: a first-fit list of blocks with 64-byte headers,
   so allocation and free are local and dt_tensor_destroy stays local; a
   full arena falls back to malloc (that tensor then moves by MPI).
   Redistribution steps use it (>>redistribute's shm part): with the source
   in the arena on every member of a step, each rank copies its pieces
   straight from their owners' segments. dt__comm_shm_begin and
   dt__comm_shm_end are the step's two synchronisations. dt_mesh_destroy
   (collective) frees the window when no rank has a tensor left in it;
   otherwise the window stays mapped (until MPI_Finalize) and its
   bookkeeping goes with the last tensor. */
#define DT__SHM_ALIGN 64
typedef struct dt__shm_hdr { /* a block of a segment: header, then `size` bytes */
    size_t size, used;
} dt__shm_hdr;

typedef struct dt__shm {
    int live;         /* blocks in use in my segment */
    int mesh_alive;   /* 0 once dt_mesh_destroy has let go */
    size_t cap, min;  /* my segment's bytes; the smallest shard put here */
    char *mine;       /* my segment */
    char **base;      /* mesh rank -> its segment (in this process) */
    struct dt__shm *next; /* the process's arenas (dt__shm_all) */
#ifndef DTENSOR_NO_MPI
    MPI_Win win;
#endif
} dt__shm;

/* Every arena of the process, alive or outliving its mesh with blocks
   still held, so that dt_mesh_shm_free finds a block's arena by its
   address alone (after dt_mesh_destroy, with a NULL mesh) and the
   bookkeeping of a held block is never lost. */
static dt__shm *dt__shm_all;

DT__MAYBE_UNUSED static size_t dt__env_bytes(const char *name, size_t dflt) {
    const char *e = getenv(name);
    char *end = NULL;
    unsigned long long v;
    if (!e || !*e) return dflt;
    v = strtoull(e, &end, 10);
    return end && end != e ? (size_t)v : dflt;
}

/* the path asked for on comm c: dt_comm_set_shm, else DTENSOR_SHM; 0 off,
   1 on (the arena made with the mesh), 2 auto (the default: made at the
   mesh's first large redistribution, dt__shm_auto in >>redistribute) */
DT__MAYBE_UNUSED static int dt__comm_shm_mode(const dt_comm *c) {
    const char *e;
    if (c->root->shm > 1) return c->root->shm - 2; /* (1: -1, the environment) */
    e = getenv("DTENSOR_SHM");
    if (!e || !*e || !strcmp(e, "auto")) return 2;
    return strcmp(e, "0") != 0 && strcmp(e, "off") != 0;
}

static int dt__shm_owns(const dt__shm *s, const void *p) {
    return s && p && (const char *)p >= s->mine && (const char *)p < s->mine + s->cap;
}

/* local: `bytes` from my segment, NULL if it has no room */
static void *dt__shm_alloc(dt__shm *s, size_t bytes) {
    size_t need = (bytes + DT__SHM_ALIGN - 1) / DT__SHM_ALIGN * DT__SHM_ALIGN, off = 0;
    if (!s || !s->mesh_alive || !bytes || need < bytes) return NULL;
    while (off + DT__SHM_ALIGN <= s->cap) {
        dt__shm_hdr *h = (dt__shm_hdr *)(void *)(s->mine + off);
        if (!h->used && h->size >= need) {
            if (h->size >= need + 2 * DT__SHM_ALIGN) { /* split off the rest */
                dt__shm_hdr *r = (dt__shm_hdr *)(void *)(s->mine + off + DT__SHM_ALIGN + need);
                r->size = h->size - need - DT__SHM_ALIGN;
                r->used = 0;
                h->size = need;
            }
            h->used = 1;
            s->live++;
            return s->mine + off + DT__SHM_ALIGN;
        }
        off += DT__SHM_ALIGN + h->size;
    }
    return NULL;
}

static void dt__shm_forget(dt__shm *s) {
    dt__shm **at = &dt__shm_all;
    if (!s) return;
    while (*at && *at != s) at = &(*at)->next;
    if (*at) *at = s->next;
    DT_FREE(s->base);
    DT_FREE(s);
}

/* the arena whose segment holds p, or NULL */
static dt__shm *dt__shm_find(const void *p) {
    dt__shm *s;
    for (s = dt__shm_all; s; s = s->next)
        if (dt__shm_owns(s, p)) return s;
    return NULL;
}

/* local: give p (from dt__shm_alloc) back; neighbouring free blocks merge.
   A p that is not a block in use (freed twice, inside a block) is left
   alone: the arena and its count stay as they are. */
static void dt__shm_free(dt__shm *s, void *p) {
    size_t off = 0;
    dt__shm_hdr *prev = NULL, *blk = NULL;
    while (off + DT__SHM_ALIGN <= s->cap && !blk) { /* find p's header first */
        dt__shm_hdr *h = (dt__shm_hdr *)(void *)(s->mine + off);
        if (s->mine + off + DT__SHM_ALIGN == (char *)p && h->used) blk = h;
        off += DT__SHM_ALIGN + h->size;
    }
    if (!blk) return;
    blk->used = 0;
    off = 0;
    while (off + DT__SHM_ALIGN <= s->cap) {
        dt__shm_hdr *h = (dt__shm_hdr *)(void *)(s->mine + off);
        size_t next = off + DT__SHM_ALIGN + h->size;
        if (prev && !prev->used && !h->used) prev->size += DT__SHM_ALIGN + h->size;
        else prev = h;
        off = next;
    }
    if (!--s->live && !s->mesh_alive) dt__shm_forget(s);
}

#ifndef DTENSOR_NO_MPI
#define DT__SHM_FLOOR ((size_t)1 << 20) /* a smaller arena than this per rank is not worth a window */

/* The bytes asked of MPI for a segment of cap: never a whole number of
   pages. MPICH (ch4) takes page-multiple segments as its cue to try a
   symmetric heap (one address in every process), probing the range page
   by page with msync: 85 ms for 256 MiB a rank at 2 ranks, against 0.05 ms
   without. 64 bytes more keep every segment's start 64-byte aligned. */
static size_t dt__shm_request(size_t cap) { return cap % 4096 ? cap : cap + DT__SHM_ALIGN; }

/* The bytes free where MPI backs shared windows: Open MPI's
   osc_sm_backing_directory when set, else /dev/shm (both MPIs' default on
   Linux); SIZE_MAX where that cannot be read (MPI then decides). tmpfs
   hands out pages when they are touched, so a window larger than this
   is granted and then kills the process that touches past it (SIGBUS),
   or fails on one rank while the others wait in the call. */
static size_t dt__shm_room(void) {
#if defined(__linux__)
    const char *dir = getenv("OMPI_MCA_osc_sm_backing_directory");
    struct statvfs v;
    if (!dir || !*dir) dir = "/dev/shm";
    if (statvfs(dir, &v) == 0 && v.f_frsize > 0) {
        unsigned long long b = (unsigned long long)v.f_bavail, f = (unsigned long long)v.f_frsize;
        return b > (unsigned long long)SIZE_MAX / f ? SIZE_MAX : (size_t)(b * f);
    }
#endif
    return SIZE_MAX;
}

/* the arena's bytes per rank for n ranks on this node: what was asked,
   or what half the free room gives each (the other half is MPI's own
   transport's and the node's), or 0: none (below the floor) */
static size_t dt__shm_fit(size_t want, int n, size_t room) {
    size_t each = room == SIZE_MAX ? SIZE_MAX : room / 2 / (size_t)n;
    want = want < 4 * DT__SHM_ALIGN ? 4 * DT__SHM_ALIGN : want / DT__SHM_ALIGN * DT__SHM_ALIGN;
    if (want > (size_t)PTRDIFF_MAX / 2) want = (size_t)PTRDIFF_MAX / 2 / DT__SHM_ALIGN * DT__SHM_ALIGN; /* MPI_Aint */
    if (want <= each) return want;
    each = each / DT__SHM_ALIGN * DT__SHM_ALIGN;
    return each >= DT__SHM_FLOOR ? each : 0;
}

/* collective over the mesh comm c: the arena, or *out NULL where the
   backend is not MPI, the ranks span nodes or the node's shared memory has
   no room for one (the same answer on every rank: the size is agreed on
   before any rank asks MPI for the window) */
static dt_status dt__comm_shm_make(dt_comm *c, dt__shm **out) {
    MPI_Comm mc, node = MPI_COMM_NULL;
    MPI_Aint qsize = 0;
    int nsize = 0, r, rc, du = 0;
    size_t want = dt__env_bytes("DTENSOR_SHM_ARENA", (size_t)256 << 20), cap, room;
    unsigned long long mine[2], all[2] = {0, 0}; /* {cap, allocated} agreed by MIN */
    dt__shm *s = NULL;
    dt__shm_hdr *h;
    *out = NULL;
    if (!dt__comm_mpi_handle(c, &mc)) return DT_OK;
    if ((rc = MPI_Comm_split_type(mc, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node)) != MPI_SUCCESS)
        return dt__mpi_check(rc, "MPI_Comm_split_type");
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    if (nsize != c->size) return DT_OK; /* several nodes: the MPI path */
    room = dt__shm_room();
    cap = dt__shm_fit(want, c->size, room);
    mine[0] = cap;
    mine[1] = dt__alloc("dt_mesh_create (shared arena)", sizeof *s, (void **)&s) == DT_OK && s;
    if (mine[1]) {
        memset(s, 0, sizeof *s);
        mine[1] = dt__alloc("dt_mesh_create (shared arena)", (size_t)c->size * sizeof(char *), (void **)&s->base) ==
                  DT_OK;
    }
    if ((rc = MPI_Allreduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_MIN, mc)) != MPI_SUCCESS || !all[1] || !s ||
        !all[0]) {
        if (s) dt__shm_forget(s);
        if (rc != MPI_SUCCESS) return dt__mpi_check(rc, "MPI_Allreduce");
        if (!all[1]) return DT_ERR_NOMEM;
        if (c->rank == 0 && dt__log_on(DT__LOG_SHM))
            fprintf(stderr, "dtensor: shm: no arena (the MPI path): %zu bytes a rank asked, %zu ranks' room of %zu "
                    "bytes free where MPI backs shared windows leaves less than %zu each\n", want, (size_t)c->size,
                    room, DT__SHM_FLOOR);
        return DT_OK;
    }
    cap = (size_t)all[0];
    if (c->rank == 0 && dt__log_on(DT__LOG_SHM) && cap < want / DT__SHM_ALIGN * DT__SHM_ALIGN)
        fprintf(stderr, "dtensor: shm: arena of %zu bytes a rank (%zu asked; %zu bytes free where MPI backs shared "
                "windows, for %d ranks)\n", cap, want, room, c->size);
    rc = MPI_Win_allocate_shared((MPI_Aint)dt__shm_request(cap), 1, MPI_INFO_NULL, mc, &s->mine, &s->win);
    if (rc != MPI_SUCCESS) { dt__shm_forget(s); return dt__mpi_check(rc, "MPI_Win_allocate_shared"); }
    mine[0] = s->mine != NULL; /* a success with no segment (seen at sizes near the limits) is no arena */
    if ((rc = MPI_Allreduce(mine, all, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, mc)) != MPI_SUCCESS || !all[0] ||
        !s->mine) { /* (all[0] implies s->mine: said for the static analyzer) */
        MPI_Win_free(&s->win);
        dt__shm_forget(s);
        return rc != MPI_SUCCESS ? dt__mpi_check(rc, "MPI_Allreduce") : DT_OK;
    }
    for (r = 0; r < c->size; r++) {
        void *b = NULL;
        MPI_Win_shared_query(s->win, r, &qsize, &du, &b);
        s->base[r] = (char *)b;
    }
    MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
    s->cap = cap;
    s->min = dt__env_bytes("DTENSOR_SHM_MIN", (size_t)64 << 10);
    s->mesh_alive = 1;
    h = (dt__shm_hdr *)(void *)s->mine;
    h->size = cap - DT__SHM_ALIGN;
    h->used = 0;
    s->next = dt__shm_all;
    dt__shm_all = s;
    *out = s;
    return DT_OK;
}

/* at dt_mesh_create, collective over the mesh comm c: the path on, the
   arena now (dt__comm_shm_make); auto, none yet, but *auto_min set to the
   bytes a rank a redistribution must average to make it (a mesh of one
   rank, or another backend: never); off, none */
static dt_status dt__comm_shm_create(dt_comm *c, dt__shm **out, size_t *auto_min) {
    MPI_Comm mc;
    int mode = dt__comm_shm_mode(c);
    *out = NULL;
    *auto_min = 0;
    if (!mode || !dt__comm_mpi_handle(c, &mc)) return DT_OK;
    if (mode == 1) return dt__comm_shm_make(c, out);
    if (c->size > 1) *auto_min = dt__env_bytes("DTENSOR_SHM_AUTO_MIN", (size_t)1 << 20);
    return DT_OK;
}

/* collective over the mesh comm c (dt_mesh_destroy) */
static void dt__comm_shm_release(dt_comm *c, dt__shm *s) {
    MPI_Comm mc;
    int fin = 0, live, any = 1;
    if (!s) return;
    s->mesh_alive = 0;
    live = s->live;
    MPI_Finalized(&fin);
    if (!fin && dt__comm_mpi_handle(c, &mc) && MPI_Allreduce(&live, &any, 1, MPI_INT, MPI_MAX, mc) == MPI_SUCCESS &&
        !any) {
        MPI_Win_unlock_all(s->win);
        MPI_Win_free(&s->win);
    }
    if (!live) dt__shm_forget(s);
}

/* A step's first synchronisation, over its group g (2+ ranks of the mesh):
   every member's k words in all[member * k ...]; the members' stores to
   their segments before it are visible to every member after it. */
static dt_status dt__comm_shm_begin(const dt__shm *s, dt_comm *g, const int64_t *mine, int k, int64_t *all) {
    MPI_Comm gc;
    int rc;
    if (!dt__comm_mpi_handle(g, &gc)) return dt__fail(DT_ERR_COMM, "dt_comm: the shared path needs an MPI comm");
    MPI_Win_sync(s->win);
    rc = MPI_Allgather(mine, k, MPI_INT64_T, all, k, MPI_INT64_T, gc);
    MPI_Win_sync(s->win);
    return dt__mpi_check(rc, "MPI_Allgather");
}

/* its second: nobody returns (and may write or free its source) before
   every member has read its pieces; counts the bytes as moved */
static dt_status dt__comm_shm_end(const dt__shm *s, dt_comm *g, uint64_t sent, uint64_t recv) {
    MPI_Comm gc;
    if (!dt__comm_mpi_handle(g, &gc)) return dt__fail(DT_ERR_COMM, "dt_comm: the shared path needs an MPI comm");
    dt__count(g, sent, recv);
    MPI_Win_sync(s->win);
    return dt__mpi_check(MPI_Barrier(gc), "MPI_Barrier");
}
#else
static dt_status dt__comm_shm_create(dt_comm *c, dt__shm **out, size_t *auto_min) {
    (void)c;
    *out = NULL;
    *auto_min = 0;
    return DT_OK;
}
static dt_status dt__comm_shm_make(dt_comm *c, dt__shm **out) { (void)c; *out = NULL; return DT_OK; }
static void dt__comm_shm_release(dt_comm *c, dt__shm *s) { (void)c; (void)s; }
static dt_status dt__comm_shm_begin(const dt__shm *s, dt_comm *g, const int64_t *mine, int k, int64_t *all) {
    (void)s; (void)g; (void)mine; (void)k; (void)all;
    return DT_ERR_UNSUPPORTED;
}
static dt_status dt__comm_shm_end(const dt__shm *s, dt_comm *g, uint64_t sent, uint64_t recv) {
    (void)s; (void)g; (void)sent; (void)recv;
    return DT_ERR_UNSUPPORTED;
}
#endif

/* Does the carrier take several messages to one peer, matched in the order
   posted? The built-in MPI backend does (MPI does not let messages of one
   tag overtake); for others a caller sends one message per peer and
   direction. */
static int dt__comm_ordered_messages(dt_comm *c) {
#ifndef DTENSOR_NO_MPI
    return (dt__comm_carrier(c)->caps & DT__CAP_ORDERED) != 0;
#else
    (void)c;
    return 0;
#endif
}

/* Can the carrier post messages as MPI datatypes (dt__comm_start_typed),
   matched by peers that post the same messages as bytes? */
#ifndef DTENSOR_NO_MPI
static int dt__comm_typed_messages(dt_comm *c) { return (dt__comm_carrier(c)->caps & DT__CAP_MPI) != 0; }
#endif

/* ---- the stock error handlers ----
   dt_error_abort and DT_CHECK's end: here, beside the MPI they call (only
   when a program asks for them). */
/* the rank in MPI_COMM_WORLD when MPI is running, else -1 */
static int dt__world_rank(void) {
    int r = -1;
#ifndef DTENSOR_NO_MPI
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down) MPI_Comm_rank(MPI_COMM_WORLD, &r);
#endif
    return r;
}

/* what the stock handler and DT_CHECK end with (only when a program asks) */
static void dt__abort_program(void) {
#ifndef DTENSOR_NO_MPI
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down) MPI_Abort(MPI_COMM_WORLD, 1);
#endif
    abort();
}

DT_API void dt_error_abort(dt_status st, const char *call, const char *msg, void *user) {
    (void)user;
    fprintf(stderr, "dtensor: rank %d: %s failed (%s): %s\n", dt__world_rank(), call ? call : "?", dt_status_string(st),
            msg ? msg : "");
    fflush(stderr);
    dt__abort_program();
}

DT_API void dt_check_failed(dt_status st, const char *expr, const char *file, int line) {
    fprintf(stderr, "dtensor: rank %d: %s:%d: %s failed (%s): %s\n", dt__world_rank(), file ? file : "?", line,
            expr ? expr : "?", dt_status_string(st), dt__errbuf);
    fflush(stderr);
    dt__abort_program();
}

/* >>agree ---------------------------------------------------------------
   Cross-rank agreement before a collective call moves data: the ranks
   exchange (status, hash of the arguments) and, when they differ, a
   description of each rank's arguments, so that ranks passing different
   arguments all fail with one message naming them instead of hanging
   (DTENSOR_CHECK, dt_set_checks). Works on a dt_comm; >>mesh wraps it for
   meshes (dt__consistent). */

/* a fingerprint of what every rank must agree on; FNV-1a */
static uint64_t dt__hash(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ull; }
    return h;
}

/* "rank 2" / "ranks 2, 3, 5" (the first 12, then "... (N in all)") */
static void dt__ranks_str(const int *r, int n, char *buf, size_t cap) {
    size_t len = (size_t)snprintf(buf, cap, "rank%s ", n == 1 ? "" : "s");
    int i;
    for (i = 0; i < n && i < 12 && len < cap; i++) len += (size_t)snprintf(buf + len, cap - len, "%s%d", i ? ", " : "", r[i]);
    if (n > 12 && len < cap) snprintf(buf + len, cap - len, ", ... (%d in all)", n);
}

/* a short description of one rank's arguments, for mismatch messages */
typedef void (*dt__describe_fn)(const void *ctx, char *buf, size_t cap);
#define DT__FN_CHARS 32   /* the call's name in the gathered descriptions */
#define DT__DESC_CHARS 160 /* the call's name, then its arguments           */

/* The slow path of dt__agree_ex (some rank failed, or the hashes differ):
   every rank's (status, hash), then, when the hashes differ, every rank's
   description. Its buffers are allocated first and the ranks agree on that
   allocation's outcome before anything else moves, so a rank out of memory
   fails every rank (DT_ERR_NOMEM naming it) instead of leaving them waiting. */
static dt_status dt__agree_detail(dt_comm *c, const char *fn, dt_status local, uint64_t hash,
                                  dt__describe_fn describe, const void *ctx, int checked) {
    int64_t mine[2], *all = NULL, *desc, ok[2];
    size_t *cnt;
    int j, nrej = 0, nbad = 0, *rej, *bad, n = c->size;
    dt_status st, ast;
    char saved[sizeof dt__errbuf], list[160];
    const char *pre = checked ? "consistency check: " : "";
    memcpy(saved, dt__errbuf, sizeof saved);
    ast = dt__alloc(fn, 2 * (size_t)n * sizeof(int64_t) + ((size_t)n + 1) * DT__DESC_CHARS +
                    2 * (size_t)n * sizeof(size_t) + 2 * (size_t)n * sizeof(int), (void **)&all);
    ok[0] = ast != DT_OK;
    ok[1] = ast != DT_OK ? c->rank : -1;
    if ((st = dt__comm_allmax_ctl(c, ok, 2))) { DT_FREE(all); return dt__within(fn, st); }
    if (ok[0] || ast) {
        DT_FREE(all);
        if (ast) return ast;
        return dt__fail(DT_ERR_NOMEM, "%s: rank %d ran out of memory while the ranks compared their arguments", fn,
                        (int)ok[1]);
    }
    memcpy(dt__errbuf, saved, sizeof saved);
    desc = all + 2 * n;
    cnt = (size_t *)(desc + ((size_t)n + 1) * (DT__DESC_CHARS / 8));
    rej = (int *)(cnt + 2 * n);
    bad = rej + n;
    mine[0] = local;
    mine[1] = (int64_t)hash;
    if ((st = dt__comm_allgather_ctl_into(c, mine, 2, all, cnt))) { DT_FREE(all); return dt__within(fn, st); }
    memcpy(dt__errbuf, saved, sizeof saved);
    for (j = 0; j < n; j++) {
        /* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult): the allgather fills 2 words for every rank of c */
        if (all[2 * j] != DT_OK) rej[nrej++] = j;
        else if (all[2 * j + 1] != all[1]) bad[nbad++] = j;
    }
    st = local;
    if (nrej) {
        /* every rank takes this branch (one gathered table). The first
           rejecting rank's whole message (the remedy is often at its end),
           broadcast: one collective whose size does not grow with the ranks */
        char why[sizeof dt__errbuf];
        memcpy(why, saved, sizeof why);
        ast = dt__comm_broadcast_ctl(c, why, sizeof why, rej[0]);
        why[sizeof why - 1] = 0;
        memcpy(dt__errbuf, saved, sizeof saved);
        if (!local) {
            char what[96];
            size_t len = 0, k = strlen(fn);
            for (j = 0; j < nrej && j < 4; j++)
                if (len < sizeof what)
                    len += (size_t)snprintf(what + len, sizeof what - len, "%s%s", j ? ", " : "",
                                            dt_status_string((dt_status)all[2 * rej[j]]));
            dt__ranks_str(rej, nrej, list, sizeof list);
            if (!ast && why[0]) {
                int full = snprintf(dt__errbuf, sizeof dt__errbuf, "%s: %s%s rejected %s arguments (%s); rank %d: %s", fn,
                                    pre, list, nrej == 1 ? "its" : "their", what, rej[0], why);
                /* too long for the buffer: the reason whole rather than the list of ranks (its own
                   "fn: " said once) */
                if (full < 0 || (size_t)full >= sizeof dt__errbuf)
                    dt__fail(DT_ERR_MISMATCH, "%s: rank %d refused: %s", fn, rej[0],
                             !strncmp(why, fn, k) && why[k] == ':' && why[k + 1] == ' ' ? why + k + 2 : why);
                st = DT_ERR_MISMATCH;
            } else {
                st = dt__fail(DT_ERR_MISMATCH, "%s: %s%s rejected %s arguments (%s)", fn, pre, list,
                              nrej == 1 ? "its" : "their", what);
            }
        } else if (checked && nrej < n) {
            size_t k = strlen(fn);
            int full;
            memcpy(why, dt__errbuf, sizeof why);
            full = snprintf(dt__errbuf, sizeof dt__errbuf, "%s: %sthis rank (%d) rejected its arguments, %d of %d "
                            "ranks accepted theirs: %s", fn, pre, c->rank, n - nrej, n, why);
            if (full < 0 || (size_t)full >= sizeof dt__errbuf) /* as the other ranks' short form */
                dt__fail(DT_ERR_MISMATCH, "%s: rank %d refused: %s", fn, c->rank,
                         !strncmp(why, fn, k) && why[k] == ':' && why[k + 1] == ' ' ? why + k + 2 : why);
            st = DT_ERR_MISMATCH;
        }
    } else if (nbad) {
        char d0[DT__DESC_CHARS], db[DT__DESC_CHARS];
        int64_t *me = desc + (size_t)n * (DT__DESC_CHARS / 8);
        char *m8 = (char *)me;
        dt__ranks_str(bad, nbad, list, sizeof list);
        /* every rank saw the same hashes, so every rank takes this branch */
        memset(m8, 0, DT__DESC_CHARS);
        snprintf(m8, DT__FN_CHARS, "%s", fn);
        if (describe) describe(ctx, m8 + DT__FN_CHARS, DT__DESC_CHARS - DT__FN_CHARS);
        st = dt__comm_allgather_ctl_into(c, me, DT__DESC_CHARS / 8, desc, cnt);
        memcpy(dt__errbuf, saved, sizeof saved);
        if (!st) {
            const char *r0 = (const char *)desc, *rb = (const char *)(desc + (size_t)bad[0] * (DT__DESC_CHARS / 8));
            snprintf(d0, sizeof d0, "%s%s%s", strcmp(r0, fn) ? r0 : "", strcmp(r0, fn) ? " " : "", r0 + DT__FN_CHARS);
            snprintf(db, sizeof db, "%s%s%s", strcmp(rb, fn) ? rb : "", strcmp(rb, fn) ? " " : "", rb + DT__FN_CHARS);
            if (d0[0] || db[0])
                st = dt__fail(DT_ERR_MISMATCH, "%s: %s%s passed different arguments than rank 0 (rank 0: %s; rank %d: "
                              "%s)", fn, pre, list, d0, bad[0], db);
            else
                st = dt__fail(DT_ERR_MISMATCH, "%s: %s%s passed different arguments than rank 0", fn, pre, list);
        }
    }
    DT_FREE(all);
    return dt__within(fn, st);
}

/* Every rank reports (its local status, its desc hash); if any rank failed
   or disagrees, all fail together instead of some hanging in a split. The
   common case (all accepted, one hash) costs one small max-reduction that
   allocates nothing; otherwise dt__agree_detail gathers who failed or
   differs, so the message can show rank 0's arguments and a disagreeing
   rank's (empty without `describe`) and names every rank that failed or
   differs from rank 0. `checked` (consistency checks): a rank whose own
   arguments failed while another rank's passed returns DT_ERR_MISMATCH too
   (its error inside the message). */
static dt_status dt__agree_ex(dt_comm *c, const char *fn, dt_status local, uint64_t hash, dt__describe_fn describe,
                              const void *ctx, int checked) {
    int64_t v[5]; /* failed?, then the hash (dt__ctl_words) */
    dt_status st;
    char saved[sizeof dt__errbuf];
    memcpy(saved, dt__errbuf, sizeof saved);
    v[0] = local != DT_OK;
    dt__ctl_words(hash, v + 1);
    if ((st = dt__comm_allmax_ctl(c, v, 5))) return dt__within(fn, st);
    memcpy(dt__errbuf, saved, sizeof saved);
    if (!v[0] && dt__ctl_same(v + 1)) return local;
    return dt__agree_detail(c, fn, local, hash, describe, ctx, checked);
}

/* The agreement a collective call always makes (mesh set-up, I/O, halos):
   with checks on, a rank that rejected its own arguments returns
   DT_ERR_MISMATCH like the others, so every rank has one verdict. */
static dt_status dt__agree(dt_comm *c, const char *fn, dt_status local, uint64_t hash) {
    return dt__agree_ex(c, fn, local, hash, NULL, NULL, dt__checks_on());
}

/* a local failure is always returned (as itself or another error); said for
   the static analyzer, which does not follow every call. Analysis builds only. */
#ifdef __clang_analyzer__
#define dt__agree(c, fn, local, hash) \
    ((local) ? (dt__agree((c), (fn), (local), (hash)), (local)) : dt__agree((c), (fn), (local), (hash)))
#endif

/* >>mesh ------------------------------------------------------------------
   A mesh is an N-D arrangement of some of a comm's ranks. Its members get a
   communicator of their own (mesh rank order) and one per mesh dim (the
   ranks that differ only in that coordinate); non-members get none and take
   part in nothing after creation. */

#define DT__NAME_MAX 32
enum { DT__SCRATCH_SEND, DT__SCRATCH_RECV, DT__SCRATCH_STEP0, DT__SCRATCH_STEP1, /* redistribution */
       DT__SCRATCH_IN0, DT__SCRATCH_IN1, DT__SCRATCH_IN2, DT__SCRATCH_TMP,         /* op inputs, temps */
       DT__SCRATCH_F32, DT__SCRATCH_F32B, DT__SCRATCH_SCALAR,                    /* reductions in F32; integer AVG parts */
       DT__SCRATCH_STAGE0, DT__SCRATCH_STAGE1,                                  /* staging of devices */
       DT__SCRATCH_PIECES0, DT__SCRATCH_PIECES1, DT__SCRATCH_COUNTS,            /* exchange lists, counts */
       DT__SCRATCH_SLOTS };

struct dt__entry; /* an entry of the strategy cache, opaque here: >>propagate completes it */

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
    void *dscratch[DT__SCRATCH_SLOTS];     /* the same in device memory, and the */
    size_t dscratch_cap[DT__SCRATCH_SLOTS]; /* device each slot belongs to       */
    const dt__device *dscratch_dev[DT__SCRATCH_SLOTS];
    void *apool[4];                        /* host buffers of ended begin/end exchanges, kept */
    size_t apool_cap[4];                   /* for the next (>>redistribute: dt__apool_get) */
    void *pinned[2];                       /* host staging of device shards (>>redistribute) */
    size_t pinned_cap[2];
    const dt__device *pinned_dev[2];
    struct dt__entry *ops;                 /* the strategy cache (>>propagate)    */
    int ops_count;
    unsigned short op_last[DT__OP_COUNT];  /* per op: its last call's cache slot, tried
                                              before hashing (>>propagate)       */
    FILE *explain;                         /* dt_explain (>>propagate)            */
    uint64_t rng_seed, rng_offset;         /* the Philox state (>>rng), equal on all ranks */
    dt__shm *shm;                          /* the shared arena (>>backend's shm), or NULL */
    size_t shm_auto;                       /* DTENSOR_SHM=auto, no arena yet: the bytes a rank
                                              a redistribution must average to make it
                                              (>>redistribute: dt__shm_auto); 0: never */
    int64_t mm_budget;                     /* dt_mesh_set_matmul_budget's bytes, 0: the
                                              default (>>ops) */
};

/* slot `k`'s buffer of at least `bytes` (contents undefined) */
static dt_status dt__scratch(dt_mesh *m, int k, size_t bytes, void **out) {
    dt_status st;
    if (m->shm && (k == DT__SCRATCH_STEP0 || k == DT__SCRATCH_STEP1) && bytes > m->scratch_cap[k]) {
        /* a multi-step plan's buffers between steps: in the shared arena, so
           that every step can take the shared path; else the heap below */
        void *p = bytes >= m->shm->min ? dt__shm_alloc(m->shm, bytes) : NULL;
        if (dt__shm_owns(m->shm, m->scratch[k])) dt__shm_free(m->shm, m->scratch[k]);
        else DT_FREE(m->scratch[k]);
        m->scratch[k] = p;
        m->scratch_cap[k] = p ? bytes : 0;
    }
    /* "work buffer": the public call prefixes its name */
    st = dt__grow(dt__alloc, dt__free, "work buffer", bytes, &m->scratch[k], &m->scratch_cap[k]);
    *out = m->scratch[k];
    return st;
}

/* slot `k` in `dev`'s memory (the host slots for host) */
static dt_status dt__scratch_on(dt_mesh *m, const dt__device *dev, int k, size_t bytes, void **out) {
    dt_status st;
    if (dt__on_host(dev)) return dt__scratch(m, k, bytes, out);
    if (m->dscratch[k] && m->dscratch_dev[k] != dev) { /* another device's: not reusable */
        m->dscratch_dev[k]->free(m->dscratch[k]);
        m->dscratch[k] = NULL;
    }
    st = dt__grow(dev->alloc, dev->free, "dt_tensor_redistribute", bytes, &m->dscratch[k], &m->dscratch_cap[k]);
    if (!st) m->dscratch_dev[k] = dev;
    *out = m->dscratch[k];
    return st;
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

/* the work buffers the mesh keeps for reuse (dt_mesh_trim, dt_mesh_destroy) */
static void dt__mesh_release_buffers(dt_mesh *m) {
    int i;
    for (i = 0; i < DT__SCRATCH_SLOTS; i++) {
        if (dt__shm_owns(m->shm, m->scratch[i])) dt__shm_free(m->shm, m->scratch[i]);
        else DT_FREE(m->scratch[i]);
        if (m->dscratch[i]) m->dscratch_dev[i]->free(m->dscratch[i]);
        m->scratch[i] = m->dscratch[i] = NULL;
        m->scratch_cap[i] = m->dscratch_cap[i] = 0;
    }
    for (i = 0; i < 4; i++) {
        DT_FREE(m->apool[i]);
        m->apool[i] = NULL;
        m->apool_cap[i] = 0;
    }
    for (i = 0; i < 2; i++) {
        if (m->pinned[i]) m->pinned_dev[i]->free_host(m->pinned[i]);
        m->pinned[i] = NULL;
        m->pinned_cap[i] = 0;
    }
}

static void dt__mesh_free(dt_mesh *m) {
    int i;
    if (!m) return;
    for (i = 0; i < DT_MAX_MESH_DIMS; i++) dt__comm_free(m->dim[i]);
    dt__mesh_release_buffers(m);
    DT_FREE(m->ops);
    if (m->comm) dt__comm_shm_release(m->comm, m->shm);
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
    m->rng_seed = DT_RNG_DEFAULT_SEED;
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
                return dt__fail(DT_ERR_MESH, "%s: names[%d] and names[%d] are both \"%s\"", fn, dt__mdim(j), dt__mdim(i),
                                names[i]);
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
            return dt__fail(DT_ERR_MESH, "dt_mesh_create: desc->shape[%d] = %d, must be >= 1", dt__mdim(i),
                            d->shape[i]);
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
                                dt__mdim(i), d->ranks[i], comm->size);
            for (j = 0; j < i; j++)
                if (d->ranks[j] == d->ranks[i])
                    return dt__fail(DT_ERR_MESH, "dt_mesh_create: desc->ranks[%d] and desc->ranks[%d] are both %d",
                                    dt__mdim(j), dt__mdim(i), d->ranks[i]);
        }
    }
    *count = (int)prod;
    return DT_OK;
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


/* With checks on, the mesh ranks agree on (fn, hash) and on their local
   status before a collective call moves anything; `local` otherwise. */
static dt_status dt__consistent(const dt_mesh *m, const char *fn, dt_status local, uint64_t hash,
                                dt__describe_fn describe, const void *ctx) {
    if (!dt__checks_on() || m->rank < 0 || m->size == 1) return local;
    return dt__agree_ex(m->comm, fn, local, local ? 0 : dt__hash(hash, fn, strlen(fn)), describe, ctx, 1);
}
#ifdef __clang_analyzer__ /* as dt__agree below: a local failure is returned */
#define dt__consistent(m, fn, local, hash, describe, ctx) \
    ((local) ? (dt__consistent((m), (fn), (local), (hash), (describe), (ctx)), (local)) \
             : dt__consistent((m), (fn), (local), (hash), (describe), (ctx)))
#endif

static dt_status dt__mesh_create_body(dt_comm *comm, const dt_mesh_desc *desc, dt_mesh **out) {
    dt_mesh *m = NULL;
    int count = 0, i, me = -1;
    dt_status st;
    if (!comm) return dt__fail(DT_ERR_ARG, "dt_mesh_create: comm is NULL");
    if (!out) st = dt__fail(DT_ERR_ARG, "dt_mesh_create: out is NULL");
    else if (!desc) st = dt__fail(DT_ERR_ARG, "dt_mesh_create: desc is NULL");
    else if (!(st = dt__mesh_check_desc(comm, desc, &count)))
        st = dt__mesh_alloc("dt_mesh_create", desc->ndim, desc->shape, count, &m);
    /* a bad argument or a failed allocation on one rank fails them all (not a split that waits) */
    if ((st = dt__agree(comm, "dt_mesh_create", st, st ? 0 : dt__mesh_desc_hash(desc, count)))) {
        dt__mesh_free(m);
        return st;
    }
    for (i = 0; i < desc->ndim; i++)
        if (desc->names[i]) snprintf(m->names[i], DT__NAME_MAX, "%s", desc->names[i]);
    for (i = 0; i < count; i++) {
        m->ranks[i] = desc->ranks ? desc->ranks[i] : i;
        if (m->ranks[i] == comm->rank) me = i;
    }
    m->root = comm->root;
    if ((st = dt__mesh_build_comms(m, comm, me >= 0 ? 0 : -1, me)) ||
        (m->comm && (st = dt__comm_shm_create(m->comm, &m->shm, &m->shm_auto)))) {
        dt__mesh_free(m);
        return dt__within("dt_mesh_create", st);
    }
    *out = m;
    return DT_OK;
}
DT_API dt_status dt_mesh_create(dt_comm *comm, const dt_mesh_desc *desc, dt_mesh **out) {
    DT__PUBLIC("dt_mesh_create", dt__mesh_create_body(comm, desc, out));
}

DT_API void dt_mesh_destroy(dt_mesh *m) { dt__mesh_free(m); }

static dt_status dt__mesh_trim_body(dt_mesh *m) {
    if (!m) return dt__fail(DT_ERR_ARG, "dt_mesh_trim: mesh is NULL");
    dt__mesh_release_buffers(m);
    return DT_OK;
}
DT_API dt_status dt_mesh_trim(dt_mesh *m) { DT__PUBLIC("dt_mesh_trim", dt__mesh_trim_body(m)); }

static dt_status dt__mesh_shm_alloc_body(dt_mesh *m, size_t bytes, void **ptr) {
    if (!ptr) return dt__fail(DT_ERR_ARG, "dt_mesh_shm_alloc: ptr is NULL");
    *ptr = NULL;
    if (!m) return dt__fail(DT_ERR_ARG, "dt_mesh_shm_alloc: m is NULL");
    if (!bytes) return DT_OK;
    if (m->shm && (*ptr = dt__shm_alloc(m->shm, bytes)) != NULL) return DT_OK;
    return dt__alloc("dt_mesh_shm_alloc", bytes, ptr); /* no arena, or full: plain memory */
}
DT_API dt_status dt_mesh_shm_alloc(dt_mesh *m, size_t bytes, void **ptr) {
    DT__PUBLIC("dt_mesh_shm_alloc", dt__mesh_shm_alloc_body(m, bytes, ptr));
}

/* m is not read: a block is found by its address (m may be destroyed) */
DT_API void dt_mesh_shm_free(dt_mesh *m, void *ptr) {
    dt__shm *s = dt__shm_find(ptr);
    (void)m;
    if (!ptr) return;
    if (s) dt__shm_free(s, ptr);
    else DT_FREE(ptr);
}

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

/* what the ranks of a slice / flatten must agree on: the dims, the new name */
static uint64_t dt__mesh_dims_hash(int n, const int *idx, const char *name) {
    uint64_t h = dt__hash(14695981039346656037ull, &n, sizeof n);
    h = dt__hash(h, idx, (size_t)n * sizeof *idx);
    return name ? dt__hash(h, name, strlen(name) + 1) : h;
}

static dt_status dt__flatten_check(const dt_mesh *m, int n, const char *const *names, const char *name, int *idx) {
    int i;
    dt_status st;
    if ((st = dt__mesh_lookup("dt_mesh_flatten", m, n, names, idx))) return st;
    for (i = 1; i < n; i++)
        if (idx[i] != idx[0] + i)
            return dt__fail(DT_ERR_MESH, "dt_mesh_flatten: dims to flatten must be adjacent and in mesh order; "
                            "\"%s\" is dim %d, \"%s\" is dim %d", names[i - 1], idx[i - 1], names[i], idx[i]);
    if (name && strlen(name) >= DT__NAME_MAX)
        return dt__fail(DT_ERR_MESH, "dt_mesh_flatten: name is longer than %d characters", DT__NAME_MAX - 1);
    for (i = 0; name && name[0] && i < m->ndim; i++) /* the kept dims' names stay */
        if ((i < idx[0] || i >= idx[0] + n) && !strcmp(m->names[i], name))
            return dt__fail(DT_ERR_MESH, "dt_mesh_flatten: name \"%s\" is already a dim of the mesh", name);
    return DT_OK;
}

static dt_status dt__mesh_slice_body(const dt_mesh *m, int n, const char *const *names, dt_mesh **out) {
    int idx[DT_MAX_MESH_DIMS], shape[DT_MAX_MESH_DIMS], keep[DT_MAX_MESH_DIMS] = {0};
    int i, r, size = 1, color = 0, key = 0;
    dt_mesh *s = NULL;
    dt_status st;
    st = out ? dt__mesh_lookup("dt_mesh_slice", m, n, names, idx) : dt__fail(DT_ERR_ARG, "dt_mesh_slice: out is NULL");
    if (!m) return st;
    if (!st) {
        for (i = 0; i < n; i++) { shape[i] = m->shape[idx[i]]; size *= shape[i]; keep[idx[i]] = 1; }
        st = dt__mesh_alloc("dt_mesh_slice", n, shape, size, &s);
    }
    /* a bad name or a failed allocation on one rank fails them all (not a split that waits) */
    if (m->rank >= 0 && (st = dt__agree(m->comm, "dt_mesh_slice", st, st ? 0 : dt__mesh_dims_hash(n, idx, NULL)))) {
        dt__mesh_free(s);
        return st;
    }
    if (st) return st;
    s->root = m->root;
    s->rng_seed = m->rng_seed;
    s->rng_offset = m->rng_offset;
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
        if ((st = dt__mesh_build_comms(s, m->comm, color, key))) {
            dt__mesh_free(s);
            return dt__within("dt_mesh_slice", st);
        }
    } else {
        for (r = 0; r < size; r++) s->ranks[r] = -1;
    }
    *out = s;
    return DT_OK;
}
DT_API dt_status dt_mesh_slice(const dt_mesh *m, int n, const char *const *names, dt_mesh **out) {
    DT__PUBLIC("dt_mesh_slice", dt__mesh_slice_body(m, n, names, out));
}

static dt_status dt__mesh_flatten_body(const dt_mesh *m, int n, const char *const *names, const char *name,
                                       dt_mesh **out) {
    int idx[DT_MAX_MESH_DIMS], shape[DT_MAX_MESH_DIMS], i, k = 0, merged = 1;
    dt_mesh *f = NULL;
    dt_status st;
    st = out ? dt__flatten_check(m, n, names, name, idx) : dt__fail(DT_ERR_ARG, "dt_mesh_flatten: out is NULL");
    if (!m) return st;
    for (i = 0; i < m->ndim && !st; i++) {
        if (i > idx[0] && i < idx[0] + n) continue;
        if (i == idx[0]) {
            int j;
            for (j = 0; j < n; j++) merged *= m->shape[idx[j]];
            shape[k++] = merged;
        } else shape[k++] = m->shape[i];
    }
    /* row-major order is unchanged by merging adjacent dims: same mesh ranks */
    if (!st) st = dt__mesh_alloc("dt_mesh_flatten", k, shape, m->size, &f);
    /* a bad name or a failed allocation on one rank fails them all (not a split that waits) */
    if (m->rank >= 0 && (st = dt__agree(m->comm, "dt_mesh_flatten", st, st ? 0 : dt__mesh_dims_hash(n, idx, name)))) {
        dt__mesh_free(f);
        return st;
    }
    if (st) return st;
    f->root = m->root;
    f->rng_seed = m->rng_seed;
    f->rng_offset = m->rng_offset;
    memcpy(f->ranks, m->ranks, (size_t)m->size * sizeof(int));
    for (i = 0, k = 0; i < m->ndim; i++) {
        if (i > idx[0] && i < idx[0] + n) continue;
        if (i == idx[0]) { if (name) snprintf(f->names[k], DT__NAME_MAX, "%s", name); }
        else memcpy(f->names[k], m->names[i], DT__NAME_MAX);
        k++;
    }
    if (m->rank >= 0 && (st = dt__mesh_build_comms(f, m->comm, 0, m->rank))) {
        dt__mesh_free(f);
        return dt__within("dt_mesh_flatten", st);
    }
    *out = f;
    return DT_OK;
}
DT_API dt_status dt_mesh_flatten(const dt_mesh *m, int n, const char *const *names, const char *name,
                                 dt_mesh **out) {
    DT__PUBLIC("dt_mesh_flatten", dt__mesh_flatten_body(m, n, names, name, out));
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
    void *data;           /* in the memory of `dev` */
    int owns;
    const dt__device *dev; /* desc.device's table */
    struct dt__halo *halo; /* ghost cells and their exchange plan (>>halo), or NULL */
    void (*halo_free)(struct dt__halo *h); /* frees `halo`: >>halo's, given with it */
    int64_t *sizes;       /* the tensor's copy of its dt_shard_sizes arrays (desc points here) */
    int strided;          /* 1: the shard is not one row-major span (local_strides, local_ghost) */
    int64_t stride[DT_MAX_DIMS]; /* element strides of the storage (desc.local_strides points here) */
    int ghosted;          /* 1: data sits inside a ghosted array (desc.local_ghost) */
    int64_t ghost[DT_MAX_DIMS]; /* its ghost room per dim (desc.local_ghost points here) */
    char *storage;        /* ghosted: the array's first element (the caller's `local`) */
    dt__shm *shm;         /* data is a block of this mesh arena (>>backend's shm), or NULL */
    void *async;          /* the target of a redistribution begun, not ended: >>redistribute's record, */
    void (*async_abandon)(dt_tensor *t); /* or NULL; and its end for dt_tensor_destroy, given with it */
};

typedef struct dt__halo dt__halo;

/* A halo is >>halo's, below: it hands the tensor its free function along
   with it, so that a tensor can drop one without naming code it precedes. */
static void dt__tensor_set_halo(dt_tensor *t, dt__halo *h, void (*free_fn)(dt__halo *h)) {
    if (t->halo) t->halo_free(t->halo);
    t->halo = h;
    t->halo_free = free_fn;
}

/* One Shard's rule fields, before the shape is looked at */
static dt_status dt__check_rule(const char *fn, const dt_mesh *m, int i, const dt_placement *p) {
    if (p->split > DT_SPLIT_CYCLIC)
        return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d].split = %d (0 chunk, 1 balanced, 2 sizes, 3 cyclic)", fn,
                        dt__mdim(i), (int)p->split);
    if (p->split == DT_SPLIT_CYCLIC && p->block <= 0)
        return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d] = dt_shard_cyclic(%d, %lld): the block must be > 0", fn,
                        dt__mdim(i), (int)p->dim, (long long)p->block);
    if (p->split == DT_SPLIT_SIZES && !p->sizes)
        return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d] = dt_shard_sizes(%d, NULL): sizes is NULL", fn, dt__mdim(i),
                        (int)p->dim);
    if (p->split == DT_SPLIT_SIZES && p->block && p->block != m->shape[i])
        return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d] is dt_shard_sizes with block = %lld: 0, or the number of "
                        "sizes (%d, the mesh dim's ranks)", fn, dt__mdim(i), (long long)p->block, m->shape[i]);
    if (p->split == DT_SPLIT_CYCLIC && (p->src < 0 || p->src >= m->shape[i]))
        return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d] = dt_shard_cyclic_src(%d, %lld, %d): src is the mesh "
                        "coordinate of the first block (ScaLAPACK RSRC/CSRC) and must be 0..%d (mesh dim %d has %d "
                        "rank%s)", fn, dt__mdim(i), (int)p->dim, (long long)p->block, (int)p->src, m->shape[i] - 1, i,
                        m->shape[i], m->shape[i] == 1 ? "" : "s");
    if (p->split != DT_SPLIT_CYCLIC && p->src)
        return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d].src = %d, but the rule is not cyclic", fn, dt__mdim(i),
                        (int)p->src);
    if (p->split != DT_SPLIT_CYCLIC && p->split != DT_SPLIT_SIZES && p->block)
        return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d].block = %lld, but the rule is not cyclic", fn, dt__mdim(i),
                        (long long)p->block);
    if (p->split != DT_SPLIT_SIZES && p->sizes)
        return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d].sizes is set, but the rule is not dt_shard_sizes", fn, dt__mdim(i));
    return DT_OK;
}

/* A sizes rule on mesh dim i: no negative size, and they sum to the extent
   left by the earlier mesh dims on that tensor dim, for every coordinate of
   those mesh dims (a nested sizes array must fit each parent part). */
static dt_status dt__check_sizes(const char *fn, const dt_mesh *m, int i, const dt_placement *norm,
                                 const int64_t *shape) {
    const dt_placement *p = &norm[i];
    int coord[DT_MAX_MESH_DIMS], c, j, d = p->dim;
    int64_t sum = 0;
    for (c = 0; c < m->shape[i]; c++) {
        if (p->sizes[c] < 0)
            return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d] = dt_shard_sizes(%d, sizes): sizes[%d] = %lld is "
                            "negative", fn, dt__mdim(i), d, c, (long long)p->sizes[c]);
        if (p->sizes[c] > shape[d] - sum)
            return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d] = dt_shard_sizes(%d, sizes): sizes[0..%d] add up to "
                            "more than dim %d's %lld", fn, dt__mdim(i), d, c, d, (long long)shape[d]);
        sum += p->sizes[c];
    }
    memset(coord, 0, sizeof coord);
    for (;;) { /* every coordinate of the earlier mesh dims that shard d */
        dt__chain ch;
        dt__chain_build(shape[d], i, m->shape, coord, norm, d, &ch);
        if (ch.ext != sum)
            return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d] = dt_shard_sizes(%d, sizes): the sizes add up to "
                            "%lld, but the part of dim %d they split has %lld element%s%s", fn, dt__mdim(i), d, (long long)sum,
                            d, (long long)ch.ext, ch.ext == 1 ? "" : "s",
                            ch.n ? " (for some coordinate of the earlier mesh dims that shard it)" : "");
        for (j = i - 1; j >= 0; j--) {
            if (norm[j].kind != DT_SHARD || norm[j].dim != d) continue;
            if (++coord[j] < m->shape[j]) break;
            coord[j] = 0;
        }
        if (j < 0) break;
    }
    return DT_OK;
}

/* Check placements against the mesh and the tensor's shape, writing
   normalised ones (negative shard dims counted from the end, unused fields
   zero, a sizes rule's count in `block`). `given` is how many entries the
   caller's array has. The sizes arrays are the caller's until a tensor
   copies them (dt__tensor_make). */
static dt_status dt__check_placements(const char *fn, const dt_mesh *m, int ndim, const int64_t *shape,
                                      const dt_placement *pl, int given, dt_placement *norm) {
    dt_status st;
    int i;
    for (i = 0; i < given; i++) {
        dt_placement p = pl[i];
        char b[48];
        if (i >= m->ndim) {
            if (p.kind || p.dim || p.reduce || p.split || p.src || p.block || p.sizes)
                return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d] = %s but the mesh has %d dim%s", fn, dt__mdim(i),
                                dt__placement_str(p, -1, b, sizeof b), m->ndim, m->ndim == 1 ? "" : "s");
            continue;
        }
        if (p.kind != DT_SHARD && (p.split || p.src || p.block || p.sizes))
            return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d] is not a Shard but has split = %d, src = %d, block = "
                            "%lld, sizes = %s (split rules are for Shard only)", fn, dt__mdim(i), (int)p.split, (int)p.src,
                            (long long)p.block, p.sizes ? "set" : "NULL");
        if (p.kind == DT_SHARD) {
            int d = p.dim < 0 ? p.dim + ndim : p.dim;
            if (d < 0 || d >= ndim)
                return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d] = %s but the tensor has %d dim%s", fn,
                                dt__mdim(i), dt__placement_str(p, -1, b, sizeof b), ndim, ndim == 1 ? "" : "s");
            if ((st = dt__check_rule(fn, m, i, &p))) return st;
            norm[i] = p;
            norm[i].dim = (int8_t)d;
            norm[i].reduce = 0;
            if (p.split == DT_SPLIT_SIZES) norm[i].block = m->shape[i];
        } else if (p.kind == DT_PARTIAL) {
            if (p.reduce > DT_MIN)
                return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d] = Partial with reduce op %d (0..3)", fn, dt__mdim(i),
                                (int)p.reduce);
            norm[i] = dt_partial((dt_reduce)p.reduce);
        } else if (p.kind == DT_REPLICATE) {
            norm[i] = dt_replicate();
        } else {
            return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d].kind = %d (0 Replicate, 1 Shard, 2 Partial)", fn,
                            dt__mdim(i), (int)p.kind);
        }
    }
    for (i = 0; i < m->ndim && i < given; i++)
        if (norm[i].kind == DT_SHARD && norm[i].split == DT_SPLIT_SIZES && (st = dt__check_sizes(fn, m, i, norm, shape)))
            return st;
    return DT_OK;
}

/* Partial(MAX/MIN) orders values: complex numbers have no order (torch
   refuses max/min on them too), so a complex tensor may not be so placed */
static dt_status dt__check_complex_partial(const char *fn, dt_dtype t, const dt_placement *pl, int n) {
    int i;
    if (!dt__is_complex(t)) return DT_OK;
    for (i = 0; i < n; i++)
        if (pl[i].kind == DT_PARTIAL && (pl[i].reduce == DT_MAX || pl[i].reduce == DT_MIN))
            return dt__fail(DT_ERR_DTYPE, "%s: placements[%d] = Partial(%s) but the dtype is %s: complex numbers "
                            "have no max/min (Partial(sum) and Partial(avg) are defined)", fn, dt__mdim(i),
                            pl[i].reduce == DT_MAX ? "max" : "min", dt_dtype_name(t));
    return DT_OK;
}

/* The size rule every tensor (and every op's result) obeys: the product of
   its dims, a 0 counted as 1, times the element size fits in int64 (and
   size_t). So no product of any of its extents -- a numel, a stride, a
   flat index, an empty tensor's included -- can overflow. shape >= 0. */
static dt_status dt__shape_fits(const char *fn, const char *what, dt_dtype t, int ndim, const int64_t *shape) {
    const int64_t lim = (uint64_t)SIZE_MAX < (uint64_t)INT64_MAX ? (int64_t)SIZE_MAX : INT64_MAX;
    int64_t n = (int64_t)dt_dtype_size(t);
    int i;
    for (i = 0; i < ndim; i++) {
        if (shape[i] <= 1) continue;
        if (n > lim / shape[i]) {
            char sh[160];
            return dt__fail(DT_ERR_SHAPE, "%s: %s %s of %s: its dims (0 counted as 1) times %zu bytes overflow "
                            "int64", fn, what, dt__shape_str(shape, ndim, sh, sizeof sh), dt_dtype_name(t),
                            dt_dtype_size(t));
        }
        n *= shape[i];
    }
    return DT_OK;
}

/* validate a desc and write its normalised copy */
static dt_status dt__check_desc(const char *fn, const dt_mesh *m, const dt_tensor_desc *d, dt_tensor_desc *norm) {
    dt_status st;
    int i;
    if (!m) return dt__fail(DT_ERR_ARG, "%s: mesh is NULL", fn);
    if (!d) return dt__fail(DT_ERR_ARG, "%s: desc is NULL", fn);
    if (!dt__dtype_valid(d->dtype)) return dt__fail(DT_ERR_DTYPE, "%s: desc->dtype = %d is not a dt_dtype", fn, (int)d->dtype);
    if (d->ndim < 0 || d->ndim > DT_MAX_DIMS)
        return dt__fail(DT_ERR_SHAPE, "%s: desc->ndim = %d, must be 0..%d", fn, d->ndim, DT_MAX_DIMS);
    if (!dt__device_of(d->device))
        return dt__fail(DT_ERR_DEVICE, "%s: desc->device = %d is not in this build (DT_HOST = 0; DT_CUDA = 1 "
                        "needs dtensor_cuda.h in the file that defines DTENSOR_IMPLEMENTATION)", fn, d->device);
    for (i = 0; i < d->ndim; i++)
        if (d->shape[i] < 0)
            return dt__fail(DT_ERR_SHAPE, "%s: desc->shape[%d] = %lld is negative", fn, dt__tdim(i, d->ndim),
                            (long long)d->shape[i]);
    if ((st = dt__shape_fits(fn, "desc->shape", d->dtype, d->ndim, d->shape))) return st;
    memset(norm, 0, sizeof *norm);
    norm->dtype = d->dtype;
    norm->ndim = d->ndim;
    norm->device = d->device;
    memcpy(norm->shape, d->shape, (size_t)d->ndim * sizeof(int64_t));
    if ((st = dt__check_placements(fn, m, d->ndim, d->shape, d->placements, DT_MAX_MESH_DIMS, norm->placements)))
        return st;
    return dt__check_complex_partial(fn, d->dtype, norm->placements, m->ndim);
}

static void dt__tensor_box(const dt_mesh *m, const dt_tensor_desc *d, const int *coord, dt__box *b) {
    dt__layout_box(d->ndim, d->shape, m->ndim, m->shape, coord, d->placements, b);
}

/* the desc's sizes arrays into one allocation of the tensor's own, so that
   the caller may free theirs (and a result never points into its inputs) */
static dt_status dt__own_sizes(const char *fn, dt_tensor *t) {
    size_t n = 0;
    int i;
    dt_status st;
    for (i = 0; i < DT_MAX_MESH_DIMS; i++)
        if (t->desc.placements[i].kind == DT_SHARD && t->desc.placements[i].split == DT_SPLIT_SIZES)
            n += (size_t)t->desc.placements[i].block;
    if (!n) return DT_OK;
    if ((st = dt__alloc(fn, n * sizeof(int64_t), (void **)&t->sizes))) return st;
    for (i = 0, n = 0; i < DT_MAX_MESH_DIMS; i++) {
        dt_placement *p = &t->desc.placements[i];
        if (p->kind != DT_SHARD || p->split != DT_SPLIT_SIZES) continue;
        memcpy(t->sizes + n, p->sizes, (size_t)p->block * sizeof(int64_t));
        p->sizes = t->sizes + n;
        n += (size_t)p->block;
    }
    return DT_OK;
}

/* row-major strides of a contiguous tensor's shard */
static void dt__tensor_set_rowmajor(dt_tensor *t) {
    int64_t s = 1;
    int d;
    for (d = t->desc.ndim - 1; d >= 0; d--) { t->stride[d] = s; s *= t->box.ext[d]; }
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
    t->desc.local_ghost = NULL; /* contiguous; dt_tensor_from_local sets them after */
    t->desc.local_strides = NULL;
    t->dev = dt__device_of(norm->device);
    if ((st = dt__own_sizes(fn, t))) { DT_FREE(t); return st; }
    if (m->rank >= 0) {
        dt__tensor_box(m, norm, m->coord, &t->box);
        t->numel = dt__box_numel(norm->ndim, &t->box);
    } else {
        dt__box_empty(norm->ndim, &t->box);
        t->numel = 0;
    }
    t->bytes = t->numel * dt_dtype_size(norm->dtype);
    dt__tensor_set_rowmajor(t);
    if (data) {
        t->data = data;
    } else if (t->bytes) {
        if (m->shm && dt__on_host(t->dev) && t->bytes >= m->shm->min && (t->data = dt__shm_alloc(m->shm, t->bytes)))
            t->shm = m->shm; /* the mesh's shared arena: peers on the node read it in place */
        else if ((st = t->dev->alloc(fn, t->bytes, &t->data))) { DT_FREE(t->sizes); DT_FREE(t); return st; }
        t->owns = 1;
        if (zero && (st = t->dev->zero(fn, t->data, t->bytes))) { dt_tensor_destroy(t); return st; }
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
    DT__PUBLIC("dt_tensor_empty", dt__tensor_create("dt_tensor_empty", m, d, 0, out));
}

DT_API dt_status dt_tensor_zeros(dt_mesh *m, const dt_tensor_desc *d, dt_tensor **out) {
    DT__PUBLIC("dt_tensor_zeros", dt__tensor_create("dt_tensor_zeros", m, d, 1, out));
}

static uint64_t dt__desc_hash(const dt_tensor_desc *d) {
    uint64_t h = 14695981039346656037ull;
    int32_t v[3 + 3 * DT_MAX_MESH_DIMS];
    int i;
    v[0] = (int32_t)d->dtype;
    v[1] = d->ndim;
    v[2] = d->device;
    for (i = 0; i < DT_MAX_MESH_DIMS; i++) {
        v[3 + 3 * i] = d->placements[i].kind | d->placements[i].split << 8;
        v[4 + 3 * i] = d->placements[i].dim;
        v[5 + 3 * i] = d->placements[i].reduce;
    }
    h = dt__hash(h, v, sizeof v);
    for (i = 0; i < DT_MAX_MESH_DIMS; i++) { /* the split rules' parameters: ranks must agree on them too */
        const dt_placement *p = &d->placements[i];
        if (p->kind != DT_SHARD || !p->split) continue;
        h = dt__hash(h, &p->block, sizeof p->block);
        if (p->src) h = dt__hash(h, &p->src, sizeof p->src); /* (src 0 hashes as before) */
        if (p->split == DT_SPLIT_SIZES && p->sizes && p->block > 0)
            h = dt__hash(h, p->sizes, (size_t)p->block * sizeof(int64_t));
    }
    return dt__hash(h, d->shape, (size_t)d->ndim * sizeof(int64_t));
}

DT_API uint64_t dt_tensor_desc_hash(const dt_tensor_desc *d) { return dt__desc_hash(d); }

/* consistency checks (dt__consistent) of the calls that take one tensor
   spec: the spec, the mesh's shape, optional destination placements and a
   few static args; described as "f32[8, 6] [S(0)] -> [R] (args)" */
typedef struct dt__spec_ctx {
    const dt_tensor_desc *d;
    int mndim;
    const dt_placement *dst;   /* optional */
    const char *args;          /* optional, already formatted */
} dt__spec_ctx;

static void dt__describe_spec(const void *ctx, char *buf, size_t cap) {
    const dt__spec_ctx *x = (const dt__spec_ctx *)ctx;
    char sh[96], a[64], b[64];
    if (!x->d) { snprintf(buf, cap, "%s", x->args ? x->args : ""); return; }
    /* (a description cut at cap is fine: the result is tested only to say so to GCC's -Wformat-truncation) */
    if (snprintf(buf, cap, "%s%s %s%s%s%s%s", dt_dtype_name(x->d->dtype), dt__shape_str(x->d->shape, x->d->ndim, sh, sizeof sh),
                 dt__placements_str(x->d->placements, x->mndim, x->d->ndim, a, sizeof a), x->dst ? " -> " : "",
                 x->dst ? dt__placements_str(x->dst, x->mndim, x->d->ndim, b, sizeof b) : "", x->args ? " " : "",
                 x->args ? x->args : "") < 0)
        buf[0] = 0;
}

static dt_status dt__consistent_spec(const dt_mesh *m, const char *fn, dt_status local, const dt_tensor_desc *d,
                                     const dt_placement *dst, const int64_t *args, int nargs, const char *args_str) {
    dt__spec_ctx x;
    uint64_t h;
    if (!dt__checks_on() || m->rank < 0 || m->size == 1) return local; /* (the cheap way out first) */
    h = d && !local ? dt__desc_hash(d) : 0;
    h = dt__hash(h, m->shape, (size_t)m->ndim * sizeof(int));
    if (dst) { /* the placements' fields, not their bytes (padding, a sizes array's address) */
        dt_tensor_desc pd;
        memset(&pd, 0, sizeof pd);
        memcpy(pd.placements, dst, (size_t)m->ndim * sizeof *dst);
        h ^= dt__desc_hash(&pd) * 0x9e3779b97f4a7c15ull;
    }
    if (nargs) h = dt__hash(h, args, (size_t)nargs * sizeof *args);
    x.d = local ? NULL : d;
    x.mndim = m->ndim;
    x.dst = dst;
    x.args = args_str;
    return dt__consistent(m, fn, local, h, dt__describe_spec, &x);
}
#ifdef __clang_analyzer__ /* a local failure is returned (for the static analyzer) */
#define dt__consistent_spec(m, fn, local, d, dst, args, nargs, args_str) \
    ((local) ? (dt__consistent_spec((m), (fn), (local), (d), (dst), (args), (nargs), (args_str)), (local)) \
             : dt__consistent_spec((m), (fn), (local), (d), (dst), (args), (nargs), (args_str)))
#endif

static dt_status dt__mesh_agree_body(const dt_mesh *m, const char *fn, dt_status local, const dt_tensor_desc *d,
                                     const int64_t *args, int nargs, const char *what) {
    if (!m) return dt__fail(DT_ERR_ARG, "dt_mesh_agree: mesh is NULL");
    if (!fn) return dt__fail(DT_ERR_ARG, "dt_mesh_agree: fn is NULL");
    if (!local && d && (d->ndim < 0 || d->ndim > DT_MAX_DIMS))
        local = dt__fail(DT_ERR_ARG, "%s: dt_mesh_agree: d->ndim = %d, must be 0..%d", fn, d->ndim, DT_MAX_DIMS);
    if (!local && (nargs < 0 || (nargs > 0 && !args)))
        local = dt__fail(DT_ERR_ARG, "%s: dt_mesh_agree: nargs = %d with args %s", fn, nargs, args ? "given" : "NULL");
    if (local) {
        d = NULL;
        args = NULL;
        nargs = 0;
    }
    return dt__consistent_spec(m, fn, local, d, NULL, args, nargs, what);
}
/* It reports under fn, the call it agrees for, and only a failure that is
   new here: a local one was reported by dt_set_last_error already (inside
   a dt_call_begin/dt_call_end bracket nothing reports before the end). */
DT_API dt_status dt_mesh_agree(const dt_mesh *m, const char *fn, dt_status local, const dt_tensor_desc *d,
                               const int64_t *args, int nargs, const char *what) {
    dt_status st;
    dt__public_depth++;
    st = dt__mesh_agree_body(m, fn, local, d, args, nargs, what);
    dt__public_depth--;
    if (dt__public_depth == 0 && (!m || !fn)) dt__call_handler(st, "dt_mesh_agree");
    else if (dt__public_depth == 0 && local == DT_OK) dt__call_handler(st, fn);
    return st;
}

/* which mesh dims dt_mesh_allreduce reduces over (a bit each), or a failure */
static dt_status dt__allreduce_dims(const dt_mesh *m, int ndims, const int *dims, unsigned *mask) {
    const char *fn = "dt_mesh_allreduce";
    int i;
    *mask = 0;
    if (ndims == 0) {
        *mask = (1u << m->ndim) - 1u;
        return DT_OK;
    }
    if (ndims < 0 || ndims > m->ndim || !dims)
        return dt__fail(DT_ERR_ARG, "%s: ndims = %d with dims %s; the mesh has %d dims (0: all of them)", fn, ndims,
                        dims ? "given" : "NULL", m->ndim);
    for (i = 0; i < ndims; i++) {
        if (dims[i] < 0 || dims[i] >= m->ndim)
            return dt__fail(DT_ERR_ARG, "%s: dims[%d] = %d is not a dim of the %d-d mesh", fn, i, dims[i], m->ndim);
        if (*mask & (1u << dims[i])) return dt__fail(DT_ERR_ARG, "%s: mesh dim %d is named twice in dims", fn, dims[i]);
        *mask |= 1u << dims[i];
    }
    return DT_OK;
}

/* the ranks that share this rank's coordinates outside the mesh dims in mask */
static int dt__mesh_group_size(const dt_mesh *m, unsigned mask) {
    int d, n = 1;
    for (d = 0; d < m->ndim; d++)
        if (mask & (1u << d)) n *= m->shape[d];
    return n;
}

/* values[0..count) *= a, for the floating dtypes, complex ones included
   (AVG = SUM / n) */
static void dt__scale_values(void *values, size_t count, dt_dtype dtype, double a) {
    size_t i, es = dt_dtype_size(dtype);
    if (dtype == DT_C64 || dtype == DT_C128) { /* both parts */
        dt__scale_values(values, 2 * count, dtype == DT_C64 ? DT_F32 : DT_F64, a);
        return;
    }
    for (i = 0; i < count; i++) {
        char *p = (char *)values + i * es;
        float x;
        if (dtype == DT_F64) {
            *(double *)(void *)p *= a;
            continue;
        }
        dt__gather_f32(dtype, p, 1, &x, 1); /* F32, F16, BF16 */
        x = (float)(x * a);
        dt__scatter_f32(dtype, &x, p, 1, 1);
    }
}

static dt_status dt__mesh_allreduce_body(dt_mesh *m, int ndims, const int *dims, void *values, size_t count,
                                         dt_dtype dtype, dt_reduce op) {
    const char *fn = "dt_mesh_allreduce";
    unsigned mask = 0;
    int64_t args[4];
    int d;
    dt_status st = DT_OK;
    if (!m) return dt__fail(DT_ERR_ARG, "%s: mesh is NULL", fn);
    if (m->rank < 0) return DT_OK; /* not a member: nothing to reduce */
    if ((unsigned)dtype >= DT_NUM_DTYPES) st = dt__fail(DT_ERR_DTYPE, "%s: dtype %d is not a dt_dtype", fn, (int)dtype);
    else if ((unsigned)op > DT_MIN) st = dt__fail(DT_ERR_ARG, "%s: op %d is not a dt_reduce", fn, (int)op);
    else if (count && !values) st = dt__fail(DT_ERR_ARG, "%s: values is NULL with count %zu", fn, count);
    else if (count > (size_t)PTRDIFF_MAX / dt_dtype_size(dtype))
        st = dt__fail(DT_ERR_ARG, "%s: count %zu of %s (%zu bytes each) overflows the byte size", fn, count,
                      dt_dtype_name(dtype), dt_dtype_size(dtype));
    else if ((dtype == DT_C64 || dtype == DT_C128) && (op == DT_MAX || op == DT_MIN))
        st = dt__fail(DT_ERR_DTYPE, "%s: %s of %s: complex numbers have no order (DT_SUM or DT_AVG)", fn,
                      dt__reduce_name(op), dt_dtype_name(dtype));
    else if (op == DT_AVG && (dtype == DT_I32 || dtype == DT_I64 || dtype == DT_U8))
        st = dt__fail(DT_ERR_DTYPE, "%s: DT_AVG of %s: reduce with DT_SUM and divide (an integer mean truncates)", fn,
                      dt_dtype_name(dtype));
    else st = dt__allreduce_dims(m, ndims, dims, &mask);
    args[0] = (int64_t)count;
    args[1] = st ? 0 : (int64_t)dtype;
    args[2] = st ? 0 : (int64_t)op;
    args[3] = (int64_t)mask;
    st = dt__consistent_spec(m, fn, st, NULL, NULL, args, 4, "count, dtype, op, mesh dims");
    if (st || !count) return st;
    /* the whole mesh (every dim of more than one rank): one collective over
       its comm, not one per dim */
    if (dt__mesh_group_size(m, mask) == m->size)
        st = dt__within(fn, dt__comm_allreduce(m->comm, values, values, count, dtype, op == DT_AVG ? DT_SUM : op));
    else
        for (d = 0; !st && d < m->ndim; d++)
            if ((mask & (1u << d)) && m->shape[d] > 1)
                st = dt__within(fn,
                                dt__comm_allreduce(m->dim[d], values, values, count, dtype, op == DT_AVG ? DT_SUM : op));
    if (!st && op == DT_AVG) dt__scale_values(values, count, dtype, 1.0 / dt__mesh_group_size(m, mask));
    return st;
}
DT_API dt_status dt_mesh_allreduce(dt_mesh *m, int ndims, const int *dims, void *values, size_t count, dt_dtype dtype,
                                   dt_reduce op) {
    DT__PUBLIC("dt_mesh_allreduce", dt__mesh_allreduce_body(m, ndims, dims, values, count, dtype, op));
}

/* Does placing by pl give this rank the local shape ls? */
static int dt__shape_under(const dt_mesh *m, const dt_tensor_desc *norm, const dt_placement *pl, const int64_t *ls) {
    dt__box b;
    int d;
    dt__layout_box(norm->ndim, norm->shape, m->ndim, m->shape, m->coord, pl, &b);
    for (d = 0; d < norm->ndim; d++)
        if (b.ext[d] != ls[d]) return 0;
    return 1;
}

/* What to do when a local shape contradicts the rule: the rule that gives
   it, if a near one does (balanced for chunk, another source coordinate
   for cyclic: the two splits codes make by themselves), else the
   catch-all. One rank's shape cannot prove a rule; it can point at one. */
static void dt__local_shape_hint(const dt_mesh *m, const dt_tensor_desc *norm, const int64_t *ls, char *buf,
                                 size_t cap) {
    dt_placement pl[DT_MAX_MESH_DIMS];
    int i, c, cyc[DT_MAX_MESH_DIMS], nc = 0, any = 0;
    long tries = 1, t;
    memcpy(pl, norm->placements, sizeof pl);
    for (i = 0; i < m->ndim; i++)
        if (pl[i].kind == DT_SHARD && pl[i].split == DT_SPLIT_CHUNK) { pl[i].split = DT_SPLIT_BALANCED; any = 1; }
    if (any && dt__shape_under(m, norm, pl, ls)) {
        snprintf(buf, cap, "the balanced split (N/k + (c < N%%k), PETSc's and most MPI codes') gives it: name that "
                 "rule, dt_shard_balanced(dim), instead of dt_shard (torch.chunk)");
        return;
    }
    memcpy(pl, norm->placements, sizeof pl);
    for (i = 0; i < m->ndim; i++)
        if (pl[i].kind == DT_SHARD && pl[i].split == DT_SPLIT_CYCLIC && tries <= 4096) { cyc[nc++] = i; tries *= m->shape[i]; }
    for (t = 1; nc && t < tries; t++) { /* every other combination of sources (t = 0: the given one) */
        long r = t;
        char one[48], all[160] = "";
        size_t len = 0;
        for (c = 0; c < nc; c++) {
            int k = m->shape[cyc[c]];
            pl[cyc[c]].src = (int32_t)((norm->placements[cyc[c]].src + r % k) % k);
            r /= k;
        }
        if (!dt__shape_under(m, norm, pl, ls)) continue;
        for (c = 0; c < nc && len < sizeof all; c++) {
            const dt_placement *p = &pl[cyc[c]];
            snprintf(one, sizeof one, "dt_shard_cyclic_src(%d, %lld, %d)", (int)p->dim, (long long)p->block, (int)p->src);
            len += (size_t)snprintf(all + len, sizeof all - len, "%s%s on mesh dim %d", c ? ", " : "", one, cyc[c]);
        }
        snprintf(buf, cap, "block-cyclic with the first block on another mesh coordinate gives it: %s (ScaLAPACK's "
                 "RSRC/CSRC; dt_tensor_desc_from_scalapack reads them from the array's descriptor)", all);
        return;
    }
    snprintf(buf, cap, "name the rule that made the buffer (dt_shard_balanced, dt_shard_sizes, dt_shard_cyclic_src), "
             "or pass DT_INFER_SIZES to take every rank's local_shape as the truth");
}

/* the caller's claimed local shape must be the shape the placements imply */
static dt_status dt__check_local_shape(const dt_mesh *m, const dt_tensor_desc *norm, const int64_t *ls) {
    dt__box b;
    int i;
    char want[160], got[160], pls[160], hint[400];
    if (m->rank >= 0) dt__tensor_box(m, norm, m->coord, &b);
    else dt__box_empty(norm->ndim, &b);
    for (i = 0; i < norm->ndim; i++)
        if (ls[i] != b.ext[i]) {
            hint[0] = 0;
            if (m->rank >= 0) dt__local_shape_hint(m, norm, ls, hint, sizeof hint);
            return dt__fail(DT_ERR_SHAPE, "dt_tensor_from_local: desc->local_shape = %s but the placements %s give "
                            "mesh rank %d the shape %s: %s", dt__shape_str(ls, norm->ndim, got, sizeof got),
                            dt__placements_str(norm->placements, m->ndim, norm->ndim, pls, sizeof pls), m->rank,
                            dt__shape_str(b.ext, norm->ndim, want, sizeof want),
                            hint[0] ? hint : "a rank outside the mesh holds nothing (local_shape all zeros)");
        }
    return DT_OK;
}

/* A ghosted or strided array must say its interior shape (desc->local_shape)
   and its allocation (local_alloc, local_alloc_bytes): it is read through
   offsets the library computes, so a wrong rule or a pointer into the
   array's interior would read outside the caller's memory, silently, and
   nothing else could tell (a pointer has no size). Every rank checks its
   own; the agreement after makes every rank fail with it. */
static dt_status dt__check_storage_stated(const dt_mesh *m, const dt_tensor_desc *d, const dt_tensor_desc *norm) {
    const char *fn = "dt_tensor_from_local", *what = d->local_ghost ? "local_ghost" : "local_strides";
    char pls[160], sh[160];
    dt__box b;
    if (m->rank >= 0) dt__tensor_box(m, norm, m->coord, &b);
    else dt__box_empty(norm->ndim, &b);
    if (!d->local_shape)
        return dt__fail(DT_ERR_ARG, "%s: desc->%s without desc->local_shape: a ghosted or strided array must state "
                        "its interior's shape, so that it is checked against the rule (the placements %s give mesh "
                        "rank %d the shape %s; a split the code made itself is often dt_shard_balanced, "
                        "N/k + (c < N%%k); DT_INFER_SIZES takes every rank's own)", fn, what,
                        dt__placements_str(norm->placements, m->ndim, norm->ndim, pls, sizeof pls), m->rank,
                        dt__shape_str(b.ext, norm->ndim, sh, sizeof sh));
    return DT_OK;
}

/* Why the storage of dt__check_local_alloc ends past the allocation:
   need bytes from local, which is `at` bytes into it. Apart, so that the
   accepted path carries none of it. */
static dt_status dt__local_alloc_short(const dt_tensor_desc *d, const dt_tensor_desc *norm, const int64_t *ext,
                                       int64_t es, int64_t need, int64_t at) {
    const char *fn = "dt_tensor_from_local";
    int64_t s = 1, row = 1, have = d->local_alloc_bytes;
    int k, nd = norm->ndim;
    char gs[160], ss[160], xs[160];
    dt__shape_str(ext, nd, xs, sizeof xs);
    for (k = nd - 1; k >= 0; k--) { /* the outermost row's stride */
        int64_t st = d->local_strides ? d->local_strides[k] : s;
        if (st > row) row = st;
        s *= ext[k];
    }
    /* short of even the storage itself, but the storage (up to less than
       one outermost row of padding) as that many elements: a count of
       elements given for bytes (sizeof forgotten), not a pointer into the
       interior (which the right byte count reaches past), nor a size a few
       bytes short */
    if (es > 1 && have < need && have <= (INT64_MAX - es + 1) / es && have * es - at >= need &&
        have * es - at - need < es * row)
        return dt__fail(DT_ERR_ARG, "%s: desc->local_alloc_bytes = %lld looks like a count of elements, not bytes: "
                        "the storage (shape %s, %s, %lld bytes each) takes %lld bytes from local, %lld bytes into "
                        "desc->local_alloc; %lld elements are %lld bytes (local_alloc_bytes = sizeof(element) * "
                        "elements)", fn, (long long)have, xs, dt_dtype_name(norm->dtype), (long long)es,
                        (long long)need, (long long)at, (long long)have, (long long)(have * es));
    if (d->local_ghost) {
        dt__shape_str(d->local_ghost, nd, gs, sizeof gs);
        return dt__fail(DT_ERR_ARG, "%s: the ghosted array (local_shape + 2 * local_ghost = %s, local_ghost = %s) "
                        "takes %lld bytes from local, which is %lld bytes (%lld elements) into desc->local_alloc "
                        "(%lld bytes): it would read %lld bytes past the allocation's end. With local_ghost, local "
                        "must be the array's START (its first ghost cell, A(0,0)), not the interior (&A(1,1))",
                        fn, xs, gs, (long long)need, (long long)at, (long long)(at / es), (long long)have,
                        (long long)(need - (have - at)));
    }
    if (d->local_strides) dt__shape_str(d->local_strides, nd, ss, sizeof ss);
    else snprintf(ss, sizeof ss, "NULL, row-major");
    return dt__fail(DT_ERR_ARG, "%s: the storage (shape %s, local_strides = %s) takes %lld bytes from local, "
                    "which is %lld bytes into desc->local_alloc (%lld bytes): it would read %lld bytes past the "
                    "allocation's end (check local, local_strides and local_shape against the array)", fn, xs, ss,
                    (long long)need, (long long)at, (long long)have, (long long)(need - (have - at)));
}

/* [local, local + the storage's span) inside [local_alloc, + local_alloc_bytes).
   With ghost room, the likely mistake is `local` at the interior (&A(1,1))
   instead of the array's start: the message says so. Run after the ghost
   and stride checks (the span fits int64 then). */
static dt_status dt__check_local_alloc(const dt_mesh *m, const dt_tensor_desc *d, const dt_tensor_desc *norm,
                                       const void *local) {
    const char *fn = "dt_tensor_from_local";
    int64_t es = (int64_t)dt_dtype_size(norm->dtype), ext[DT_MAX_DIMS], s = 1, span = 1, at, need;
    uintptr_t a = (uintptr_t)d->local_alloc, l = (uintptr_t)local;
    dt__box b;
    int k, nd = norm->ndim;
    if (m->rank < 0) return DT_OK;
    dt__tensor_box(m, norm, m->coord, &b);
    for (k = 0; k < nd; k++) {
        ext[k] = b.ext[k] + (d->local_ghost ? 2 * d->local_ghost[k] : 0);
        if (ext[k] == 0) return DT_OK; /* reads nothing: an empty part needs no allocation (nor a span) */
    }
    for (k = nd - 1; k >= 0; k--) { /* the last element's offset + 1 */
        int64_t st = d->local_strides ? d->local_strides[k] : s;
        span += (ext[k] - 1) * st;
        s *= ext[k];
    }
    if (!d->local_alloc || d->local_alloc_bytes <= 0)
        return dt__fail(DT_ERR_ARG, "%s: desc->%s without desc->local_alloc and desc->local_alloc_bytes (%p, %lld): "
                        "a ghosted or strided array must give the start and the size in bytes of the allocation "
                        "`local` lies in (e.g. local_alloc = A, local_alloc_bytes = sizeof(double) * rows * cols), "
                        "so that the wrap can check it reads inside it (a contiguous one may give both or neither)",
                        fn, d->local_ghost ? "local_ghost" : d->local_strides ? "local_strides" : "local_alloc",
                        d->local_alloc, (long long)d->local_alloc_bytes);
    need = span * es;
    if (l < a || l - a > (uintptr_t)d->local_alloc_bytes)
        return dt__fail(DT_ERR_ARG, "%s: local = %p is not inside desc->local_alloc = %p (%lld bytes): local_alloc "
                        "is the start of the allocation `local` lies in", fn, local, d->local_alloc,
                        (long long)d->local_alloc_bytes);
    at = (int64_t)(l - a);
    if (need <= d->local_alloc_bytes - at) return DT_OK;
    return dt__local_alloc_short(d, norm, ext, es, need, at);
}

/* Without local_shape, a buffer's size is read from the placements. That
   is refused where the placements can be misread: a torch.chunk split whose
   parts differ from the balanced rule's (10 over 4: 3,3,3,1 against
   3,3,2,2), the split MPI codes and PETSc use. Pure: every rank decides the
   same, from the layout of every coordinate. Returns the tensor dim, or -1. */
static int dt__chunk_ambiguous(const dt_mesh *m, const dt_tensor_desc *norm, int *mdim) {
    dt_placement bal[DT_MAX_MESH_DIMS];
    int i, r, d, c[DT_MAX_MESH_DIMS], any = 0;
    memcpy(bal, norm->placements, sizeof bal);
    for (i = 0; i < m->ndim; i++)
        if (bal[i].kind == DT_SHARD && bal[i].split == DT_SPLIT_CHUNK) { bal[i].split = DT_SPLIT_BALANCED; any = 1; }
    if (!any) return -1;
    for (r = 0; r < m->size; r++) {
        dt__box a, b;
        dt__mesh_coord_of(m, r, c);
        dt__layout_box(norm->ndim, norm->shape, m->ndim, m->shape, c, norm->placements, &a);
        dt__layout_box(norm->ndim, norm->shape, m->ndim, m->shape, c, bal, &b);
        for (d = 0; d < norm->ndim; d++)
            if (a.ext[d] != b.ext[d]) {
                for (i = 0; i < m->ndim; i++)
                    if (norm->placements[i].kind == DT_SHARD && norm->placements[i].dim == d) *mdim = i;
                return d;
            }
    }
    return -1;
}

/* DT_INFER_SIZES: the local shapes, gathered, become dt_shard_sizes on each
   split dim. Collective (one allgather of ndim words per rank); every rank
   checks the same table, so every rank reaches the same verdict. `sizes`:
   room for the mesh's ranks per mesh dim. */
static dt_status dt__infer_sizes(dt_mesh *m, dt_tensor_desc *norm, const int64_t *ls, int64_t *sizes) {
    const char *fn = "dt_tensor_from_local";
    int64_t *all = NULL, mine[DT_MAX_DIMS];
    size_t *v = NULL;
    int n = m->size, nd = norm->ndim, split[DT_MAX_DIMS], i, r, d, c[DT_MAX_MESH_DIMS];
    char b[160], b2[160];
    dt_status st;
    for (d = 0; d < nd; d++) split[d] = -1;
    for (d = 0; d < nd; d++) mine[d] = ls[d];
    if ((st = dt__alloc(fn, (size_t)n * (size_t)(nd + 1) * sizeof(int64_t) + 2 * (size_t)n * sizeof(size_t),
                        (void **)&all)))
        return st;
    v = (size_t *)(all + (size_t)n * (size_t)(nd + 1));
    st = nd ? dt__comm_allgather_ctl_into(m->comm, mine, nd, all, v) : DT_OK;
    for (i = 0; !st && i < m->ndim; i++) { /* the placements first: a dim split twice is refused as such */
        d = norm->placements[i].dim;
        if (norm->placements[i].kind != DT_SHARD) continue;
        if (split[d] >= 0)
            st = dt__fail(DT_ERR_PLACEMENT, "%s: DT_INFER_SIZES: dim %d is split by mesh dims %d and %d; it infers "
                          "one mesh dim's sizes per tensor dim", fn, dt__tdim(d, nd), split[d], i);
        split[d] = i;
    }
    for (d = 0; d < nd; d++) split[d] = -1;
    for (i = 0; !st && i < m->ndim; i++) {
        const dt_placement *p = &norm->placements[i];
        int64_t *sz = sizes + (size_t)i * (size_t)n, sum = 0;
        if (p->kind != DT_SHARD) continue;
        d = p->dim;
        if (split[d] >= 0) {
            st = dt__fail(DT_ERR_PLACEMENT, "%s: DT_INFER_SIZES: dim %d is split by mesh dims %d and %d; it infers "
                          "one mesh dim's sizes per tensor dim", fn, dt__tdim(d, nd), split[d], i);
            break;
        }
        split[d] = i;
        for (r = 0; r < m->shape[i]; r++) sz[r] = -1;
        for (r = 0; r < n && !st; r++) { /* the ranks at coordinate c on mesh dim i hold part c: one size */
            int64_t e = all[(size_t)r * (size_t)nd + (size_t)d];
            dt__mesh_coord_of(m, r, c);
            if (e < 0)
                st = dt__fail(DT_ERR_SHAPE, "%s: DT_INFER_SIZES: rank %d's local_shape[%d] = %lld is negative", fn, r,
                              dt__tdim(d, nd), (long long)e);
            else if (sz[c[i]] >= 0 && sz[c[i]] != e)
                st = dt__fail(DT_ERR_SHAPE, "%s: DT_INFER_SIZES: ranks at coordinate %d of mesh dim %d hold the same "
                              "part of dim %d but pass local_shape[%d] = %lld and %lld (rank %d)", fn, c[i], i, dt__tdim(d, nd),
                              dt__tdim(d, nd),
                              (long long)sz[c[i]], (long long)e, r);
            else
                sz[c[i]] = e;
        }
        for (r = 0; r < m->shape[i] && !st; r++) {
            if (sz[r] > norm->shape[d] - sum)
                st = dt__fail(DT_ERR_SHAPE, "%s: DT_INFER_SIZES: the local sizes of dim %d add up to more than its "
                              "global %lld", fn, dt__tdim(d, nd), (long long)norm->shape[d]);
            else
                sum += sz[r];
        }
        if (!st && sum != norm->shape[d])
            st = dt__fail(DT_ERR_SHAPE, "%s: DT_INFER_SIZES: the local sizes of dim %d add up to %lld, its global "
                          "extent is %lld", fn, dt__tdim(d, nd), (long long)sum, (long long)norm->shape[d]);
        if (!st) {
            norm->placements[i] = dt_shard_sizes(d, sz);
            norm->placements[i].block = m->shape[i];
        }
    }
    for (r = 0; r < n && !st; r++) /* the dims no mesh dim splits are whole on every rank */
        for (d = 0; d < nd && !st; d++)
            if (split[d] < 0 && all[(size_t)r * (size_t)nd + (size_t)d] != norm->shape[d])
                st = dt__fail(DT_ERR_SHAPE, "%s: DT_INFER_SIZES: rank %d's local_shape = %s, but dim %d is not split, "
                              "so it must be the global %lld (global shape %s)", fn, r,
                              dt__shape_str(all + (size_t)r * (size_t)nd, nd, b, sizeof b), dt__tdim(d, nd),
                              (long long)norm->shape[d], dt__shape_str(norm->shape, nd, b2, sizeof b2));
    DT_FREE(all);
    return st;
}

/* the storage box of a ghosted array: t's box widened by the ghost room */
static void dt__ghost_box(int nd, const dt__box *b, const int64_t *ghost, dt__box *out) {
    int d;
    *out = *b;
    for (d = 0; d < nd; d++) { out->lo[d] -= ghost[d]; out->ext[d] += 2 * ghost[d]; }
}

/* desc->local_ghost: a borrowed host array whose widened shape fits the
   index arithmetic (every rank checks its own; the agreement follows) */
static dt_status dt__check_local_ghost(const dt_mesh *m, const dt_tensor_desc *norm, const int64_t *g,
                                       unsigned flags, const void *local) {
    const char *fn = "dt_tensor_from_local";
    size_t n = dt_dtype_size(norm->dtype), fit = n; /* fit: the size rule's product, a 0 counted as 1 (the
                                                       row-major strides of the storage are formed from it) */
    dt__box b;
    int d;
    char gs[160];
    dt__shape_str(g, norm->ndim, gs, sizeof gs);
    if (flags & DT_COPY)
        return dt__fail(DT_ERR_ARG, "%s: desc->local_ghost = %s with DT_COPY: ghost room describes a borrowed "
                        "array (DT_BORROW); a copy is contiguous", fn, gs);
    if (m->rank >= 0) dt__tensor_box(m, norm, m->coord, &b);
    else dt__box_empty(norm->ndim, &b);
    for (d = 0; d < norm->ndim; d++) {
        if (g[d] < 0)
            return dt__fail(DT_ERR_ARG, "%s: desc->local_ghost[%d] = %lld is negative (local_ghost = %s)", fn,
                            dt__tdim(d, norm->ndim),
                            (long long)g[d], gs);
        if (g[d] > (INT64_MAX / 4 - b.ext[d]) / 2 ||
            !dt__mul_ok(fit, (size_t)(b.ext[d] + 2 * g[d] > 1 ? b.ext[d] + 2 * g[d] : 1), &fit) ||
            fit > (size_t)INT64_MAX || !dt__mul_ok(n, (size_t)(b.ext[d] + 2 * g[d]), &n))
            return dt__fail(DT_ERR_ARG, "%s: desc->local_ghost[%d] = %lld: the ghosted array (local shape + 2 * "
                            "local_ghost) overflows the sizes (local_ghost = %s)", fn, dt__tdim(d, norm->ndim), (long long)g[d], gs);
    }
    if (!local && m->rank >= 0 && n)
        return dt__fail(DT_ERR_ARG, "%s: local is NULL but the ghosted array (local_ghost = %s) has %zu bytes", fn,
                        gs, n);
    return DT_OK;
}

/* desc->local_strides: every stride >= 1 (0 where it addresses nothing: an
   empty storage, a dim of extent 1); the storage (t's box widened by
   the ghost room, if any) holds no two elements at one address; its span
   fits the index arithmetic. Each rank checks its own storage. */
static dt_status dt__check_local_strides(const dt_mesh *m, const dt_tensor_desc *norm, const int64_t *st,
                                         const int64_t *g) {
    const char *fn = "dt_tensor_from_local";
    int64_t ext[DT_MAX_DIMS] = {0};
    int ord[DT_MAX_DIMS] = {0}, d, i, n = 0, empty = 0;
    size_t es = dt_dtype_size(norm->dtype);
    dt__box b;
    char ss[160], es_[160];
    dt__shape_str(st, norm->ndim, ss, sizeof ss);
    if (m->rank >= 0) dt__tensor_box(m, norm, m->coord, &b);
    else dt__box_empty(norm->ndim, &b);
    for (d = 0; d < norm->ndim; d++) {
        ext[d] = b.ext[d] + (g ? 2 * g[d] : 0);
        empty |= ext[d] == 0;
    }
    dt__shape_str(ext, norm->ndim, es_, sizeof es_);
    for (d = 0; d < norm->ndim; d++) /* 0 where it addresses nothing: an empty storage, a dim of extent 1 */
        if (st[d] < 0 || (st[d] == 0 && ext[d] > 1 && !empty))
            return dt__fail(DT_ERR_ARG, "%s: desc->local_strides[%d] = %lld: strides are element counts >= 1 "
                            "(local_strides = %s, storage shape %s)", fn, dt__tdim(d, norm->ndim), (long long)st[d], ss, es_);
    for (d = 0; d < norm->ndim; d++) /* each stride in bytes fits, an empty storage's too (its span is computed) */
        if (st[d] > INT64_MAX / (int64_t)es)
            return dt__fail(DT_ERR_ARG, "%s: desc->local_strides[%d] = %lld: the storage spans more than the sizes "
                            "can index (%zu-byte elements; local_strides = %s, storage shape %s)", fn, dt__tdim(d, norm->ndim),
                            (long long)st[d], es, ss, es_);
    if (empty) return DT_OK;
    for (d = 0; d < norm->ndim; d++) { /* the dims longer than 1, by stride (insertion sort: ndim <= 8) */
        if (ext[d] <= 1) continue;
        for (i = n++; i > 0 && st[ord[i - 1]] > st[d]; i--) ord[i] = ord[i - 1];
        ord[i] = d;
    }
    for (i = 0; i < n; i++) {
        if (i > 0 && st[ord[i]] < st[ord[i - 1]] * ext[ord[i - 1]]) /* (no overflow: checked for i - 1) */
            return dt__fail(DT_ERR_ARG, "%s: desc->local_strides = %s overlap on mesh rank %d: dim %d (stride %lld) "
                            "steps inside dim %d (stride %lld x %lld elements) of the storage (shape %s)", fn, ss,
                            m->rank, dt__tdim(ord[i], norm->ndim), (long long)st[ord[i]], dt__tdim(ord[i - 1], norm->ndim), (long long)st[ord[i - 1]],
                            (long long)ext[ord[i - 1]], es_);
        /* the span is below the outermost stride x extent, in bytes */
        if (st[ord[i]] > INT64_MAX / (int64_t)es / ext[ord[i]])
            return dt__fail(DT_ERR_ARG, "%s: desc->local_strides = %s: the storage (shape %s) spans more than the "
                            "sizes can index", fn, ss, es_);
    }
    return DT_OK;
}

/* t's storage: `local` is the start of the caller's array (the ghost room's
   first element with local_ghost, element 0 otherwise), laid out by
   `strides` (NULL: row-major over the storage box). data -> element 0 of
   the interior. */
static void dt__tensor_set_storage(dt_tensor *t, const int64_t *g, const int64_t *strides, char *storage) {
    dt__box sb = t->box;
    int64_t s = 1, off = 0;
    int d, nd = t->desc.ndim, empty = 0;
    if (g) {
        memcpy(t->ghost, g, (size_t)nd * sizeof *g);
        t->ghosted = 1;
        t->desc.local_ghost = t->ghost;
        dt__ghost_box(nd, &t->box, t->ghost, &sb);
    }
    for (d = 0; d < nd; d++) empty |= sb.ext[d] == 0;
    for (d = nd - 1; d >= 0; d--) {
        t->stride[d] = strides ? strides[d] : s;
        if (!strides) s *= sb.ext[d];
        /* an empty storage addresses nothing: its strides were not checked against each other, and no offset is
           formed from them */
        if (!empty) off += t->ghost[d] * t->stride[d];
    }
    t->storage = storage;
    t->data = storage ? storage + (size_t)off * dt_dtype_size(t->desc.dtype) : NULL;
    /* by the desc, not by this rank's storage: the calls that refuse strided
       storage must refuse it on every rank (an empty shard's too) */
    t->strided = 1;
    if (strides) t->desc.local_strides = t->stride;
}

/* t's strided storage as an array over t's box (data = interior element 0) */
static void dt__tensor_array_of_data(const dt_tensor *t, const void *data, dt__array *a) {
    a->data = (char *)data;
    a->ndim = t->desc.ndim;
    a->es = dt_dtype_size(t->desc.dtype);
    a->box = t->box;
    a->stride = t->strided || t->ghosted ? t->stride : NULL;
}

/* t's local storage as an array: the shard, or a ghosted tensor's whole
   array (its box widened by the ghost room), so that box copies read the
   interior at the right strides */
static void dt__tensor_array(const dt_tensor *t, dt__array *a) {
    dt__tensor_array_of_data(t, t->data, a);
    if (t->ghosted) {
        a->data = t->storage;
        dt__ghost_box(t->desc.ndim, &t->box, t->ghost, &a->box);
    }
}

/* the device whose memory p is (DT_HOST when none of this build's devices
   claims it: cudaPointerGetAttributes for DT_CUDA) */
static int dt__memory_of(const void *p) {
    int i;
    for (i = 1; i < DT__MAX_DEVICES; i++) {
        const dt__device *dv = dt__device_of(i);
        if (dv && dv->owns(p)) return i;
    }
    return DT_HOST;
}

/* a borrowed pointer (`what`: local, desc->local_alloc) must be the memory
   the desc says: a host pointer wrapped as a device array (or the reverse)
   would be read by the wrong side. Asked of the devices (owns()), never
   by reading the memory. */
static dt_status dt__check_local_memory(const dt_tensor_desc *norm, const char *what, const void *p) {
    const char *fn = "dt_tensor_from_local";
    const dt__device *dv = dt__device_of(norm->device);
    int in;
    if (norm->device != DT_HOST) {
        if (dv->owns(p)) return DT_OK;
        return dt__fail(DT_ERR_DEVICE, "%s: desc->device = %d (%s) but %s = %p is not that device's memory "
                        "(DT_COPY copies from any memory)", fn, norm->device, dv->name, what, p);
    }
    if ((in = dt__memory_of(p)) == DT_HOST) return DT_OK;
    return dt__fail(DT_ERR_DEVICE, "%s: desc->device = DT_HOST but %s = %p is device %d (%s) memory, which host "
                    "code cannot read: wrap it with desc->device = %d (managed memory counts as the device's)", fn,
                    what, p, in, dt__device_of(in)->name, in);
}

/* DT_COPY of strided storage at `local` (host or a device's memory) into
   t's new contiguous shard: the box copy runs where `local` is; across
   memories through one contiguous buffer on local's side */
static dt_status dt__copy_strided_local(const char *fn, dt_tensor *t, const int64_t *strides, void *local) {
    dt_tensor v = *t;
    dt__array sa, da;
    const dt__device *sd = dt__device_of(dt__memory_of(local));
    void *buf = NULL;
    dt_status st;
    dt__tensor_set_storage(&v, NULL, strides, (char *)local);
    dt__tensor_array_of_data(&v, v.data, &sa);
    dt__tensor_array_of_data(t, t->data, &da);
    if (sd == t->dev) return sd->copy_box(fn, &sa, &da, &t->box);
    if ((st = sd->alloc(fn, t->bytes, &buf))) return st;
    da.data = (char *)buf;
    if (!(st = sd->copy_box(fn, &sa, &da, &t->box))) st = (dt__on_host(sd) ? t->dev : sd)->copy(fn, t->data, buf, t->bytes);
    sd->free(buf);
    return st;
}

static dt_status dt__tensor_from_local_body(dt_mesh *m, const dt_tensor_desc *d, void *local, unsigned flags,
                                            dt_tensor **out) {
    const char *fn = "dt_tensor_from_local";
    dt_tensor_desc norm;
    dt_tensor *t = NULL;
    int64_t *sizes = NULL;
    dt_status st;
    if (!m) return dt__fail(DT_ERR_ARG, "%s: mesh is NULL", fn);
    st = out ? dt__check_desc(fn, m, d, &norm) : dt__fail(DT_ERR_ARG, "%s: out is NULL", fn); /* agreed on below */
    if (!st && (flags & ~(DT_COPY | DT_VERIFY | DT_INFER_SIZES)))
        st = dt__fail(DT_ERR_ARG, "%s: flags = 0x%x has unknown bits", fn, flags);
    if (!st && (flags & DT_INFER_SIZES) && !d->local_shape)
        st = dt__fail(DT_ERR_ARG, "%s: DT_INFER_SIZES needs desc->local_shape (each rank's own buffer shape)", fn);
    if (!st && (flags & DT_INFER_SIZES) && m->rank >= 0)
        st = dt__alloc(fn, (size_t)m->ndim * (size_t)m->size * sizeof(int64_t) + 1, (void **)&sizes);
    if ((flags & DT_INFER_SIZES) && m->rank >= 0) { /* collective: the local errors first, then the sizes */
        if (!(st = dt__agree(m->comm, fn, st, 0))) st = dt__infer_sizes(m, &norm, d->local_shape, sizes);
        if (st) { DT_FREE(sizes); return st; }
    }
    /* DTENSOR_CHECK=1 implies DT_VERIFY: this refusal, and the spec agreement below (dt__consistent_spec) */
    if (!st && !d->local_shape && ((flags & DT_VERIFY) || dt__checks_on()) && m->rank >= 0) {
        int md = 0, td = dt__chunk_ambiguous(m, &norm, &md);
        if (td >= 0)
            st = dt__fail(DT_ERR_SHAPE, "%s: DT_VERIFY (or DTENSOR_CHECK) without desc->local_shape, and dim %d (%lld) is split unevenly "
                          "by dt_shard on mesh dim %d, where torch.chunk's parts differ from the balanced rule's (MPI "
                          "codes, PETSc): give local_shape (or DT_INFER_SIZES) so the buffer's size can be checked, "
                          "or name the rule (dt_shard_balanced)", fn, dt__tdim(td, norm.ndim), (long long)norm.shape[td], md);
    }
    if (!st && d->local_shape) st = dt__check_local_shape(m, &norm, d->local_shape);
    if (!st && d->local_ghost) st = dt__check_local_ghost(m, &norm, d->local_ghost, flags, local);
    if (!st && d->local_strides) st = dt__check_local_strides(m, &norm, d->local_strides, d->local_ghost);
    if (!st && (d->local_ghost || d->local_strides)) st = dt__check_storage_stated(m, d, &norm);
    /* the memory the pointers are in, before the arithmetic on them (a host array wrapped as a device one
       is named as such, not as a range mistake) */
    if (!st && m->rank >= 0 && local && !(flags & DT_COPY)) st = dt__check_local_memory(&norm, "local", local);
    if (!st && m->rank >= 0 && local && !(flags & DT_COPY) && d->local_alloc)
        st = dt__check_local_memory(&norm, "desc->local_alloc", d->local_alloc);
    /* a contiguous buffer's allocation is optional; given (both fields), it is checked as a strided one's */
    if (!st && (d->local_ghost || d->local_strides || (d->local_alloc && d->local_alloc_bytes)))
        st = dt__check_local_alloc(m, d, &norm, local);
    if (!st && m->rank >= 0) {
        dt__box b;
        dt__tensor_box(m, &norm, m->coord, &b);
        if (!local && dt__box_numel(norm.ndim, &b))
            st = dt__fail(DT_ERR_ARG, "%s: local is NULL but mesh rank %d holds %zu elements", fn, m->rank,
                          dt__box_numel(norm.ndim, &b));
    }
    /* collective, always: every member takes part even after a local error,
       so a bad rank makes all ranks fail instead of the others hanging */
    if ((flags & DT_VERIFY) && m->rank >= 0) {
        dt_status vs = dt__agree(m->comm, fn, st, st ? 0 : dt__desc_hash(&norm));
        if (vs && st) { /* this rank's own error, reported as the mismatch all ranks see */
            char why[sizeof dt__errbuf];
            memcpy(why, dt__errbuf, sizeof why);
            st = dt__fail(DT_ERR_MISMATCH, "%s (DT_VERIFY): this rank's arguments are invalid: %s", fn, why);
        } else {
            st = vs;
        }
    } else if (dt__checks_on()) {
        st = dt__consistent_spec(m, fn, st, &norm, NULL, NULL, 0, NULL);
    } else if (m->rank >= 0 && m->size > 1) {
        st = dt__agree(m->comm, fn, st, 0);
    }
    if (!st) st = dt__tensor_make(fn, m, &norm, (flags & DT_COPY) ? NULL : local, 0, &t);
    DT_FREE(sizes);
    if (st) return st;
    if ((flags & DT_COPY) && d->local_strides && t->bytes) { /* gathered into the new contiguous shard */
        if ((st = dt__copy_strided_local(fn, t, d->local_strides, local))) {
            dt_tensor_destroy(t);
            return st;
        }
    } else if ((flags & DT_COPY) && t->bytes && (st = t->dev->copy(fn, t->data, local, t->bytes))) {
        dt_tensor_destroy(t);
        return st;
    } else if (!(flags & DT_COPY) && (d->local_ghost || d->local_strides)) {
        dt__tensor_set_storage(t, d->local_ghost, d->local_strides, (char *)local);
    }
    *out = t;
    return DT_OK;
}
DT_API dt_status dt_tensor_from_local(dt_mesh *m, const dt_tensor_desc *d, void *local, unsigned flags,
                                      dt_tensor **out) {
    DT__PUBLIC("dt_tensor_from_local", dt__tensor_from_local_body(m, d, local, flags, out));
}

DT_API void *dt_tensor_data(const dt_tensor *t) { return t ? t->data : NULL; }
DT_API const dt_tensor_desc *dt_tensor_get_desc(const dt_tensor *t) { return t ? &t->desc : NULL; }
DT_API dt_mesh *dt_tensor_mesh(const dt_tensor *t) { return t ? t->mesh : NULL; }
DT_API size_t dt_tensor_local_numel(const dt_tensor *t) { return t ? t->numel : 0; }

/* strided storage: a zeroed contiguous twin in the same memory, box-copied in */
static dt_status dt__tensor_zero_local_body(dt_tensor *t) {
    const char *fn = "dt_tensor_zero_local";
    dt__array z, a;
    dt_status st;
    if (!t) return dt__fail(DT_ERR_ARG, "%s: tensor is NULL", fn);
    if (!t->numel) return DT_OK;
    if (!t->strided) return t->dev->zero(fn, t->data, t->bytes);
    dt__tensor_array(t, &a);
    z = a;
    z.stride = NULL;
    if ((st = t->dev->alloc(fn, t->bytes, (void **)&z.data))) return st;
    if (!(st = t->dev->zero(fn, z.data, t->bytes))) st = t->dev->copy_box(fn, &z, &a, &a.box);
    t->dev->free(z.data);
    return st;
}
DT_API dt_status dt_tensor_zero_local(dt_tensor *t) {
    DT__PUBLIC("dt_tensor_zero_local", dt__tensor_zero_local_body(t));
}
DT_API void dt_tensor_local_shape(const dt_tensor *t, int64_t *shape) {
    if (t && shape) memcpy(shape, t->box.ext, (size_t)t->desc.ndim * sizeof(int64_t));
}
DT_API int dt_tensor_local_strides(const dt_tensor *t, int64_t *strides) {
    if (!t) return 0;
    if (strides) memcpy(strides, t->stride, (size_t)t->desc.ndim * sizeof *strides);
    return t->desc.ndim;
}
DT_API void dt_tensor_local_offset(const dt_tensor *t, int64_t *offset) {
    if (t && offset) memcpy(offset, t->box.lo, (size_t)t->desc.ndim * sizeof(int64_t));
}

/* a tensor whose redistribution is in flight (dt_tensor_redistribute_begin)
   is not read or written until its _end */
static dt_status dt__not_pending(const char *fn, const char *name, const dt_tensor *t) {
    if (!t || !t->async) return DT_OK;
    return dt__fail(DT_ERR_ARG, "%s: %s is the target of a dt_tensor_redistribute_begin that has not ended; call "
                    "dt_tensor_redistribute_end on it first", fn, name);
}

DT_API void dt_tensor_destroy(dt_tensor *t) {
    if (!t) return;
    if (t->async) t->async_abandon(t);
    if (t->shm) dt__shm_free(t->shm, t->data);
    else if (t->owns) t->dev->free(t->data);
    dt__tensor_set_halo(t, NULL, NULL);
    DT_FREE(t->sizes);
    DT_FREE(t);
}

/* the pure layout queries' arguments: a valid desc and a coordinate on the mesh */
static dt_status dt__check_coord(const char *fn, const dt_mesh *m, const dt_tensor_desc *d, const int *coord,
                                 dt_tensor_desc *norm) {
    dt_status st;
    int i;
    if ((st = dt__check_desc(fn, m, d, norm))) return st;
    if (!coord) return dt__fail(DT_ERR_ARG, "%s: coord is NULL", fn);
    for (i = 0; i < m->ndim; i++)
        if (coord[i] < 0 || coord[i] >= m->shape[i])
            return dt__fail(DT_ERR_ARG, "%s: coord[%d] = %d, the mesh dim has %d ranks", fn, i, coord[i], m->shape[i]);
    return DT_OK;
}

static dt_status dt__layout_body(const dt_mesh *m, const dt_tensor_desc *d, const int *coord, int64_t *local_shape,
                                 int64_t *local_offset) {
    dt_tensor_desc norm;
    dt__box b;
    dt_status st;
    if ((st = dt__check_coord("dt_layout", m, d, coord, &norm))) return st;
    dt__tensor_box(m, &norm, coord, &b);
    if (local_shape) memcpy(local_shape, b.ext, (size_t)norm.ndim * sizeof(int64_t));
    if (local_offset) memcpy(local_offset, b.lo, (size_t)norm.ndim * sizeof(int64_t));
    return DT_OK;
}
DT_API dt_status dt_layout(const dt_mesh *m, const dt_tensor_desc *d, const int *coord, int64_t *local_shape,
                           int64_t *local_offset) {
    DT__PUBLIC("dt_layout", dt__layout_body(m, d, coord, local_shape, local_offset));
}

static void dt__indices_of(const dt_mesh *m, const dt_tensor_desc *norm, const int *coord, int dim, int64_t *idx) {
    dt__chain ch;
    int64_t p = 0;
    dt__chain_build(norm->shape[dim], m->ndim, m->shape, coord, norm->placements, dim, &ch);
    while (p < ch.ext) { /* span by span: O(spans x levels + extent) */
        int64_t len = dt__chain_span(&ch, p), g = dt__chain_up(&ch, p), j;
        for (j = 0; j < len; j++) idx[p + j] = g + j;
        p += len;
    }
}

static dt_status dt__layout_indices_body(const dt_mesh *m, const dt_tensor_desc *d, const int *coord, int dim,
                                         int64_t *global_index) {
    dt_tensor_desc norm;
    dt_status st;
    if ((st = dt__check_coord("dt_layout_indices", m, d, coord, &norm))) return st;
    if (dim < 0 || dim >= norm.ndim)
        return dt__fail(DT_ERR_ARG, "dt_layout_indices: dim = %d, the tensor has %d dim%s", dim, norm.ndim,
                        norm.ndim == 1 ? "" : "s");
    if (!global_index) return dt__fail(DT_ERR_ARG, "dt_layout_indices: global_index is NULL");
    dt__indices_of(m, &norm, coord, dim, global_index);
    return DT_OK;
}
DT_API dt_status dt_layout_indices(const dt_mesh *m, const dt_tensor_desc *d, const int *coord, int dim,
                                   int64_t *global_index) {
    DT__PUBLIC("dt_layout_indices", dt__layout_indices_body(m, d, coord, dim, global_index));
}

static dt_status dt__tensor_local_indices_body(const dt_tensor *t, int dim, int64_t *global_index) {
    if (!t) return dt__fail(DT_ERR_ARG, "dt_tensor_local_indices: t is NULL");
    if (dim < 0 || dim >= t->desc.ndim)
        return dt__fail(DT_ERR_ARG, "dt_tensor_local_indices: dim = %d, the tensor has %d dim%s", dim, t->desc.ndim,
                        t->desc.ndim == 1 ? "" : "s");
    if (!global_index) return dt__fail(DT_ERR_ARG, "dt_tensor_local_indices: global_index is NULL");
    if (t->mesh->rank >= 0) dt__indices_of(t->mesh, &t->desc, t->mesh->coord, dim, global_index);
    return DT_OK;
}
DT_API dt_status dt_tensor_local_indices(const dt_tensor *t, int dim, int64_t *global_index) {
    DT__PUBLIC("dt_tensor_local_indices", dt__tensor_local_indices_body(t, dim, global_index));
}

/* *v := a stand-in for t (with desc d, or t's when d is NULL) whose shard is
   the contiguous buffer `data`: no strides, no ghost room, no halo, owning
   nothing (dropped without dt_tensor_destroy) */
static void dt__tensor_view(const dt_tensor *t, const dt_tensor_desc *d, void *data, dt_tensor *v) {
    *v = *t;
    if (d) v->desc = *d;
    v->data = data;
    v->strided = 0;
    v->ghosted = 0;
    v->halo = NULL;
    v->halo_free = NULL;
    v->storage = NULL;
    v->owns = 0;
    v->shm = NULL;
    v->desc.local_strides = NULL;
    v->desc.local_ghost = NULL;
    memset(v->ghost, 0, sizeof v->ghost);
}

/* A contiguous copy for the calls that work on a contiguous shard: *v = t, over a
   new row-major buffer *buf in t's memory (t->dev's allocation: free it
   with dt__contig_free) holding a copy of t's elements (copy_in; the
   device's box copy on device memory). A contiguous t: *v = t, *buf NULL,
   no copy. The stand-in has no halo and no ghost room (its storage is the
   buffer). */
static dt_status dt__contig_copy(const char *fn, const dt_tensor *t, int copy_in, dt_tensor *v, void **buf) {
    dt_status st;
    *v = *t; /* a contiguous t stands for itself */
    *buf = NULL;
    if (!t->strided) return DT_OK;
    if ((st = t->dev->alloc(fn, t->bytes + 1, buf))) return st;
    if (copy_in) {
        dt__array a, b;
        dt__tensor_array_of_data(t, t->data, &a);
        b = a;
        b.data = (char *)*buf;
        b.stride = NULL;
        if ((st = t->dev->copy_box(fn, &a, &b, &t->box))) {
            t->dev->free(*buf);
            *buf = NULL;
            return st;
        }
    }
    dt__tensor_view(t, NULL, *buf, v);
    return DT_OK;
}

/* a buffer of dt__contig_copy (NULL: none) */
static void dt__contig_free(const dt_tensor *t, void *buf) {
    if (buf) t->dev->free(buf);
}

/* t's elements := buf (row-major over t's box, in t's memory), through
   t's strides; the padding between them is not written */
static dt_status dt__contig_write_back(const char *fn, const dt_tensor *t, const void *buf) {
    dt__array a, b;
    if (!t->bytes || t->data == buf) return DT_OK;
    if (!t->strided) return t->dev->copy(fn, t->data, buf, t->bytes);
    dt__tensor_array_of_data(t, t->data, &b);
    a = b;
    a.data = (char *)buf;
    a.stride = NULL;
    return t->dev->copy_box(fn, &a, &b, &t->box);
}

/* >>checks --------------------------------------------------------------
   The argument checks the calls below share: a tensor given, on the host,
   contiguous where the call needs it, an *out that already has the
   result's spec. Each names the call and the values it refused. */

static dt_status dt__check_tensor(const char *fn, const dt_tensor *t) {
    return t ? dt__not_pending(fn, "the tensor", t) : dt__fail(DT_ERR_ARG, "%s: tensor is NULL", fn);
}

/* Strided storage (desc.local_strides, local_ghost): the calls that read
   or write a shard as one contiguous span refuse it rather than misread it */
static dt_status dt__no_strided(const char *fn, const char *what, const dt_tensor *t) {
    char g[160];
    if (!t || !t->strided) return DT_OK;
    return dt__fail(DT_ERR_UNSUPPORTED, "%s: %s has strided local storage (strides %s%s); this call takes "
                    "contiguous shards (copy it into one with dt_tensor_redistribute first)", fn, what,
                    dt__shape_str(t->stride, t->desc.ndim, g, sizeof g), t->ghosted ? ", a ghosted array" : "");
}



/* does *out already have the spec `want`? (dtype, shape, mesh, placements) */
static dt_status dt__check_out_spec(const char *fn, const dt_tensor *o, const dt_mesh *m, const dt_tensor_desc *want) {
    char a[160], b[160];
    if (o->mesh != m) return dt__fail(DT_ERR_MESH, "%s: *out lives on another mesh than the input", fn);
    if (o->desc.device != want->device)
        return dt__fail(DT_ERR_DEVICE, "%s: *out is on device %d, the result is on device %d", fn, o->desc.device,
                        want->device);
    if (o->desc.dtype != want->dtype)
        return dt__fail(DT_ERR_DTYPE, "%s: *out is %s, the result is %s", fn, dt_dtype_name(o->desc.dtype),
                        dt_dtype_name(want->dtype));
    if (o->desc.ndim != want->ndim || memcmp(o->desc.shape, want->shape, (size_t)want->ndim * sizeof(int64_t)))
        return dt__fail(DT_ERR_SHAPE, "%s: *out has shape %s, the result has %s", fn,
                        dt__shape_str(o->desc.shape, o->desc.ndim, a, sizeof a),
                        dt__shape_str(want->shape, want->ndim, b, sizeof b));
    if (!dt__placements_eq(o->desc.placements, want->placements, m->ndim))
        return dt__fail(DT_ERR_PLACEMENT, "%s: *out has placements %s, the result has %s", fn,
                        dt__placements_str(o->desc.placements, m->ndim, o->desc.ndim, a, sizeof a),
                        dt__placements_str(want->placements, m->ndim, want->ndim, b, sizeof b));
    return DT_OK;
}

/* the same for a call that writes *out as one contiguous span */
static dt_status dt__check_out(const char *fn, const dt_tensor *o, const dt_mesh *m, const dt_tensor_desc *want) {
    dt_status st = dt__check_out_spec(fn, o, m, want);
    return st ? st : dt__no_strided(fn, "*out", o);
}

/* >>redistribute ----------------------------------------------------------
   HOW A REDISTRIBUTION IS PLANNED. The plan is a short list of steps, each
   changing the placement of one mesh dim (or, for the general exchange, of
   all of them at once), chosen from the placements alone so that every rank
   builds the same plan without talking:

   1. Reduce.  Each mesh dim that is Partial and does not stay the same
      Partial is reduced along its mesh-dim communicator: reduce-scatter when
      the target is Shard(d) and no later mesh dim shards d (the result nests
      in mesh-dim order); also a reduce-scatter, into the longest tensor dim
      that nests, when more follows (another mesh dim's reduction, or a
      target Shard that does not nest), the move below gathering it back;
      allreduce otherwise. F16/BF16 are reduced in F32;
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
   contiguous span of its buffer (e.g. Shard(0) blocks) goes to the backend in
   place; only non-contiguous pieces are packed/unpacked.

   Cost at scale. The plan is O(mesh dims). A step over p ranks lists only
   the pieces that move (dt__walk_pieces: O(mesh dims x pieces), however
   large the mesh) and fills the p-entry count and displacement arrays an
   alltoallv / allgatherv takes, its one O(p) part. bench/planner.c checks
   this on simulated meshes of up to 65,536 ranks. */

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
    const dt__device *dev;                   /* the memory its buffers are in */
    int ndim;
    const int64_t *gshape;
    dt_dtype dtype;
    size_t es;
    int acc;                                 /* -1: the plan's output is assigned; else
                                                a dt_reduce combining into it (set on the
                                                last moving step only, dt__plan_run) */
    struct dt__async *async;                 /* non-NULL: the (one) exchange is posted into
                                                it, completed by _end (begin/end) */
} dt__ctx;

static int dt__is(dt_placement p, int kind) { return p.kind == kind; }

static int dt__later_shards(const dt_placement *pl, int mndim, int i, int d) {
    int j;
    for (j = i + 1; j < mndim; j++)
        if (pl[j].kind == DT_SHARD && pl[j].dim == d) return 1;
    return 0;
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
    if (dt__pl_cyclic(from, mndim) || dt__pl_cyclic(to, mndim)) { /* parts of several boxes: the span exchange */
        dt__plan_push(plan, DT__EXCHANGE, -1, cur, to[0], to, mndim);
        return;
    }
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

/* Instead of an allreduce on mesh dim i, when more has to happen after it:
   the tensor dim a reduce-scatter there can shard (the result nests: no
   later mesh dim shards it), the longest one (at least 2 elements left on
   this rank's box); -1 if none. A reduce-scatter moves half an
   allreduce's bytes, and what follows (another mesh dim's reduction, an
   exchange) then moves 1/parts of the data; the gather back costs what the
   allreduce saved, so the total is never more. */
static int dt__scatter_dim(const dt_placement *cur, int mndim, const int *mshape, int i, int ndim,
                           const int64_t *gshape) { /* mshape[i] = parts */
    int d, j, best = -1;
    int64_t best_len = 0;
    for (d = 0; d < ndim; d++) {
        int64_t len = gshape[d];
        if (dt__later_shards(cur, mndim, i, d)) continue;
        for (j = 0; j < i; j++)
            if (cur[j].kind == DT_SHARD && cur[j].dim == d) len = dt__ceil_div(len, mshape[j]);
        if (len >= 2 && len > best_len) { best = d; best_len = len; } /* shorter than parts: empty blocks, still fewer bytes */
    }
    return best;
}

/* does a reduction on mesh dim i leave more to do: another mesh dim's
   reduction, or a target Shard that cannot be reduced into directly */
static int dt__more_after_reduce(const dt_placement *cur, const dt_placement *dst, int mndim, int i) {
    int j;
    if (dt__is(dst[i], DT_SHARD)) return 1;
    for (j = i + 1; j < mndim; j++)
        if (dt__is(cur[j], DT_PARTIAL) && !dt__placement_eq(cur[j], dst[j])) return 1;
    return 0;
}

/* The plan from the placements and the global shape (every rank builds the
   same one); ndim 0 (no shape): allreduce wherever a reduce-scatter into
   the target does not nest. */
static void dt__plan_build_shaped(int mndim, const int *mshape, int ndim, const int64_t *gshape,
                                  const dt_placement *src, const dt_placement *dst, dt__plan *plan) {
    dt_placement cur[DT_MAX_MESH_DIMS], target[DT_MAX_MESH_DIMS];
    int i, k, cyclic = dt__pl_cyclic(src, mndim) || dt__pl_cyclic(dst, mndim);
    plan->n = 0;
    memset(target, 0, sizeof target); /* the compiler cannot see that mndim entries suffice */
    memcpy(cur, src, (size_t)mndim * sizeof *cur);
    for (i = 0; i < mndim; i++) {
        if (!dt__is(cur[i], DT_PARTIAL) || dt__placement_eq(cur[i], dst[i])) continue;
        if (!cyclic && /* (a reduce-scatter needs its blocks to be boxes) */
            dt__is(dst[i], DT_SHARD) && !dt__later_shards(cur, mndim, i, dst[i].dim) &&
                 !(dst[i].split == DT_SPLIT_SIZES &&
                   (dt__nested_on(dst, mndim, i, dst[i].dim) || dt__nested_on(cur, mndim, i, dst[i].dim))))
            /* (a nested sizes rule fits only its final parent: not into an intermediate one) */
            dt__plan_push(plan, DT__REDUCE_SCATTER, i, cur, dst[i], dst, mndim);
        else if (!cyclic && mshape && mshape[i] > 1 && dt__more_after_reduce(cur, dst, mndim, i) &&
                 (k = dt__scatter_dim(cur, mndim, mshape, i, ndim, gshape)) >= 0)
            dt__plan_push(plan, DT__REDUCE_SCATTER, i, cur, dt_shard(k), dst, mndim);
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
    static const char *const kinds[] = {"slice (local)", "allgather", "all-to-all", "exchange boxes",
                                        "allreduce", "reduce-scatter", "to partial (local)"};
    char a[160], b[160], sh[160];
    int k, mnd = x->m->ndim;
    fprintf(stderr, "dtensor plan: %s%s %s -> %s: %d step%s\n", dt_dtype_name(x->dtype),
            dt__shape_str(x->gshape, x->ndim, sh, sizeof sh), dt__placements_str(src, mnd, x->ndim, a, sizeof a),
            dt__placements_str(dst, mnd, x->ndim, b, sizeof b), p->n, p->n == 1 ? "" : "s");
    for (k = 0; k < p->n; k++) {
        const dt__step *s = &p->s[k];
        char dim[48];
        if (s->mdim < 0) snprintf(dim, sizeof dim, "whole mesh");
        else snprintf(dim, sizeof dim, "mesh dim %d%s%s", s->mdim, x->m->names[s->mdim][0] ? " " : "",
                      x->m->names[s->mdim]);
        fprintf(stderr, "  %d. %-26s on %-16s %s -> %s\n", k + 1, kinds[s->kind], dim,
                dt__placements_str(s->from, mnd, x->ndim, a, sizeof a), dt__placements_str(s->to, mnd, x->ndim, b, sizeof b));
    }
}

static void dt__box_at(const dt__ctx *x, const dt_placement *pl, const int *coord, dt__box *b) {
    dt__layout_box(x->ndim, x->gshape, x->m->ndim, x->m->shape, coord, pl, b);
}

static void dt__array_at(const dt__ctx *x, const dt_placement *pl, void *data, dt__array *a) {
    a->data = (char *)data;
    a->ndim = x->ndim;
    a->es = x->es;
    a->stride = NULL;
    dt__box_at(x, pl, x->m->coord, &a->box);
}

/* The pieces of one exchange on one side: for each member of the group
   this rank sends to (or receives from), in increasing member order, the
   box, non-empty pieces only. Each piece is 1 + 2*nd int64 words: the
   member, lo[nd], ext[nd]. Listing only what moves keeps the work of an
   exchange over p ranks at O(pieces) plus its count arrays (an alltoallv
   takes p counts and displacements each way: the one O(p) part), not
   O(p) boxes. */
typedef struct dt__pieces {
    int nd, n, cap;
    int64_t *w;
    int owned;  /* w is this list's own allocation, not a mesh scratch slot */
} dt__pieces;

static void dt__pieces_init(dt__pieces *p, int nd) { p->nd = nd; p->n = p->cap = 0; p->w = NULL; p->owned = 0; }
static void dt__pieces_free(dt__pieces *p) {
    if (p->owned) DT_FREE(p->w);
    dt__pieces_init(p, p->nd);
}

/* room for `cap` pieces: in the mesh's scratch slot `slot` (grow-only and
   reused, so that a loop of redistributions allocates nothing after its
   first call), or, with m NULL, an allocation of its own */
static dt_status dt__pieces_reserve(dt__pieces *p, dt_mesh *m, int slot, size_t cap) {
    size_t bytes = (cap ? cap : 1) * (1 + 2 * (size_t)p->nd) * sizeof(int64_t);
    dt_status st;
    if (m) st = dt__scratch(m, slot, bytes, (void **)&p->w);
    else if (!(st = dt__alloc("piece list", bytes, (void **)&p->w))) p->owned = 1;
    if (st) return st;
    p->n = 0;
    p->cap = (int)cap;
    return DT_OK;
}

static void dt__pieces_add(dt__pieces *p, int peer, const dt__box *b) {
    int64_t *w;
    int d;
    DT_ASSERT(p->n < p->cap);
    w = p->w + (size_t)p->n++ * (1 + 2 * (size_t)p->nd);
    w[0] = peer;
    for (d = 0; d < p->nd; d++) { w[1 + d] = b->lo[d]; w[1 + p->nd + d] = b->ext[d]; }
}

static int dt__piece_get(const dt__pieces *p, int k, dt__box *b) {
    const int64_t *w = p->w + (size_t)k * (1 + 2 * (size_t)p->nd);
    int d;
    for (d = 0; d < p->nd; d++) { b->lo[d] = w[1 + d]; b->ext[d] = w[1 + p->nd + d]; }
    return (int)w[0];
}

/* The one place a received piece lands: box p, packed row-major in buf
   (dev's memory), into out -- copied (acc < 0: unpacked) or combined
   (dt_tensor_redistribute_reduce's op). Every exchange engine places its
   buffered pieces through it. */
static dt_status dt__place_piece(const dt__device *dev, const void *buf, const dt__box *p, const dt__array *out,
                                 dt_dtype t, int acc) {
    dt__array s;
    s.data = (char *)buf; s.ndim = out->ndim; s.es = out->es; s.box = *p; s.stride = NULL;
    return dt__combine_on(dev, &s, out, p, t, acc);
}

/* This rank's own piece of an exchange (recv's pieces from member me): no
   message, straight from in to out (copied or combined). Every engine places
   it through here, at the point of its own choosing. */
static dt_status dt__place_own(const dt__device *dev, const dt__array *in, const dt__array *out,
                               const dt__pieces *recv, int me, dt_dtype t, int acc) {
    dt__box b;
    dt_status st = DT_OK;
    int k;
    for (k = 0; k < recv->n && !st; k++)
        if (dt__piece_get(recv, k, &b) == me && dt__box_numel(out->ndim, &b))
            st = dt__combine_on(dev, in, out, &b, t, acc);
    return st;
}

/* boxes as arrays (send[j], recv[j] for every member j) -> piece lists */
static dt_status dt__pieces_of(int n, int nd, const dt__box *boxes, dt__pieces *p) {
    int j;
    dt_status st;
    dt__pieces_init(p, nd);
    if ((st = dt__pieces_reserve(p, NULL, 0, (size_t)n))) return st;
    for (j = 0; j < n; j++)
        if (dt__box_numel(nd, &boxes[j])) dt__pieces_add(p, j, &boxes[j]);
    return DT_OK;
}

/* ---- the pipelined exchange ----
   A large piece exchange over a backend that starts messages runs in
   rounds instead of one alltoallv: each piece is cut into parts of about
   DT__PIPE_CHUNK bytes along its first dim longer than 1 (sender and
   receiver cut the same box alike), round r moves every piece's part r,
   and round r + 1 is packed and started before round r is waited for and
   placed. So packing overlaps the messages in flight, and the placing
   (unpacking, or combining for _reduce) of one round the next round's
   messages; parts that are one stretch of out arrive in place. Two rounds'
   buffers, in the mesh's scratch. Off unless DTENSOR_PIPE_CHUNK is set: on
   one node (MPICH, 2 ranks) one alltoallv was as fast or faster. */
#define DT__PIPE_CHUNK dt__pipe_chunk()

static size_t dt__pipe_chunk_state = (size_t)-1;
static size_t dt__pipe_chunk(void) { /* DTENSOR_PIPE_CHUNK, read once */
    if (dt__pipe_chunk_state == (size_t)-1) dt__pipe_chunk_state = dt__env_bytes("DTENSOR_PIPE_CHUNK", 0);
    return dt__pipe_chunk_state;
}

/* how many parts piece b is cut into, and along which dim */
static int64_t dt__pipe_parts(int nd, const dt__box *b, size_t es, int *dim) {
    int64_t k;
    size_t chunk = DT__PIPE_CHUNK;
    int d = 0;
    while (d < nd - 1 && b->ext[d] <= 1) d++;
    *dim = d;
    /* NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Branch): b is a piece dt__piece_get wrote in full */
    if (!nd || !b->ext[d] || !chunk) return 1; /* (chunk 0: not pipelined, never called) */
    k = (int64_t)((dt__box_numel(nd, b) * es + chunk - 1) / chunk);
    return k < 1 ? 1 : k > b->ext[d] ? b->ext[d] : k;
}

/* part c of piece b (nothing when the piece has fewer parts) */
static int dt__pipe_part(int nd, const dt__box *b, size_t es, int64_t c, dt__box *part) {
    int d;
    int64_t k = dt__pipe_parts(nd, b, es, &d), e = b->ext[d];
    if (c >= k) return 0;
    *part = *b;
    if (nd) {
        part->lo[d] = b->lo[d] + e * c / k;
        part->ext[d] = e * (c + 1) / k - e * c / k;
    }
    return dt__box_numel(nd, part) > 0;
}

/* the rounds a pipelined exchange takes on this rank (0: not worth it) */
static int64_t dt__pipe_rounds(const dt__array *in, const dt__pieces *send, const dt__pieces *recv, int me) {
    int64_t r = 0, k;
    int i, j, d;
    dt__box b;
    for (i = 0; i < 2; i++) {
        const dt__pieces *p = i ? recv : send;
        for (j = 0; j < p->n; j++)
            if (dt__piece_get(p, j, &b) != me && (k = dt__pipe_parts(in->ndim, &b, in->es, &d)) > r) r = k;
    }
    return r;
}

typedef struct dt__pipe_slot {
    void *req;
    char *sbuf, *rbuf;
    dt_message *msgs;
    int *unpack;        /* the recv pieces whose part this round landed in rbuf */
    size_t *uoff;
    int nunpack;
} dt__pipe_slot;

/* round r's parts: packed, their messages started */
static dt_status dt__pipe_post(dt_comm *g, const dt__device *dev, const dt__array *in, dt__array *out,
                               const dt__pieces *send, const dt__pieces *recv, int64_t r, int acc, dt__pipe_slot *x) {
    int k, j, n = 0, me = g->rank, nd = in->ndim;
    size_t so = 0, ro = 0, one, at;
    uint64_t sent = 0, got = 0;
    dt__box b, part;
    dt_status st;
    x->nunpack = 0;
    for (k = 0; k < recv->n; k++) {
        if ((j = dt__piece_get(recv, k, &b)) == me || !dt__pipe_part(nd, &b, in->es, r, &part)) continue;
        one = dt__box_numel(nd, &part) * in->es;
        x->msgs[n].bytes = one;
        x->msgs[n].peer = dt__comm_carrier_rank(g, j);
        x->msgs[n].send = 0;
        if (acc < 0 && dt__piece_contiguous(out, &part, &at)) {
            x->msgs[n++].buf = out->data + at;
        } else {
            x->msgs[n++].buf = x->rbuf + ro;
            x->unpack[x->nunpack] = k;
            x->uoff[x->nunpack++] = ro;
            ro += one;
        }
        got += one;
    }
    for (k = 0; k < send->n; k++) {
        if ((j = dt__piece_get(send, k, &b)) == me || !dt__pipe_part(nd, &b, in->es, r, &part)) continue;
        one = dt__box_numel(nd, &part) * in->es;
        if (dt__piece_contiguous(in, &part, &at)) {
            x->msgs[n].buf = in->data + at; /* (sent, never written) */
        } else {
            if ((st = dt__pack_on(dev, in, &part, x->sbuf + so))) return st;
            x->msgs[n].buf = x->sbuf + so;
            so += one;
        }
        x->msgs[n].bytes = one;
        x->msgs[n].peer = dt__comm_carrier_rank(g, j);
        x->msgs[n++].send = 1;
        sent += one;
    }
    return dt__comm_start(g, DT__TAG_MOVE, n, x->msgs, sent, got, &x->req);
}

/* round r's parts that landed in rbuf: into out (combined for acc >= 0) */
static dt_status dt__pipe_place(const dt__device *dev, const dt__array *in, dt__array *out, const dt__pieces *recv,
                                int64_t r, dt_dtype t, int acc, const dt__pipe_slot *x) {
    int u;
    dt__box b, part;
    dt_status st = DT_OK;
    for (u = 0; u < x->nunpack && !st; u++) {
        dt__piece_get(recv, x->unpack[u], &b);
        dt__pipe_part(in->ndim, &b, in->es, r, &part);
        st = dt__place_piece(dev, x->rbuf + x->uoff[u], &part, out, t, acc);
    }
    return st;
}

/* the bytes of round r's packed sends and received parts on this rank */
static void dt__pipe_bytes(const dt__array *in, const dt__array *out, const dt__pieces *send, const dt__pieces *recv,
                           int me, int64_t r, int acc, size_t *sb, size_t *rb) {
    int k;
    size_t at;
    dt__box b, part;
    *sb = *rb = 0;
    for (k = 0; k < send->n; k++)
        if (dt__piece_get(send, k, &b) != me && dt__pipe_part(in->ndim, &b, in->es, r, &part) &&
            !dt__piece_contiguous(in, &part, &at))
            *sb += dt__box_numel(in->ndim, &part) * in->es;
    for (k = 0; k < recv->n; k++)
        if (dt__piece_get(recv, k, &b) != me && dt__pipe_part(in->ndim, &b, in->es, r, &part) &&
            (acc >= 0 || !dt__piece_contiguous(out, &part, &at)))
            *rb += dt__box_numel(in->ndim, &part) * in->es;
}

static dt_status dt__exchange_pipelined(dt_mesh *m, const dt__device *dev, dt_comm *g, const dt__array *in,
                                        dt__array *out, const dt__pieces *send, const dt__pieces *recv,
                                        int64_t rounds, dt_dtype t, int acc) {
    dt__pipe_slot x[2];
    size_t smax = 0, rmax = 0, sb, rb, nmsg = (size_t)(send->n + recv->n) + 1;
    char *sbuf = NULL, *rbuf = NULL, *mem = NULL;
    int64_t r;
    int i;
    dt_status st = DT_OK, e;
    for (r = 0; r < rounds; r++) {
        dt__pipe_bytes(in, out, send, recv, g->rank, r, acc, &sb, &rb);
        if (sb > smax) smax = sb;
        if (rb > rmax) rmax = rb;
    }
    if ((st = dt__scratch_on(m, dev, DT__SCRATCH_SEND, 2 * smax, (void **)&sbuf)) ||
        (st = dt__scratch_on(m, dev, DT__SCRATCH_RECV, 2 * rmax, (void **)&rbuf)) ||
        (st = dt__alloc("dt_tensor_redistribute", 2 * nmsg * (sizeof(dt_message) + sizeof(int) + sizeof(size_t)),
                        (void **)&mem)))
        return st;
    for (i = 0; i < 2; i++) { /* (size_t, then messages, then ints: each aligned) */
        x[i].req = NULL;
        x[i].sbuf = sbuf + (size_t)i * smax;
        x[i].rbuf = rbuf + (size_t)i * rmax;
        x[i].uoff = (size_t *)(void *)(mem + (size_t)i * nmsg * sizeof(size_t));
        x[i].msgs = (dt_message *)(void *)(mem + 2 * nmsg * sizeof(size_t) + (size_t)i * nmsg * sizeof(dt_message));
        x[i].unpack = (int *)(void *)(mem + 2 * nmsg * (sizeof(size_t) + sizeof(dt_message)) +
                                      (size_t)i * nmsg * sizeof(int));
    }
    st = dt__place_own(dev, in, out, recv, g->rank, t, acc); /* while nothing is in flight */
    if (!st) st = dt__pipe_post(g, dev, in, out, send, recv, 0, acc, &x[0]);
    for (r = 0; r < rounds && !st; r++) {
        dt__pipe_slot *cur = &x[r % 2];
        if (r + 1 < rounds && (st = dt__pipe_post(g, dev, in, out, send, recv, r + 1, acc, &x[(r + 1) % 2]))) break;
        e = dt__comm_wait(g, cur->req);
        cur->req = NULL;
        if ((st = e)) break;
        st = dt__pipe_place(dev, in, out, recv, r, t, acc, cur);
    }
    for (i = 0; i < 2; i++) { /* after a failure: nothing left in flight */
        e = dt__comm_wait(g, x[i].req);
        if (!st) st = e;
    }
    DT_FREE(mem);
    return st;
}

/* Pipelined where it pays: host memory, a backend with start and wait, and
   parts large enough to cut (bound: the largest part of the step on any
   rank, from the layouts alone, so every rank of g chooses alike: a rank
   posting messages while another calls the collective would hang). */
static int dt__pipe_applies(const dt__device *dev, dt_comm *g, size_t bound) {
    dt_comm *w = dt__comm_carrier(g);
    return dt__on_host(dev) && g->size > 1 && w->be.start && w->be.wait && DT__PIPE_CHUNK &&
           bound >= 2 * DT__PIPE_CHUNK;
}

#ifndef DTENSOR_NO_MPI
/* ---- the posted exchange ----
   Over the built-in MPI backend a host piece exchange is posted as messages
   instead of one alltoallv: receives first (MPI_Irecv), each straight into
   out where the piece is one stretch of it; sends (MPI_Isend) straight
   from `in` where the piece is one stretch, else packed; this rank's own
   piece is placed while they fly, and each buffered receive is placed
   (unpacked, or combined for _reduce) as it arrives (MPI_Waitsome). Where
   the MPI's datatype engine is fast (Open MPI), a strided piece whose
   contiguous runs are long enough moves as a derived datatype of the
   tensor's storage (dt__mpi_box_type): no pack, no unpack, the copies
   folded into the one MPI makes. A transposing piece (runs shorter than
   that) is packed, tiled. Every message is elements of one MPI type, typed
   or packed, so the two ends' type signatures match whichever way each
   side moves a piece. DTENSOR_EXCHANGE=alltoallv goes back to one
   alltoallv of packed pieces; DTENSOR_EXCHANGE_TYPES=N: the shortest run,
   in bytes, a datatype takes (0: every strided piece packed). */
#ifndef DT__XTYPES_RUN
#ifdef OPEN_MPI
#define DT__XTYPES_RUN 256
#else
#define DT__XTYPES_RUN 0 /* MPICH: its engine was slower than our pack (bench/README.md) */
#endif
#endif
static size_t dt__xrun_state = (size_t)-1;
static int dt__xposted_state = -1;
static size_t dt__xrun(void) { /* DTENSOR_EXCHANGE_TYPES, read once; SIZE_MAX: never */
    if (dt__xrun_state == (size_t)-1) {
        size_t r = dt__env_bytes("DTENSOR_EXCHANGE_TYPES", (size_t)DT__XTYPES_RUN);
        dt__xrun_state = r ? r : SIZE_MAX;
    }
    return dt__xrun_state;
}

static int dt__xposted(void) { /* DTENSOR_EXCHANGE, read once */
    if (dt__xposted_state < 0) {
        const char *e = getenv("DTENSOR_EXCHANGE");
        dt__xposted_state = !(e && !strcmp(e, "alltoallv"));
    }
    return dt__xposted_state;
}

static int dt__xposted_applies(const dt__device *dev, dt_comm *g, size_t bound) {
    return dt__on_host(dev) && g->size > 1 && dt__comm_typed_messages(g) && dt__xposted() && bound <= (size_t)INT_MAX;
}

typedef struct dt__xmsgs { /* the posted exchange's messages, in the COUNTS scratch */
    dt_message *msgs;
    char **base;
    int *count, *piece;
    MPI_Datatype *type;
    MPI_Request *rq;
    MPI_Status *sts;
    int *idx;
    int n, nrecv;
} dt__xmsgs;

/* the next n bytes of p, from *at, rounded up to 16 */
static void *dt__xtake(char *p, size_t *at, size_t n) {
    void *q = p + *at;
    *at += (n + 15) / 16 * 16;
    return q;
}

static dt_status dt__xmsgs_alloc(dt_mesh *m, int cap, dt__xmsgs *x) {
    size_t c = (size_t)(cap ? cap : 1), at = 0;
    size_t bytes = 8 * 15 + c * (sizeof(MPI_Status) + sizeof(dt_message) + sizeof(char *) + sizeof(MPI_Datatype) +
                                 sizeof(MPI_Request) + 3 * sizeof(int));
    char *p = NULL;
    dt_status st = dt__scratch(m, DT__SCRATCH_COUNTS, bytes, (void **)&p);
    if (st) return st;
    x->sts = (MPI_Status *)dt__xtake(p, &at, c * sizeof(MPI_Status));
    x->msgs = (dt_message *)dt__xtake(p, &at, c * sizeof(dt_message));
    x->base = (char **)dt__xtake(p, &at, c * sizeof(char *));
    x->type = (MPI_Datatype *)dt__xtake(p, &at, c * sizeof(MPI_Datatype));
    x->rq = (MPI_Request *)dt__xtake(p, &at, c * sizeof(MPI_Request));
    x->count = (int *)dt__xtake(p, &at, c * sizeof(int));
    x->piece = (int *)dt__xtake(p, &at, c * sizeof(int));
    x->idx = (int *)dt__xtake(p, &at, c * sizeof(int));
    x->n = x->nrecv = 0;
    return DT_OK;
}

/* the next message: piece k of `a`, in place (a stretch of a, or a type of
   el where `typed`); 0 where it must go through a buffer (type NULL) */
static int dt__xmsg(dt__xmsgs *x, dt_comm *g, int j, int k, const dt__array *a, const dt__box *b, MPI_Datatype el,
                    int send, int typed) {
    int i = x->n++;
    x->msgs[i].peer = dt__comm_carrier_rank(g, j);
    x->msgs[i].send = send;
    x->msgs[i].bytes = dt__box_numel(a->ndim, b) * a->es;
    x->msgs[i].buf = NULL;
    x->piece[i] = k;
    x->type[i] = MPI_DATATYPE_NULL;
    if (typed && dt__mpi_box_type(a, b, el, dt__xrun(), &x->base[i], &x->count[i], &x->type[i])) return 1;
    x->type[i] = MPI_DATATYPE_NULL;
    return 0;
}

static void dt__xmsgs_free_types(dt__xmsgs *x, MPI_Datatype el) {
    dt__mpi_types_free(x->n ? x->type : NULL, x->n, &el, 0); /* (none allocated: x->type unset) */
}

/* the buffered receives placed into out as they arrive (unpacked, or
   combined for acc >= 0), then the sends completed */
static dt_status dt__xwait_place(const dt__device *dev, dt__array *out, const dt__pieces *recv, dt__xmsgs *x,
                                 dt_dtype t, int acc) {
    int left = x->nrecv, got, u;
    dt_status st = DT_OK, sw;
    while (left > 0) {
        dt_status sg = dt__mpi_waitsome(x->nrecv, x->rq, &got, x->idx, x->sts);
        if (sg) {
            if (!st) st = sg;
            break;
        }
        for (u = 0; u < got; u++) {
            int i = x->idx[u];
            dt__box b;
            if (st || !x->msgs[i].buf) continue; /* (landed in out) */
            dt__piece_get(recv, x->piece[i], &b);
            st = dt__place_piece(dev, x->msgs[i].buf, &b, out, t, acc);
        }
        left -= got;
    }
    if (left > 0) (void)dt__comm_wait_typed(x->nrecv, x->rq, x->sts); /* (never leave a request behind) */
    sw = dt__comm_wait_typed(x->n - x->nrecv, x->rq + x->nrecv, x->sts);
    return st ? st : sw;
}

static dt_status dt__exchange_posted(dt_mesh *m, const dt__device *dev, dt_comm *g, const dt__array *in,
                                    dt__array *out, const dt__pieces *send, const dt__pieces *recv, dt_dtype t,
                                    int acc) {
    int me = g->rank, nd = in->ndim, j, k, i, owned, nrq = 0, mine = -1;
    size_t es = in->es, rbytes = 0, sbytes = 0, off;
    uint64_t sent = 0, got = 0;
    char *rbuf = NULL, *sbuf = NULL;
    MPI_Datatype el;
    dt__xmsgs x;
    dt__box b;
    dt_status st, sw;
    x.n = 0;
    if (!dt__mpi_elem_type(es, &el, &owned)) /* (dt__transport_of chose this path: MPI refused the type) */
        return dt__fail(DT_ERR_COMM, "dt_comm_mpi: no MPI datatype for elements of %lu bytes", (unsigned long)es);
    if ((st = dt__xmsgs_alloc(m, send->n + recv->n, &x))) goto done;
    for (k = 0; k < recv->n; k++) {
        size_t one;
        if ((j = dt__piece_get(recv, k, &b)) == me) { mine = k; continue; }
        if (!(one = dt__box_numel(nd, &b) * es)) continue;
        got += one;
        /* acc >= 0: into the receive buffer, combined as it arrives; else
           straight into out, or unpacked as it arrives where no type fits */
        if (!dt__xmsg(&x, g, j, k, out, &b, el, 0, acc < 0)) rbytes += one;
    }
    x.nrecv = x.n;
    for (k = 0; k < send->n; k++) {
        size_t one;
        if ((j = dt__piece_get(send, k, &b)) == me || !(one = dt__box_numel(nd, &b) * es)) continue;
        sent += one;
        if (!dt__xmsg(&x, g, j, k, in, &b, el, 1, 1)) sbytes += one;
    }
    if ((rbytes && (st = dt__scratch(m, DT__SCRATCH_RECV, rbytes, (void **)&rbuf))) ||
        (sbytes && (st = dt__scratch(m, DT__SCRATCH_SEND, sbytes, (void **)&sbuf))))
        goto done;
    for (i = 0, off = 0; i < x.nrecv; i++) /* the buffered receives: their place in rbuf */
        if (x.type[i] == MPI_DATATYPE_NULL) {
            x.base[i] = rbuf + off; x.count[i] = (int)(x.msgs[i].bytes / es); x.type[i] = el;
            x.msgs[i].buf = rbuf + off; /* (marks it: placed from rbuf) */
            off += x.msgs[i].bytes;
        }
    for (i = x.nrecv, off = 0; i < x.n; i++) /* the sends no type could take: packed */
        if (x.type[i] == MPI_DATATYPE_NULL) {
            dt__piece_get(send, x.piece[i], &b);
            dt__pack(in, &b, sbuf + off);
            x.base[i] = sbuf + off; x.count[i] = (int)(x.msgs[i].bytes / es); x.type[i] = el;
            off += x.msgs[i].bytes;
        }
    if ((st = dt__comm_start_typed(g, DT__TAG_MOVE, x.n, x.msgs, x.base, x.count, x.type, x.rq, x.sts, &nrq, sent,
                                   got)))
        goto done;
    if (mine >= 0) st = dt__place_own(dev, in, out, recv, me, t, acc); /* while the messages fly */
    sw = rbytes ? dt__xwait_place(dev, out, recv, &x, t, acc) : dt__comm_wait_typed(nrq, x.rq, x.sts);
    if (!st) st = sw;
done:
    dt__xmsgs_free_types(&x, el);
    dt__mpi_types_free(NULL, 0, &el, owned);
    return st;
}
#endif

/* ---- the transport ----
   How one piece exchange travels, chosen in one place from what every rank
   of g shares -- the device, g's backend, the element size and the step's
   bound (dt__step_bound: every rank's counts stay under it) --
   never from this rank's own counts or storage, so the choice is the same
   on every rank by construction. (The shared arena, tried before this, is
   chosen by a gathered verdict: dt__shm_step.) */
typedef enum dt__transport {
    DT__VIA_PIPELINED,  /* rounds of started messages (DTENSOR_PIPE_CHUNK)        */
    DT__VIA_POSTED,     /* MPI_Irecv/MPI_Isend per piece, typed or packed          */
    DT__VIA_COLLECTIVE, /* the backend's alltoallv / allgatherv                    */
    DT__VIA_SENDRECV,   /* the same collective emulated over sendrecv             */
    DT__VIA_BEGUN,      /* started in _begin, completed in _end (dt__async)        */
    DT__VIA_SHM         /* read from the node's shared arena (dt__shm_step)        */
} dt__transport;

static const char *dt__transport_name(dt__transport v) {
    static const char *const names[] = {"pipelined messages", "posted MPI messages", "backend collective",
                                        "collective over sendrecv", "messages started in _begin",
                                        "the shared arena"};
    return names[v];
}

static dt__transport dt__transport_of(const dt__device *dev, dt_comm *g, size_t bound, size_t es, int gather) {
    if (!gather && dt__pipe_applies(dev, g, bound)) return DT__VIA_PIPELINED;
#ifndef DTENSOR_NO_MPI
    if (!gather && dt__xposted_applies(dev, g, bound) && dt__mpi_elem_known(es)) return DT__VIA_POSTED;
#else
    (void)es;
#endif
    if (gather) return dt__comm_allgatherv_native(g) ? DT__VIA_COLLECTIVE : DT__VIA_SENDRECV;
    return dt__comm_alltoallv_native(g, bound) ? DT__VIA_COLLECTIVE : DT__VIA_SENDRECV;
}

/* DTENSOR_LOG=plan: the transport a step's exchange took (mesh rank 0) */
static void dt__transport_log(const dt_mesh *m, const char *what, dt__transport v) {
    if (m->rank == 0 && dt__log_on(DT__LOG_PLAN)) fprintf(stderr, "     %s via %s\n", what, dt__transport_name(v));
}

/* May a piece travel in place, at byte offset off of its tensor's storage?
   The collective's native-or-emulated choice is made from `bound`, the same
   on every rank (dt__comm_alltoallv), so every count and displacement this
   rank hands it must stay under the bound: a piece of a padded (ghosted or
   strided) array can sit past it and is then packed. A gather's allgatherv
   is declined by the backend from its own displacements (the int range):
   in place only where the bound itself fits, so that every rank's
   displacements do; past it every rank packs, and packed displacements are
   the same on every rank. */
static int dt__in_place_fits(size_t off, size_t count, size_t bound, int gather) {
    return off + count <= bound && (!gather || bound <= DT__COUNT_MAX);
}

/* The one data-movement engine. Over group g, this rank sends each piece of
   `send` (a box inside `in`) to its member and receives each piece of
   `recv` (a box inside `out`) from its member; its own piece of recv is a
   local copy. gather: every member sends its whole `in`, so one allgatherv
   carries it (send is unused). Pieces that are contiguous in their buffer
   travel in place; the rest are packed. acc >= 0: what lands in `out` is
   combined with what it holds (dev's copy_box_op, dtype t):
   every received piece comes through the receive buffer, and the local
   piece and the unpack combine. Large exchanges over a backend that starts
   messages run pipelined (above). */
static dt_status dt__exchange_pieces_op(dt_mesh *m, const dt__device *dev, dt_comm *g, const dt__array *in,
                                        dt__array *out, const dt__pieces *send, const dt__pieces *recv, int gather,
                                        size_t bound, dt_dtype t, int acc) {
    int n = g->size, me = g->rank, j, k, nd = in->ndim, direct_s = 1, direct_r = acc < 0, mine = -1;
    size_t es = in->es, *v = NULL, *sc, *sd, *rc, *rd, off;
    char *sbuf = NULL, *rbuf = NULL;
    dt__box b;
    dt_status st;
    dt__transport via = dt__transport_of(dev, g, bound, es, gather);
    dt__transport_log(m, gather ? "gather" : "exchange boxes", via);
    if (via == DT__VIA_PIPELINED)
        return dt__exchange_pipelined(m, dev, g, in, out, send, recv, dt__pipe_rounds(in, send, recv, me), t, acc);
#ifndef DTENSOR_NO_MPI
    if (via == DT__VIA_POSTED) return dt__exchange_posted(m, dev, g, in, out, send, recv, t, acc);
#endif
    if ((st = dt__scratch(m, DT__SCRATCH_COUNTS, 4 * (size_t)n * sizeof(size_t), (void **)&v))) return st;
    memset(v, 0, 4 * (size_t)n * sizeof(size_t));
    sc = v; sd = v + n; rc = v + 2 * n; rd = v + 3 * n;
    for (k = 0; k < recv->n; k++) {
        j = dt__piece_get(recv, k, &b);
        if (j == me) mine = k;
        if (j == me && !gather) continue;
        rc[j] = dt__box_numel(nd, &b) * es;
        if (direct_r && !(dt__piece_contiguous(out, &b, &rd[j]) && dt__in_place_fits(rd[j], rc[j], bound, gather)))
            direct_r = 0;
    }
    for (k = 0; !gather && k < send->n; k++) {
        j = dt__piece_get(send, k, &b);
        if (j == me) continue;
        sc[j] = dt__box_numel(nd, &b) * es;
        if (direct_s && !(dt__piece_contiguous(in, &b, &sd[j]) && dt__in_place_fits(sd[j], sc[j], bound, 0)))
            direct_s = 0;
    }
    if (!direct_r) {
        for (j = 0, off = 0; j < n; j++) { rd[j] = off; off += rc[j]; }
        if ((st = dt__scratch_on(m, dev, DT__SCRATCH_RECV, off, (void **)&rbuf))) goto done;
    }
    if (!direct_s) {
        for (j = 0, off = 0; j < n; j++) { sd[j] = off; off += sc[j]; }
        if ((st = dt__scratch_on(m, dev, DT__SCRATCH_SEND, off, (void **)&sbuf))) goto done;
        for (k = 0; k < send->n && !st; k++) {
            j = dt__piece_get(send, k, &b);
            if (sc[j] && j != me) st = dt__pack_on(dev, in, &b, sbuf + sd[j]);
        }
        if (st) goto done;
    }
    if (gather && !dt__piece_contiguous(in, &in->box, &off)) { /* a strided shard: packed once */
        if ((st = dt__scratch_on(m, dev, DT__SCRATCH_SEND, dt__box_numel(nd, &in->box) * es, (void **)&sbuf)) ||
            (st = dt__pack_on(dev, in, &in->box, sbuf)))
            goto done;
    }
    if (gather)
        st = dt__comm_allgatherv(g, sbuf ? sbuf : in->data, dt__box_numel(nd, &in->box) * es,
                                 direct_r ? out->data : rbuf, rc, rd);
    else
        st = dt__comm_alltoallv(g, direct_s ? in->data : sbuf, sc, sd, direct_r ? out->data : rbuf, rc, rd, bound);
    if (st) goto done;
    if (!gather && mine >= 0 && (st = dt__place_own(dev, in, out, recv, me, t, acc))) goto done;
    if (!direct_r)
        for (k = 0; k < recv->n && !st; k++) {
            j = dt__piece_get(recv, k, &b);
            if (rc[j]) st = dt__place_piece(dev, rbuf + rd[j], &b, out, t, acc);
        }
done:
    return st;
}

static dt_status dt__exchange_pieces(dt_mesh *m, const dt__device *dev, dt_comm *g, const dt__array *in,
                                     dt__array *out, const dt__pieces *send, const dt__pieces *recv, int gather,
                                     size_t bound) {
    return dt__exchange_pieces_op(m, dev, g, in, out, send, recv, gather, bound, DT_U8, -1);
}

/* ---- a redistribution in flight (dt_tensor_redistribute_begin / _end) ----
   A plan of one exchange (pieces over the mesh or a mesh dim, or a gather)
   is posted as messages through the backend's start: begin packs every
   send into the call's own buffer (so t is not read again once begin
   returns), copies this rank's own piece, and starts the messages; end
   waits and unpacks (or combines) the received pieces into out. Its
   buffers are the call's own, not the mesh's scratch: other calls run in
   between, other redistributions among them. Any other plan runs whole
   inside begin. Over MPI, the messages move inside MPI calls (progress):
   dt_tensor_redistribute_test between pieces of work moves them on. */
typedef struct dt__async {
    dt_comm *comm;        /* the exchange's comm; NULL: nothing in flight (done in begin) */
    void *request;        /* the backend's, for the messages below */
    dt_mesh *m;           /* whose pool the buffers return to */
    char *sbuf, *rbuf;    /* packed sends, receives not placed in out directly (host) */
    size_t scap, rcap;    /* their sizes */
    dt_message *msgs;
    dt__pieces recv;      /* the pieces to place in out (this list's own copy) */
    size_t *roff;         /* each one's offset in rbuf */
    dt__array out;        /* out's storage: where they go */
    const dt__device *dev;
    dt_dtype dtype;
    int acc, me;          /* acc: -1 assign, else the dt_reduce combining (_reduce_begin) */
} dt__async;

/* A begun exchange's buffers come from the mesh's pool and go back to it at
   _end, so a time loop of begin/end allocates (and page-faults) nothing
   after its first steps; dt_mesh_trim frees them. */
static dt_status dt__apool_get(dt_mesh *m, size_t bytes, char **out, size_t *cap) {
    int i, best = -1;
    for (i = 0; i < 4; i++)
        if (m->apool[i] && m->apool_cap[i] >= bytes && (best < 0 || m->apool_cap[i] < m->apool_cap[best])) best = i;
    if (best >= 0) {
        *out = (char *)m->apool[best];
        *cap = m->apool_cap[best];
        m->apool[best] = NULL;
        m->apool_cap[best] = 0;
        return DT_OK;
    }
    *cap = bytes ? bytes : 1;
    return dt__alloc("dt_tensor_redistribute_begin", *cap, (void **)out);
}

/* back to the pool, in place of its smallest buffer when it is full */
static void dt__apool_put(dt_mesh *m, char *p, size_t cap) {
    int i, low = 0;
    if (!p) return;
    for (i = 0; i < 4; i++) {
        if (!m->apool[i]) { low = i; break; }
        if (m->apool_cap[i] < m->apool_cap[low]) low = i;
    }
    if (m->apool[low] && m->apool_cap[low] >= cap) { DT_FREE(p); return; }
    DT_FREE(m->apool[low]);
    m->apool[low] = p;
    m->apool_cap[low] = cap;
}

static void dt__async_free(dt__async *a) {
    if (!a) return;
    if (a->m) {
        dt__apool_put(a->m, a->sbuf, a->scap);
        dt__apool_put(a->m, a->rbuf, a->rcap);
    }
    DT_FREE(a->msgs);
    DT_FREE(a->roff);
    dt__pieces_free(&a->recv);
    DT_FREE(a);
}

static dt_status dt__async_new(const char *fn, int nd, dt__async **out) {
    dt__async *a = NULL;
    dt_status st = dt__alloc(fn, sizeof *a, (void **)&a);
    if (st) return st;
    memset(a, 0, sizeof *a);
    dt__pieces_init(&a->recv, nd);
    a->acc = -1;
    *out = a;
    return DT_OK;
}

/* one message of the posted exchange */
static void dt__async_msg(dt__async *a, int *nm, dt_comm *g, int j, void *buf, size_t bytes, int send) {
    dt_message *m = &a->msgs[(*nm)++];
    m->buf = buf;
    m->bytes = bytes;
    m->peer = dt__comm_carrier_rank(g, j);
    m->send = send;
}

/* dt__exchange_pieces_op's exchange, posted into x->async (see above) */
static dt_status dt__exchange_pieces_post(const dt__ctx *x, dt_comm *g, const dt__array *in, dt__array *out,
                                          const dt__pieces *send, const dt__pieces *recv, int gather) {
    const char *fn = "dt_tensor_redistribute_begin";
    dt__async *a = x->async;
    const dt__device *dev = x->dev;
    int n = g->size, me = g->rank, j, k, nd = in->ndim, nm = 0;
    size_t es = in->es, sb = 0, rb = 0, off, one, wsize = (1 + 2 * (size_t)nd) * sizeof(int64_t);
    uint64_t sent = 0;
    dt__box b;
    dt_status st;
    for (k = 0; k < recv->n; k++)
        if (dt__piece_get(recv, k, &b) != me) rb += dt__box_numel(nd, &b) * es;
    if (gather) sb = dt__box_numel(nd, &in->box) * es;
    for (k = 0; !gather && k < send->n; k++)
        if (dt__piece_get(send, k, &b) != me) sb += dt__box_numel(nd, &b) * es;
    a->dev = dev;
    a->dtype = x->dtype;
    a->acc = x->acc;
    a->out = *out;
    a->me = me;
    a->m = x->m;
    for (k = 0; k < recv->n && x->acc < 0; k++) /* pieces one stretch of out arrive in place (out is not read) */
        if (dt__piece_get(recv, k, &b) != me && dt__piece_contiguous(out, &b, &off))
            rb -= dt__box_numel(nd, &b) * es;
    if ((st = dt__alloc(fn, (2 * (size_t)n + send->n + recv->n + 1) * sizeof *a->msgs, (void **)&a->msgs)) ||
        (st = dt__alloc(fn, ((size_t)recv->n + 1) * sizeof *a->roff, (void **)&a->roff)) ||
        (st = dt__pieces_reserve(&a->recv, NULL, 0, (size_t)recv->n)) ||
        (st = dt__apool_get(x->m, sb, &a->sbuf, &a->scap)) || (st = dt__apool_get(x->m, rb, &a->rbuf, &a->rcap)))
        return st;
    if (recv->n) memcpy(a->recv.w, recv->w, (size_t)recv->n * wsize);
    a->recv.n = recv->n;
    if (gather && sb) { /* the shard, packed once, to every other member */
        if ((st = dt__pack_on(dev, in, &in->box, a->sbuf))) return st;
        for (j = 0; j < n; j++)
            if (j != me) dt__async_msg(a, &nm, g, j, a->sbuf, sb, 1);
        sent = sb * (uint64_t)(n - 1);
    }
    for (k = 0, off = 0; !gather && k < send->n; k++) {
        j = dt__piece_get(send, k, &b);
        one = dt__box_numel(nd, &b) * es;
        if (j == me || !one) continue;
        if ((st = dt__pack_on(dev, in, &b, a->sbuf + off))) return st;
        dt__async_msg(a, &nm, g, j, a->sbuf + off, one, 1);
        off += one;
        sent += one;
    }
    for (k = 0, off = 0; k < recv->n; k++) {
        size_t at;
        j = dt__piece_get(recv, k, &b);
        one = dt__box_numel(nd, &b) * es;
        a->roff[k] = off;
        if (j == me) continue; /* this rank's own piece: placed below */
        if (!one) continue;
        if (x->acc < 0 && dt__piece_contiguous(out, &b, &at)) {
            a->roff[k] = (size_t)-1; /* (in place: nothing to unpack) */
            dt__async_msg(a, &nm, g, j, out->data + at, one, 0);
            continue;
        }
        dt__async_msg(a, &nm, g, j, a->rbuf + off, one, 0);
        off += one;
    }
    /* this rank's own piece, now (out is not read before _end) */
    if ((st = dt__place_own(dev, in, out, recv, me, x->dtype, x->acc))) return st;
    a->comm = g;
    dt__transport_log(x->m, gather ? "gather" : "exchange boxes", DT__VIA_BEGUN);
    return dt__comm_start(g, DT__TAG_MOVE, nm, a->msgs, sent, rb, &a->request);
}

/* wait for a's messages and place what arrived in out; frees a */
static dt_status dt__async_finish(dt__async *a) {
    dt_status st = a->comm ? dt__comm_wait(a->comm, a->request) : DT_OK;
    int k, j, nd = a->out.ndim;
    dt__box b;
    a->request = NULL;
    for (k = 0; k < a->recv.n && !st && a->comm; k++) {
        j = dt__piece_get(&a->recv, k, &b);
        if (j == a->me || !dt__box_numel(nd, &b) || a->roff[k] == (size_t)-1) continue;
        st = dt__place_piece(a->dev, a->rbuf + a->roff[k], &b, &a->out, a->dtype, a->acc);
    }
    dt__async_free(a);
    return st;
}

/* out destroyed before its _end: the messages every rank posted in begin
   are completed (no hang, nothing freed under the backend), and the
   misuse reported as the error of dt_tensor_destroy */
static void dt__async_abandon(dt_tensor *t) {
    dt__async *a = (dt__async *)t->async;
    t->async = NULL;
    if (a->comm) (void)dt__comm_wait(a->comm, a->request);
    a->request = NULL;
    dt__async_free(a);
    (void)dt__fail(DT_ERR_ARG, "dt_tensor_destroy: the tensor was the target of a dt_tensor_redistribute_begin "
                   "that had not ended; its messages were completed here (call dt_tensor_redistribute_end first)");
    if (dt__public_depth == 0) dt__call_handler(DT_ERR_ARG, "dt_tensor_destroy");
}

/* a (or NULL) as t's redistribution in flight, with the end a destroy calls */
static void dt__async_attach(dt_tensor *t, dt__async *a) {
    t->async = a;
    t->async_abandon = a ? dt__async_abandon : NULL;
}

/* the same with a box per member: send[j], recv[j] (empty where nothing moves) */
static dt_status dt__exchange(dt_mesh *m, const dt__device *dev, dt_comm *g, const dt__array *in, dt__array *out,
                              const dt__box *send, const dt__box *recv, int gather, size_t bound) {
    dt__pieces ps, pr;
    dt_status st = dt__pieces_of(g->size, in->ndim, recv, &pr);
    dt__pieces_init(&ps, in->ndim);
    if (!st && !gather) st = dt__pieces_of(g->size, in->ndim, send, &ps);
    if (!st) st = dt__exchange_pieces(m, dev, g, in, out, &ps, &pr, gather, bound);
    dt__pieces_free(&ps);
    dt__pieces_free(&pr);
    return st;
}

static dt_status dt__boxes(int n, dt__box **send, dt__box **recv) {
    dt__box *b = NULL;
    dt_status st = dt__alloc("exchange boxes", 2 * (size_t)n * sizeof(dt__box), (void **)&b);
    if (st || !b) return st ? st : DT_ERR_NOMEM;
    memset(b, 0, 2 * (size_t)n * sizeof(dt__box));
    *send = b;
    *recv = b + n;
    return DT_OK;
}

/* No part of any coordinate is larger than this, per tensor dim: each
   level's largest part of the largest parent (part 0 under chunk, balanced
   and cyclic; the largest size under a sizes rule) */
static size_t dt__max_part_numel(const dt__ctx *x, const dt_placement *pl) {
    size_t numel = 1;
    int d, i;
    for (d = 0; d < x->ndim; d++) {
        int64_t n = x->gshape[d];
        for (i = 0; i < x->m->ndim; i++) {
            const dt_placement *p = &pl[i];
            int k = x->m->shape[i], c;
            if (p->kind != DT_SHARD || p->dim != d) continue;
            if (p->split == DT_SPLIT_SIZES)
                for (c = 0, n = 0; c < k; c++) n = p->sizes[c] > n ? p->sizes[c] : n;
            else if (p->split == DT_SPLIT_CYCLIC) n = dt__numroc(n, p->block, k, 0);
            else n = dt__ceil_div(n, k);
        }
        numel *= (size_t)n;
    }
    return numel;
}

/* A bound on every count and displacement of a step's exchange on any
   rank, computed alike on every rank from the layouts alone: what a rank
   receives is at most its destination part (each destination element has
   one sender); what it sends is at most its source part times the number
   of ranks that hold a copy of one element afterwards (the mesh dims the
   source shards and the destination does not: S -> R sends a part to every
   member). */
static size_t dt__step_bound(const dt__ctx *x, const dt__step *s) {
    size_t na = dt__max_part_numel(x, s->from), nb = dt__max_part_numel(x, s->to);
    int i;
    for (i = 0; i < x->m->ndim; i++)
        if (dt__is(s->from[i], DT_SHARD) && !dt__is(s->to[i], DT_SHARD)) na *= (size_t)x->m->shape[i];
    return (na > nb ? na : nb) * x->es;
}

/* The pieces of one side of a step: every mesh coordinate c, equal to this
   rank's on the mesh dims in `fixed`, whose box under `pl` meets `target`,
   with the intersection. The walk goes through the mesh dims in order, as
   the layout nests the splits; on a mesh dim that shards a tensor dim only
   the parts that meet the target's extent are visited (their range is
   computed, not searched), and each part it keeps holds at least one piece
   (the parts tile their parent). So the cost is O(mesh dims x pieces), not
   O(ranks): a box exchange on a mesh of 65,536 ranks whose pieces come from
   a handful of ranks builds a handful of pieces. `member`: the member
   index of c in the group (its coordinate on that mesh dim), or -1 for the
   mesh rank. */
typedef struct dt__walk {
    const dt__ctx *x;
    const dt_placement *pl;
    const dt__box *target;
    unsigned fixed;
    int member;
    int c[DT_MAX_MESH_DIMS];
    dt__pieces *out;
} dt__walk;

static dt_status dt__walk_dim(dt__walk *w, int i, const dt__box *b) {
    const dt_mesh *m = w->x->m;
    int r0 = 0, r1, r, d = -1;
    int64_t n = 0;
    dt_status st;
    if (i == m->ndim) { /* (m->shape[i] is past the array here when ndim is DT_MAX_MESH_DIMS) */
        dt__box piece;
        if (dt__box_intersect(w->x->ndim, b, w->target, &piece))
            dt__pieces_add(w->out, w->member >= 0 ? w->c[w->member] : dt__mesh_rank_of(m, w->c), &piece);
        return DT_OK;
    }
    r1 = m->shape[i];
    if (w->fixed >> i & 1u) { r0 = m->coord[i]; r1 = r0 + 1; }
    if (w->pl[i].kind == DT_SHARD) { /* the parts that meet the target (one-span rules only: see dt__plan_move) */
        int64_t a, e;
        int k0, k1;
        d = w->pl[i].dim;
        n = b->ext[d];
        a = w->target->lo[d] - b->lo[d];
        e = w->target->ext[d];
        if (a + e > n) e = n - a;                /* the target's part inside the parent */
        if (a < 0) { e += a; a = 0; }
        if (e <= 0) return DT_OK;               /* (an empty parent or target: nothing) */
        k0 = dt__split_find(n, m->shape[i], &w->pl[i], a);
        k1 = dt__split_find(n, m->shape[i], &w->pl[i], a + e - 1) + 1;
        if (k0 > r0) r0 = k0 < r1 ? k0 : r1;
        if (k1 < r1) r1 = k1 > r0 ? k1 : r0;
    }
    for (r = r0; r < r1; r++) {
        dt__box nb = *b;
        if (d >= 0) {
            int64_t off, len;
            dt__split_span(n, m->shape[i], r, &w->pl[i], &off, &len);
            nb.lo[d] = b->lo[d] + off;
            nb.ext[d] = len;
        }
        w->c[i] = r;
        if ((st = dt__walk_dim(w, i + 1, &nb))) return st;
    }
    return DT_OK;
}

static dt_status dt__walk_pieces(const dt__ctx *x, const dt_placement *pl, const dt__box *target, unsigned fixed,
                                 int member, int slot, dt__pieces *out) {
    dt__walk w;
    dt__box b;
    size_t bound = 1;
    int d;
    dt_status st;
    for (d = 0; d < x->m->ndim; d++) /* at most one piece per coordinate the walk can visit */
        if (!(fixed >> d & 1u)) bound *= (size_t)x->m->shape[d];
    if ((st = dt__pieces_reserve(out, x->m, slot, bound))) return st;
    w.x = x;
    w.pl = pl;
    w.target = target;
    w.fixed = fixed;
    w.member = member;
    w.out = out;
    memset(w.c, 0, sizeof w.c);
    for (d = 0; d < x->ndim; d++) { b.lo[d] = 0; b.ext[d] = x->gshape[d]; }
    return dt__walk_dim(&w, 0, &b);
}

/* ---- shm ----
   The single-copy path of a step, on a mesh with a shared arena (>>backend's
   shm) and a host tensor: every member of the step's group g publishes where
   its source is (its offset in its segment, its box and strides; one small
   allgather, dt__comm_shm_begin, which is also the point after which every
   owner's source is complete); if every member's source is in the arena,
   each rank copies each piece of its destination straight from the owner's
   segment through the owner's box and strides (pack and unpack in one
   copy: one read and one write per element, against the MPI path's
   pack, two copies through MPI's shared memory and unpack), then waits
   (dt__comm_shm_end, a barrier) until every member has read what it needs
   before anyone may change a source. Two synchronisations per step, the
   bytes each rank reads are the pieces the MPI path would receive (the
   lower bound), and nothing is written before both the allgather and the
   decision, which every member takes from the same gathered words, so the
   verdict is the same on every member. Otherwise (a source outside the
   arena on any member: borrowed storage from dt_tensor_from_local, a shard
   under DTENSOR_SHM_MIN, a full arena, the step buffers of a multi-step
   plan) *taken = 0 and the step goes the MPI way, after that one allgather. */

static long dt__shm_taken = 0; /* steps that went the shared way (read by the tests) */
static long dt__shm_asked = 0; /* steps that asked (the allgather; read by the tests) */

/* every copy into a destination on the shared path goes through here */
static void dt__shm_copy_piece(const dt__ctx *x, const dt__array *src, dt__array *dst, const dt__box *b) {
    dt__copy_box_op(src, dst, b, x->dtype, x->acc); /* acc >= 0: the last step of dt_tensor_redistribute_reduce */
}

/* Does the tensor hold less than n shards of DTENSOR_SHM_MIN bytes? Then
   some member's source is under it, and not in the arena, unless the
   source is replicated: the step goes the MPI way without asking, since
   the allgather would double a small redistribution's time (a replicated
   small source in the arena moving by MPI is the price). From the global
   shape: the same on every member. */
static int dt__shm_too_small(const dt__ctx *x, int n) {
    size_t bytes = x->es;
    int d;
    for (d = 0; d < x->ndim; d++) bytes *= (size_t)x->gshape[d];
    return bytes < x->m->shm->min * (size_t)n;
}

/* mdim >= 0: g is mesh dim mdim's group (member j = coordinate j there);
   -1: g is the mesh comm (member = mesh rank) */
static dt_status dt__shm_step(const dt__ctx *x, dt_comm *g, int mdim, const dt__array *in, dt__array *out,
                              const dt__pieces *send, const dt__pieces *recv, int gather, int *taken) {
    dt_mesh *m = x->m;
    int nd = x->ndim, k = 2 + 3 * nd, n = g->size, me = g->rank, j, d, c[DT_MAX_MESH_DIMS];
    int64_t mine[2 + 3 * DT_MAX_DIMS], *all = NULL, st64[DT_MAX_DIMS];
    uint64_t sent = 0, got = 0;
    dt__box b;
    dt_status st;
    *taken = 0;
    if (!m->shm || !dt__on_host(x->dev) || n < 2 || dt__shm_too_small(x, n)) return DT_OK;
    if ((st = dt__scratch(m, DT__SCRATCH_COUNTS, (size_t)n * (size_t)k * sizeof(int64_t), (void **)&all))) return st;
    mine[0] = !dt__box_numel(nd, &in->box) ? 0 : dt__shm_owns(m->shm, in->data) ? (int64_t)(in->data - m->shm->mine) : -1;
    mine[1] = in->stride != NULL;
    for (d = 0; d < nd; d++) {
        mine[2 + d] = in->box.lo[d];
        mine[2 + nd + d] = in->box.ext[d];
        mine[2 + 2 * nd + d] = in->stride ? in->stride[d] : 0;
    }
    dt__shm_asked++;
    if ((st = dt__comm_shm_begin(m->shm, g, mine, k, all))) return st;
    for (j = 0; j < n; j++)
        if (all[(size_t)j * k] < 0) return DT_OK; /* the same verdict on every member: the MPI path */
    *taken = 1;
    dt__shm_taken++;
    dt__transport_log(m, gather ? "gather" : "exchange boxes", DT__VIA_SHM);
    memcpy(c, m->coord, sizeof c);
    for (j = 0; j < recv->n; j++) {
        int p = dt__piece_get(recv, j, &b);
        const int64_t *w = all + (size_t)p * k;
        dt__array src;
        if (p == me) src = *in;
        else {
            if (mdim >= 0) c[mdim] = p;
            src.data = m->shm->base[mdim >= 0 ? dt__mesh_rank_of(m, c) : p] + w[0];
            src.ndim = nd;
            src.es = x->es;
            for (d = 0; d < nd; d++) { src.box.lo[d] = w[2 + d]; src.box.ext[d] = w[2 + nd + d]; st64[d] = w[2 + 2 * nd + d]; }
            src.stride = w[1] ? st64 : NULL;
            got += dt__box_numel(nd, &b) * x->es;
        }
        dt__shm_copy_piece(x, &src, out, &b);
    }
    if (gather) sent = dt__box_numel(nd, &in->box) * x->es * (uint64_t)(n - 1);
    else
        for (j = 0; j < send->n; j++)
            if (dt__piece_get(send, j, &b) != me) sent += dt__box_numel(nd, &b) * x->es;
    return dt__comm_shm_end(m->shm, g, sent, got);
}

/* One mesh dim, S -> R (allgather) or S(i) -> S(j) (all-to-all): member j
   is sent my box's share of its destination box and sends me its box's
   share of mine. For a gather that share is the whole box, as allgather
   needs. */
static dt_status dt__run_along(const dt__ctx *x, const dt__step *s, const dt__array *in, dt__array *out) {
    dt_comm *g = x->m->dim[s->mdim];
    unsigned others = ((1u << x->m->ndim) - 1u) & ~(1u << s->mdim);
    int gather = s->kind == DT__GATHER, shm = 0;
    dt__pieces send, recv;
    dt_status st;
    dt__pieces_init(&send, x->ndim);
    dt__pieces_init(&recv, x->ndim);
    st = dt__walk_pieces(x, s->from, &out->box, others, s->mdim, DT__SCRATCH_PIECES0, &recv);
    if (!st && !gather) st = dt__walk_pieces(x, s->to, &in->box, others, s->mdim, DT__SCRATCH_PIECES1, &send);
    if (!st && x->async) st = dt__exchange_pieces_post(x, g, in, out, &send, &recv, gather);
    else if (!st) st = dt__shm_step(x, g, s->mdim, in, out, &send, &recv, gather, &shm);
    if (!st && !shm && !x->async)
        st = dt__exchange_pieces_op(x->m, x->dev, g, in, out, &send, &recv, gather, dt__step_bound(x, s), x->dtype,
                                    x->acc);
    dt__pieces_free(&send);
    dt__pieces_free(&recv);
    return st;
}

/* any change at once over the whole mesh; peers are the ranks that agree
   with this one on every mesh dim the source does not shard, so each
   destination piece has exactly one sender */
static dt_status dt__run_exchange(const dt__ctx *x, const dt__step *s, const dt__array *in, dt__array *out) {
    dt_mesh *m = x->m;
    dt__pieces send, recv;
    unsigned fixed = 0;
    int i, shm = 0;
    dt_status st;
    for (i = 0; i < m->ndim; i++)
        if (!dt__is(s->from[i], DT_SHARD)) fixed |= 1u << i;
    dt__pieces_init(&send, x->ndim);
    dt__pieces_init(&recv, x->ndim);
    st = dt__walk_pieces(x, s->from, &out->box, fixed, -1, DT__SCRATCH_PIECES0, &recv);
    if (!st) st = dt__walk_pieces(x, s->to, &in->box, fixed, -1, DT__SCRATCH_PIECES1, &send);
    if (!st && x->async) st = dt__exchange_pieces_post(x, m->comm, in, out, &send, &recv, 0);
    else if (!st) st = dt__shm_step(x, m->comm, -1, in, out, &send, &recv, 0, &shm);
    if (!st && !shm && !x->async)
        st = dt__exchange_pieces_op(m, x->dev, m->comm, in, out, &send, &recv, 0, dt__step_bound(x, s), x->dtype,
                                    x->acc);
    dt__pieces_free(&send);
    dt__pieces_free(&recv);
    return st;
}

/* ---- block-cyclic exchanges ----
   Under a cyclic rule a part is several boxes, so the exchange above (one
   box per peer) does not apply. Per tensor dim, a part is a list of spans of
   consecutive global indices (dt__chain); two parts meet in the product,
   over the dims, of their spans' overlaps. A message carries that product
   row-major, in increasing global order on every dim, which sender and
   receiver both enumerate from the same two chains. The peers and the
   bytes are those of dt__run_exchange: the lower bound. */

typedef struct dt__seg { int64_t g, len, a, b; } dt__seg; /* global start, length, position on side a, on side b */

/* the spans of a chain: (global start, length, local position) triples; returns how many (buf NULL: only counts) */
static int64_t dt__chain_spans(const dt__chain *ch, int64_t *buf) {
    int64_t p = 0, n = 0;
    while (p < ch->ext) {
        int64_t len = dt__chain_span(ch, p), g = dt__chain_up(ch, p);
        if (n && buf && buf[3 * (n - 1)] + buf[3 * (n - 1) + 1] == g) buf[3 * (n - 1) + 1] += len;
        else {
            if (buf) { buf[3 * n] = g; buf[3 * n + 1] = len; buf[3 * n + 2] = p; }
            n++;
        }
        p += len;
    }
    return n;
}

/* one side's spans on every dim, in one allocation */
typedef struct dt__partspans { int64_t n[DT_MAX_DIMS]; int64_t *r[DT_MAX_DIMS]; int64_t *mem; } dt__partspans;

static dt_status dt__partspans_of(const dt__ctx *x, const dt_placement *pl, const int *coord, dt__partspans *pr) {
    dt__chain ch[DT_MAX_DIMS];
    int64_t total = 0, at = 0;
    int d;
    dt_status st;
    for (d = 0; d < x->ndim; d++) {
        dt__chain_build(x->gshape[d], x->m->ndim, x->m->shape, coord, pl, d, &ch[d]);
        total += pr->n[d] = dt__chain_spans(&ch[d], NULL);
    }
    pr->mem = NULL;
    if ((st = dt__alloc("dt_tensor_redistribute", (size_t)(3 * total + 1) * sizeof(int64_t), (void **)&pr->mem)))
        return st;
    for (d = 0; d < x->ndim; d++) {
        pr->r[d] = pr->mem + 3 * at;
        pr->n[d] = dt__chain_spans(&ch[d], pr->r[d]);
        at += pr->n[d];
    }
    return DT_OK;
}

/* The overlaps of spans a and b on every dim (positions: each side's local
   one; a side given as NULL spans is the packed message, numbered in order).
   Returns the number of elements; segs is filled if non-NULL. */
static size_t dt__overlaps(const dt__ctx *x, const dt__partspans *a, const dt__partspans *b, int pack_a, int pack_b,
                           dt__seg **segs, int64_t *nseg, int64_t *count) {
    size_t numel = 1;
    int d;
    for (d = 0; d < x->ndim; d++) {
        const int64_t *ra = a->r[d], *rb = b->r[d];
        int64_t i = 0, j = 0, n = 0, c = 0;
        while (i < a->n[d] && j < b->n[d]) {
            int64_t lo = ra[3 * i] > rb[3 * j] ? ra[3 * i] : rb[3 * j];
            int64_t ha = ra[3 * i] + ra[3 * i + 1], hb = rb[3 * j] + rb[3 * j + 1], hi = ha < hb ? ha : hb;
            if (hi > lo) {
                if (segs) {
                    int64_t pa = pack_a ? c : ra[3 * i + 2] + (lo - ra[3 * i]);
                    int64_t pb = pack_b ? c : rb[3 * j + 2] + (lo - rb[3 * j]);
                    dt__seg *pv = n ? &segs[d][n - 1] : NULL;
                    if (pv && pv->g + pv->len == lo && pv->a + pv->len == pa && pv->b + pv->len == pb) {
                        pv->len += hi - lo; /* a run of spans adjacent on both sides: one segment, one copy */
                        c += hi - lo;
                        goto next;
                    }
                    pv = &segs[d][n];
                    pv->g = lo;
                    pv->len = hi - lo;
                    pv->a = pa;
                    pv->b = pb;
                }
                n++;
                c += hi - lo;
            }
        next:
            if (ha < hb) i++;
            else j++;
        }
        if (nseg) nseg[d] = n;
        if (count) count[d] = c;
        numel *= (size_t)c;
    }
    return numel;
}

/* byte strides of a row-major array of extents ext */
static void dt__byte_strides(int nd, const int64_t *ext, size_t es, size_t *st) {
    int d;
    for (d = nd - 1; d >= 0; d--) { st[d] = es; es *= (size_t)ext[d]; }
}

/* copy every element of the segments' product from A (positions .a,
   strides sa) to B (positions .b, strides sb): the innermost dim's
   segments are spans on both sides, one memcpy each */
static void dt__segs_copy(int nd, size_t es, dt__seg *const *seg, const int64_t *nseg, const char *A,
                          const size_t *sa, char *B, const size_t *sb) {
    int64_t si[DT_MAX_DIMS] = {0}, oi[DT_MAX_DIMS] = {0}, t;
    int d, last = nd - 1;
    if (nd < 1 || nd > DT_MAX_DIMS) return; /* (a cyclic part has a dim) */
    for (d = 0; d < nd; d++) {
        if (!nseg[d]) return;
        si[d] = oi[d] = 0;
    }
    for (;;) {
        size_t fa = 0, fb = 0;
        for (d = 0; d < last; d++) {
            fa += (size_t)(seg[d][si[d]].a + oi[d]) * sa[d];
            fb += (size_t)(seg[d][si[d]].b + oi[d]) * sb[d];
        }
        for (t = 0; t < nseg[last]; t++)
            memcpy(B + fb + (size_t)seg[last][t].b * sb[last], A + fa + (size_t)seg[last][t].a * sa[last],
                   (size_t)seg[last][t].len * es);
        for (d = last - 1; d >= 0; d--) {
            if (++oi[d] < seg[d][si[d]].len) break;
            oi[d] = 0;
            if (++si[d] < nseg[d]) break;
            si[d] = 0;
        }
        if (d < 0) break;
    }
}

/* the same in a device's memory: each product of segments (one per dim)
   is a box of both arrays, moved by the device's box copy (a kernel or a
   copy-engine span each). Arrays row-major over ext_a / ext_b. A block-
   cyclic layout with small blocks makes many small boxes: the cost is one
   launch per box, not per element. */
static dt_status dt__segs_copy_dev(const dt__device *dev, int nd, size_t es, dt__seg *const *seg, const int64_t *nseg,
                                   const char *A, const int64_t *ext_a, char *B, const int64_t *ext_b) {
    int64_t si[DT_MAX_DIMS], ea[DT_MAX_DIMS], eb[DT_MAX_DIMS], sa_ = 1, sb_ = 1;
    dt__array a, b;
    dt__box p;
    int d;
    dt_status st;
    if (nd < 1 || nd > DT_MAX_DIMS) return DT_OK; /* (a cyclic part has a dim) */
    memset(&p, 0, sizeof p); /* (the dims past nd: clang's -Wconditional-uninitialized) */
    for (d = nd - 1; d >= 0; d--) {
        if (!nseg[d]) return DT_OK;
        si[d] = 0;
        ea[d] = sa_; sa_ *= ext_a[d];
        eb[d] = sb_; sb_ *= ext_b[d];
    }
    a.ndim = b.ndim = nd;
    a.es = b.es = es;
    a.stride = ea;
    b.stride = eb;
    for (;;) {
        size_t fa = 0, fb = 0;
        for (d = 0; d < nd; d++) {
            const dt__seg *g = &seg[d][si[d]];
            fa += (size_t)(g->a * ea[d]);
            fb += (size_t)(g->b * eb[d]);
            p.lo[d] = 0;
            p.ext[d] = g->len;
        }
        a.data = (char *)A + fa * es;
        b.data = B + fb * es;
        a.box = b.box = p;
        if ((st = dev->copy_box("dt_tensor_redistribute (block-cyclic)", &a, &b, &p))) return st;
        for (d = nd - 1; d >= 0; d--) {
            if (++si[d] < nseg[d]) break;
            si[d] = 0;
        }
        if (d < 0) return DT_OK;
    }
}

/* room for the segments of two parts' overlaps */
static dt_status dt__segs_alloc(const dt__ctx *x, const dt__partspans *a, const dt__partspans *b, dt__seg **segs,
                                dt__seg **mem) {
    int64_t total = 0;
    int d;
    dt_status st;
    for (d = 0; d < x->ndim; d++) total += a->n[d] + b->n[d];
    *mem = NULL;
    if ((st = dt__alloc("dt_tensor_redistribute", (size_t)(total + 1) * sizeof(dt__seg), (void **)mem))) return st;
    for (d = 0, total = 0; d < x->ndim; d++) { segs[d] = *mem + total; total += a->n[d] + b->n[d]; }
    return DT_OK;
}

/* move data between A (spans ra, positions on side a) and B (spans rb), one
   side maybe the packed message; both in x->dev's memory */
static dt_status dt__overlap_copy(const dt__ctx *x, const dt__partspans *ra, const dt__partspans *rb, int pack_a,
                                  int pack_b, const char *A, const int64_t *ext_a, char *B, const int64_t *ext_b) {
    dt__seg *segs[DT_MAX_DIMS], *mem;
    int64_t nseg[DT_MAX_DIMS], cnt[DT_MAX_DIMS];
    size_t sa[DT_MAX_DIMS], sb[DT_MAX_DIMS];
    dt_status st;
    if ((st = dt__segs_alloc(x, ra, rb, segs, &mem))) return st;
    dt__overlaps(x, ra, rb, pack_a, pack_b, segs, nseg, cnt);
    if (!dt__on_host(x->dev)) {
        st = dt__segs_copy_dev(x->dev, x->ndim, x->es, segs, nseg, A, pack_a ? cnt : ext_a, B, pack_b ? cnt : ext_b);
    } else {
        dt__byte_strides(x->ndim, pack_a ? cnt : ext_a, x->es, sa);
        dt__byte_strides(x->ndim, pack_b ? cnt : ext_b, x->es, sb);
        dt__segs_copy(x->ndim, x->es, segs, nseg, A, sa, B, sb);
    }
    DT_FREE(mem);
    return st;
}

static dt_status dt__run_exchange_spans(const dt__ctx *x, const dt__step *s, const dt__array *in, dt__array *out) {
    dt_mesh *m = x->m;
    int n = m->size, me = m->rank, q, i, c[DT_MAX_MESH_DIMS], any_shard = 0;
    unsigned fixed = 0;
    dt__partspans src_me, dst_me, peer;
    size_t *v = NULL, *sc, *sd, *rc, *rd, soff = 0, roff = 0, bound;
    char *sbuf = NULL, *rbuf = NULL;
    dt_status st;
    for (i = 0; i < m->ndim; i++) {
        if (!dt__is(s->from[i], DT_SHARD)) fixed |= 1u << i;
        else any_shard = 1;
    }
    src_me.mem = dst_me.mem = peer.mem = NULL;
    if ((st = dt__partspans_of(x, s->from, m->coord, &src_me)) || (st = dt__partspans_of(x, s->to, m->coord, &dst_me)))
        goto done;
    if (!any_shard) { /* every rank holds all it needs: a local copy */
        st = dt__overlap_copy(x, &src_me, &dst_me, 0, 0, in->data, in->box.ext, out->data, out->box.ext);
        goto done;
    }
    /* the counts and the message buffers: the mesh's work buffers (as dt__run_exchange's), so that a time
       loop neither allocates nor page-faults tensor-sized buffers every call */
    if ((st = dt__scratch(m, DT__SCRATCH_COUNTS, 4 * (size_t)n * sizeof(size_t), (void **)&v))) goto done;
    memset(v, 0, 4 * (size_t)n * sizeof(size_t));
    sc = v; sd = v + n; rc = v + 2 * n; rd = v + 3 * n;
    for (q = 0; q < n; q++) { /* the counts: what each peer needs of mine, what I need of theirs */
        dt__mesh_coord_of(m, q, c);
        for (i = 0; i < m->ndim; i++)
            if ((fixed >> i & 1u) && c[i] != m->coord[i]) break;
        if (i < m->ndim || q == me) continue;
        if ((st = dt__partspans_of(x, s->to, c, &peer))) goto done;
        sc[q] = dt__overlaps(x, &src_me, &peer, 0, 1, NULL, NULL, NULL) * x->es;
        DT_FREE(peer.mem);
        if ((st = dt__partspans_of(x, s->from, c, &peer))) goto done;
        rc[q] = dt__overlaps(x, &peer, &dst_me, 1, 0, NULL, NULL, NULL) * x->es;
        DT_FREE(peer.mem);
        peer.mem = NULL;
        sd[q] = soff; soff += sc[q];
        rd[q] = roff; roff += rc[q];
    }
    if ((st = dt__scratch_on(m, x->dev, DT__SCRATCH_SEND, soff + 1, (void **)&sbuf)) ||
        (st = dt__scratch_on(m, x->dev, DT__SCRATCH_RECV, roff + 1, (void **)&rbuf)))
        goto done;
    for (q = 0; q < n; q++) {
        /* NOLINTNEXTLINE(clang-analyzer-core.uninitialized.Branch): sc is zeroed with the rest of v above */
        if (!sc[q]) continue;
        dt__mesh_coord_of(m, q, c);
        if ((st = dt__partspans_of(x, s->to, c, &peer))) goto done;
        st = dt__overlap_copy(x, &src_me, &peer, 0, 1, in->data, in->box.ext, sbuf + sd[q], NULL);
        DT_FREE(peer.mem);
        peer.mem = NULL;
        if (st) goto done;
    }
    /* the step's bound, never this rank's totals: every rank must pick the same collective (dt__comm_alltoallv) */
    bound = dt__step_bound(x, s);
    dt__transport_log(m, "exchange spans",
                      dt__comm_alltoallv_native(m->comm, bound) ? DT__VIA_COLLECTIVE : DT__VIA_SENDRECV);
    if ((st = dt__comm_alltoallv(m->comm, sbuf, sc, sd, rbuf, rc, rd, bound))) goto done;
    /* out is written only now, after the last thing that can fail but the unpacking's allocations */
    if ((st = dt__overlap_copy(x, &src_me, &dst_me, 0, 0, in->data, in->box.ext, out->data, out->box.ext))) goto done;
    for (q = 0; q < n; q++) {
        if (!rc[q]) continue;
        dt__mesh_coord_of(m, q, c);
        if ((st = dt__partspans_of(x, s->from, c, &peer))) goto done;
        st = dt__overlap_copy(x, &peer, &dst_me, 1, 0, rbuf + rd[q], NULL, out->data, out->box.ext);
        DT_FREE(peer.mem);
        peer.mem = NULL;
        if (st) goto done;
    }
done:
    DT_FREE(peer.mem);
    DT_FREE(src_me.mem);
    DT_FREE(dst_me.mem);
    return st;
}

static dt_reduce dt__backend_op(dt_reduce op) { return op == DT_AVG ? DT_SUM : op; }

/* kernel calls the redistribution needs (>>kernels has the tables) */

/* AVG's division, in the buffers' memory. On a device the divisor is put in
   device memory as a dtype-t scalar and divided in by the binary kernel:
   the same correctly rounded quotient as the host loop. The divisor is made
   before the collective (dt__divisor_on), so that nothing can fail between
   the collective writing the output and the division. */
typedef struct dt__divisor {
    int k;
    char v[16];  /* k as a dtype-t scalar (host) */
    void *d;     /* where the kernel reads it: v, or a device scratch copy */
} dt__divisor;

static dt_status dt__divisor_on(const dt__ctx *x, dt_dtype t, int k, dt__divisor *dv) {
    double dk = (double)k;
    dt_status st;
    dv->k = k;
    t = dt__part_dtype(t); /* complex: each part is divided by a real k */
    dt__dev_cast(&dt__host_device, DT_F64, &dk, t, dv->v, 1);
    dv->d = dv->v;
    if (!dt__on_host(x->dev) && ((st = dt__scratch_on(x->m, x->dev, DT__SCRATCH_SCALAR, sizeof dv->v, &dv->d)) ||
                                 (st = x->dev->copy("dt_tensor_redistribute", dv->d, dv->v, dt_dtype_size(t)))))
        return st;
    return DT_OK;
}

static void dt__divide_on(const dt__ctx *x, dt_dtype t, void *buf, size_t n, const dt__divisor *dv) {
    if (dt__on_host(x->dev) && (t == DT_F32 || t == DT_F64)) { dt__divide_elems(t, buf, n, dv->k); return; }
    /* complex: both parts divided (the divisor is of the part dtype) */
    if (dt__is_complex(t)) { t = dt__part_dtype(t); n *= 2; }
    if (dt__on_host(x->dev) && (t == DT_F32 || t == DT_F64)) { dt__divide_elems(t, buf, n, dv->k); return; }
    if (n) dt__dev_divide(x->dev, t, buf, n, dv->d);
}

/* F16/BF16 are reduced in F32 unless the backend reduces them itself */
static int dt__reduce_in_f32(const dt__ctx *x, dt_comm *g) {
    return dt__dtype_is_half(x->dtype) && !g->root->be.native_half;
}

static dt_status dt__cast_on(const dt__ctx *x, dt_dtype from, const void *src, dt_dtype to, void *dst, size_t n) {
    dt__dev_cast(x->dev, from, src, to, dst, n);
    return DT_OK;
}

static dt_status dt__run_allreduce(const dt__ctx *x, const dt__step *s, const dt__array *in, dt__array *out) {
    dt_comm *g = x->m->dim[s->mdim];
    dt_reduce op = (dt_reduce)s->from[s->mdim].reduce;
    size_t n = dt__box_numel(x->ndim, &in->box);
    float *f = NULL;
    dt__divisor dv;
    dt_status st;
    if (dt__int_avg(x->dtype, op)) { /* in the buffers' memory (a device's kernels) */
        const dt__kernels *k = x->dev->kernels();
        int64_t *qr = NULL;
        if ((st = dt__scratch_on(x->m, x->dev, DT__SCRATCH_F32, 2 * n * sizeof(int64_t) + 1, (void **)&qr))) return st;
        if (n) k->avg_split(x->dtype, in->data, n, g->size, qr, qr + n);
        st = dt__comm_allreduce(g, qr, qr, 2 * n, DT_I64, DT_SUM);
        if (!st && n) k->avg_join(x->dtype, qr, qr + n, n, g->size, out->data);
        return st;
    }
    if (!dt__reduce_in_f32(x, g)) {
        if (op == DT_AVG && (st = dt__divisor_on(x, x->dtype, g->size, &dv))) return st;
        st = dt__comm_allreduce(g, in->data, out->data, n, x->dtype, dt__backend_op(op));
        if (!st && op == DT_AVG) dt__divide_on(x, x->dtype, out->data, n, &dv);
        return st;
    }
    if ((st = dt__scratch_on(x->m, x->dev, DT__SCRATCH_F32, n * sizeof(float), (void **)&f))) return st;
    if (op == DT_AVG && (st = dt__divisor_on(x, DT_F32, g->size, &dv))) return st;
    dt__cast_on(x, x->dtype, in->data, DT_F32, f, n);
    st = dt__comm_allreduce(g, f, f, n, DT_F32, dt__backend_op(op));
    if (!st && op == DT_AVG) dt__divide_on(x, DT_F32, f, n, &dv);
    if (!st) dt__cast_on(x, DT_F32, f, x->dtype, out->data, n);
    return st;
}

/* P -> S(d) along one mesh dim: the members' destination boxes tile this
   rank's box; they are sent in member order (in place when contiguous) */
static dt_status dt__run_reduce_scatter(const dt__ctx *x, const dt__step *s, const dt__array *in, dt__array *out) {
    dt_comm *g = x->m->dim[s->mdim];
    dt_reduce op = (dt_reduce)s->from[s->mdim].reduce;
    int n = g->size, j, c[DT_MAX_MESH_DIMS], half = dt__reduce_in_f32(x, g), direct = !half;
    size_t *counts = NULL, total = 0, off, mine;
    dt__box piece;
    char *sbuf = NULL;
    float *fsend = NULL, *frecv = NULL;
    const void *send;
    dt__divisor dv;
    dt_status st;
    if ((st = dt__alloc("dt_tensor_redistribute", (size_t)n * sizeof(size_t), (void **)&counts))) return st;
    memcpy(c, x->m->coord, sizeof c);
    for (j = 0; j < n; j++) { /* (the pieces' boxes are recomputed to pack: no array of n boxes) */
        c[s->mdim] = j;
        dt__box_at(x, s->to, c, &piece);
        counts[j] = dt__box_numel(x->ndim, &piece);
        if (direct && (!dt__piece_contiguous(in, &piece, &off) || off != total * x->es)) direct = 0;
        total += counts[j];
    }
    mine = counts[g->rank];
    send = in->data;
    if (!direct) {
        if ((st = dt__scratch_on(x->m, x->dev, DT__SCRATCH_SEND, total * x->es, (void **)&sbuf))) goto done;
        for (j = 0, off = 0; j < n && !st; j++) {
            c[s->mdim] = j;
            dt__box_at(x, s->to, c, &piece);
            st = dt__pack_on(x->dev, in, &piece, sbuf + off);
            off += counts[j] * x->es;
        }
        if (st) goto done;
        send = sbuf;
    }
    if (dt__int_avg(x->dtype, op)) { /* each member's block becomes [q..., r...] in i64 */
        const dt__kernels *k = x->dev->kernels(); /* in the buffers' memory (a device's kernels) */
        int64_t *qs = NULL, *qr = NULL;
        /* + 1: never a NULL buffer for empty blocks (qs + 0 on NULL is undefined) */
        if ((st = dt__scratch_on(x->m, x->dev, DT__SCRATCH_F32, (2 * total + 1) * sizeof(int64_t), (void **)&qs)) ||
            (st = dt__scratch_on(x->m, x->dev, DT__SCRATCH_F32B, (2 * mine + 1) * sizeof(int64_t), (void **)&qr)))
            goto done;
        for (j = 0, off = 0; j < n; j++) {
            if (counts[j]) /* an empty block: send may be NULL */
                k->avg_split(x->dtype, (const char *)send + off * x->es, counts[j], n, qs + 2 * off, qs + 2 * off + counts[j]);
            off += counts[j];
            counts[j] *= 2;
        }
        st = dt__comm_reduce_scatter(g, qs, qr, counts, DT_I64, DT_SUM);
        if (!st && mine) k->avg_join(x->dtype, qr, qr + mine, mine, n, out->data);
    } else if (half) {
        if ((st = dt__scratch_on(x->m, x->dev, DT__SCRATCH_F32, total * sizeof(float), (void **)&fsend))) goto done;
        if ((st = dt__scratch_on(x->m, x->dev, DT__SCRATCH_F32B, mine * sizeof(float), (void **)&frecv))) goto done;
        if (op == DT_AVG && (st = dt__divisor_on(x, DT_F32, n, &dv))) goto done;
        dt__cast_on(x, x->dtype, send, DT_F32, fsend, total);
        st = dt__comm_reduce_scatter(g, fsend, frecv, counts, DT_F32, dt__backend_op(op));
        if (!st && op == DT_AVG) dt__divide_on(x, DT_F32, frecv, mine, &dv);
        if (!st) dt__cast_on(x, DT_F32, frecv, x->dtype, out->data, mine);
    } else {
        if (op == DT_AVG && (st = dt__divisor_on(x, x->dtype, n, &dv))) goto done;
        st = dt__comm_reduce_scatter(g, send, out->data, counts, x->dtype, dt__backend_op(op));
        if (!st && op == DT_AVG) dt__divide_on(x, x->dtype, out->data, mine, &dv);
    }
done:
    DT_FREE(counts);
    return st;
}

/* Replicate -> Partial(SUM): only coordinate 0 keeps the value (exact for
   every dtype, unlike dividing by n); AVG/MAX/MIN keep it everywhere */
static dt_status dt__to_partial(const dt_mesh *m, const dt__device *dev, int i, dt_placement p, void *data,
                                size_t bytes) {
    if (dt__is(p, DT_PARTIAL) && p.reduce == DT_SUM && m->coord[i] != 0 && bytes)
        return dev->zero("dt_tensor_redistribute", data, bytes);
    return DT_OK;
}

static dt_status dt__step_run(const dt__ctx *x, const dt__step *s, const dt__array *in, dt__array *out);

/* Does step s combine into its output as it writes it (x->acc)? The box
   copy and the piece exchanges do; the reductions and the cyclic span
   exchange write whole buffers, so they run into scratch first. */
static int dt__step_fuses(const dt__ctx *x, const dt__step *s) {
    if (s->kind == DT__SLICE || s->kind == DT__GATHER || s->kind == DT__ALLTOALL) return 1;
    return s->kind == DT__EXCHANGE && !dt__pl_cyclic(s->from, x->m->ndim) && !dt__pl_cyclic(s->to, x->m->ndim);
}

/* a step that cannot combine as it writes: into a contiguous scratch copy
   of out's box (in the plan's memory), then one combining pass over out */
static dt_status dt__step_run_then_combine(const dt__ctx *x, const dt__step *s, const dt__array *in,
                                           dt__array *out) {
    dt__ctx y = *x;
    dt__array tmp = *out;
    size_t bytes = dt__box_numel(x->ndim, &out->box) * x->es;
    dt_status st = x->dev->alloc("dt_tensor_redistribute_reduce", bytes + 1, (void **)&tmp.data);
    if (st) return st;
    tmp.stride = NULL;
    y.acc = -1;
    if (!(st = dt__step_run(&y, s, in, &tmp))) st = dt__combine_on(x->dev, &tmp, out, &out->box, x->dtype, x->acc);
    x->dev->free(tmp.data);
    return st;
}

static dt_status dt__step_run(const dt__ctx *x, const dt__step *s, const dt__array *in, dt__array *out) {
    if (x->acc >= 0) {
        if (!dt__step_fuses(x, s)) return dt__step_run_then_combine(x, s, in, out);
        if (s->kind == DT__SLICE) return dt__combine_on(x->dev, in, out, &out->box, x->dtype, x->acc);
    }
    switch (s->kind) {
    case DT__SLICE: return x->dev->copy_box("dt_tensor_redistribute", in, out, &out->box);
    case DT__GATHER: case DT__ALLTOALL: return dt__run_along(x, s, in, out);
    case DT__EXCHANGE:
        if (dt__pl_cyclic(s->from, x->m->ndim) || dt__pl_cyclic(s->to, x->m->ndim)) return dt__run_exchange_spans(x, s, in, out);
        return dt__run_exchange(x, s, in, out);
    case DT__ALLREDUCE: return dt__run_allreduce(x, s, in, out);
    case DT__REDUCE_SCATTER: return dt__run_reduce_scatter(x, s, in, out);
    }
    return dt__fail(DT_ERR_UNSUPPORTED, "dt_tensor_redistribute: internal: step kind %d", s->kind);
}

/* Can step s read (or write) a strided array? The box-copy and piece
   exchanges pack and unpack through dt__copy_box; the cyclic span copies
   and the reductions work on whole contiguous buffers. */
static int dt__step_takes_strides(const dt__ctx *x, const dt__step *s) {
    if (s->kind == DT__SLICE || s->kind == DT__GATHER || s->kind == DT__ALLTOALL) return 1;
    return s->kind == DT__EXCHANGE && !dt__pl_cyclic(s->from, x->m->ndim) && !dt__pl_cyclic(s->to, x->m->ndim);
}

/* Does `plan` read `src` and write `dst` (either maybe strided) directly? */
static int dt__plan_takes_strides(const dt__ctx *x, const dt__plan *plan, int src_strided, int dst_strided) {
    int k, first = -1, last = -1;
    for (k = 0; k < plan->n; k++) {
        if (plan->s[k].kind == DT__TO_PARTIAL) { if (dst_strided) return 0; continue; }
        if (first < 0) first = k;
        last = k;
    }
    if (first < 0) return 1; /* a copy */
    return (!src_strided || dt__step_takes_strides(x, &plan->s[first])) &&
           (!dst_strided || dt__step_takes_strides(x, &plan->s[last]));
}

/* Run `plan` on this mesh member: from `src` (placed as src_pl, laid out by
   src_stride, NULL: row-major) into `dst` (the plan's end, dst_stride).
   Steps between write into two alternating scratch buffers of the mesh.
   Strided ends only where dt__plan_takes_strides says so. */
static dt_status dt__plan_run(const dt__ctx *x, const dt__plan *plan, const dt_placement *src_pl, const void *src,
                              const int64_t *src_stride, void *dst, const int64_t *dst_stride) {
    dt__array cur, next;
    int k, last_move = -1;
    dt_status st;
    size_t bytes;
    for (k = 0; k < plan->n; k++)
        if (plan->s[k].kind != DT__TO_PARTIAL) last_move = k;
    dt__array_at(x, src_pl, (void *)src, &cur);
    cur.stride = src_stride;
    for (k = 0; k <= last_move; k++) {
        void *buf = dst;
        dt__ctx y = *x;
        y.acc = k == last_move ? x->acc : -1; /* only the plan's output combines */
        dt__array_at(x, plan->s[k].to, NULL, &next);
        if (k < last_move &&
            (st = dt__scratch_on(x->m, x->dev, k % 2 ? DT__SCRATCH_STEP1 : DT__SCRATCH_STEP0,
                                 dt__box_numel(x->ndim, &next.box) * x->es, &buf)))
            return st;
        next.data = (char *)buf;
        if (k == last_move) next.stride = dst_stride;
        if ((st = dt__step_run(&y, &plan->s[k], &cur, &next))) return st;
        cur = next;
    }
    bytes = dt__box_numel(x->ndim, &cur.box) * x->es;
    if (last_move < 0 && x->acc >= 0) { /* (no Partial destination: dt_tensor_redistribute_reduce refuses it) */
        next = cur;
        next.data = (char *)dst;
        next.stride = dst_stride;
        return dt__combine_on(x->dev, &cur, &next, &cur.box, x->dtype, x->acc);
    }
    if (last_move < 0 && (src_stride || dst_stride)) {
        next = cur;
        next.data = (char *)dst;
        next.stride = dst_stride;
        if ((st = x->dev->copy_box("dt_tensor_redistribute", &cur, &next, &cur.box))) return st;
    } else if (last_move < 0 && (st = x->dev->copy("dt_tensor_redistribute", dst, src, bytes))) {
        return st;
    }
    for (k = last_move + 1; k < plan->n; k++)
        if ((st = dt__to_partial(x->m, x->dev, plan->s[k].mdim, plan->s[k].to[plan->s[k].mdim], dst, bytes)))
            return st;
    return DT_OK;
}

static void dt__ctx_of(const dt_tensor *t, dt__ctx *x) {
    x->m = t->mesh;
    x->dev = t->dev;
    x->ndim = t->desc.ndim;
    x->gshape = t->desc.shape;
    x->dtype = t->desc.dtype;
    x->es = dt_dtype_size(t->desc.dtype);
    x->acc = -1;
    x->async = NULL;
}

/* The memory a redistribution runs in: the tensor's own when the backend
   takes it, else the backend's (host buffers for plain MPI and a device
   tensor: the shard is staged through pinned host memory). */
static const dt__device *dt__engine(const dt_tensor *t) {
    int cd = t->mesh->comm->root->be.device;
    if (cd == DT_ANY_MEMORY || cd == t->desc.device) return t->dev;
    return cd == DT_HOST ? &dt__host_device : dt__device_of(cd);
}

/* does p lie in e's memory? `other` is the device the pointer may be in instead */
static int dt__in_memory(const dt__device *e, const dt__device *other, const void *p) {
    if (!dt__on_host(e)) return e->owns(p);
    return dt__on_host(other) ? 1 : !other->owns(p);
}

/* a copy between e's memory and t's: the device that is not the host does it */
static dt_status dt__copy_across(const dt__device *e, const dt__device *other, void *dst, const void *src,
                                 size_t bytes) {
    return (dt__on_host(e) ? other : e)->copy("dt_tensor_redistribute", dst, src, bytes);
}

/* host staging buffer `k` (pinned by `dev`), or e's scratch */
static dt_status dt__stage_buf(dt_mesh *m, const dt__device *e, const dt__device *dev, int k, size_t bytes,
                               void **out) {
    int i = k - DT__SCRATCH_STAGE0;
    if (!dt__on_host(e) || dt__on_host(dev)) return dt__scratch_on(m, e, k, bytes, out);
    if (m->pinned_cap[i] < bytes || !m->pinned[i] || m->pinned_dev[i] != dev) {
        void *p = NULL;
        dt_status st = dev->alloc_host("dt_tensor_redistribute (staging)", bytes ? bytes : 1, &p);
        if (st) return st;
        if (m->pinned[i]) m->pinned_dev[i]->free_host(m->pinned[i]);
        m->pinned[i] = p;
        m->pinned_cap[i] = bytes;
        m->pinned_dev[i] = dev;
    }
    *out = m->pinned[i];
    return DT_OK;
}


static dt_status dt__redistribute_into_strided(const dt_tensor *t, const dt_placement *dst_pl, void *dst,
                                               const int64_t *dst_stride);

/* A strided end that the plan cannot read or write directly: the source's
   shard copied out contiguously (one extra copy of the shard, in t's own
   memory: the device's box copy for a device tensor, never through the
   host), the result received into a contiguous buffer and copied into the
   strided target (combined with it when acc >= 0, by the tensor's device). The
   contiguous redistribution between them stages through the pinned host
   buffers when the backend takes host memory only. */
static dt_status dt__redistribute_staged(const dt_tensor *t, const dt_placement *dst_pl, void *dst,
                                         const int64_t *dst_stride, size_t obytes, int acc) {
    const char *fn = "dt_tensor_redistribute (strided storage)";
    dt_tensor v;
    void *in = NULL, *out = NULL;
    dt__array a, b;
    dt__box box;
    dt_status st;
    memset(&box, 0, sizeof box); /* (set by dt__layout_box below; for -O3's -Wmaybe-uninitialized) */
    if ((st = dt__contig_copy(fn, t, 1, &v, &in))) return st;
    if ((dst_stride || acc >= 0) && (st = t->dev->alloc(fn, obytes + 1, &out))) { dt__contig_free(t, in); return st; }
    st = dt__redistribute_into_strided(&v, dst_pl, dst_stride || acc >= 0 ? out : dst, NULL);
    if (!st && (dst_stride || acc >= 0)) {
        dt__layout_box(t->desc.ndim, t->desc.shape, t->mesh->ndim, t->mesh->shape, t->mesh->coord, dst_pl, &box);
        a.data = (char *)out; a.ndim = t->desc.ndim; a.es = dt_dtype_size(t->desc.dtype); a.box = box; a.stride = NULL;
        b = a;
        b.data = (char *)dst;
        b.stride = dst_stride;
        if (acc >= 0) st = dt__combine_on(t->dev, &a, &b, &box, t->desc.dtype, acc);
        else st = t->dev->copy_box(fn, &a, &b, &box);
    }
    dt__contig_free(t, in);
    if (out) t->dev->free(out);
    return st;
}

/* dt_tensor_redistribute_reduce over a backend that takes the other memory
   (e's, staged): the plan assigned the result into e's staging buffer
   `res`; it moves into t's memory (scratch) and is combined there into
   dst, so a device tensor's `out` never leaves the device. */
static dt_status dt__combine_staged(const dt_tensor *t, const dt__device *e, const void *res, void *dst,
                                    const dt__box *b, size_t bytes, int acc) {
    void *tmp = NULL;
    dt__array a, d;
    dt_status st = dt__scratch_on(t->mesh, t->dev, DT__SCRATCH_STAGE1, bytes, &tmp);
    if (!st) st = dt__copy_across(e, t->dev, tmp, res, bytes);
    if (st) return st;
    a.data = (char *)tmp; a.ndim = t->desc.ndim; a.es = dt_dtype_size(t->desc.dtype); a.box = *b; a.stride = NULL;
    d = a;
    d.data = (char *)dst;
    return dt__combine_on(t->dev, &a, &d, b, t->desc.dtype, acc);
}

/* t's shard, re-placed as dst_pl, into dst laid out by dst_stride (NULL:
   row-major). Strided storage on either end is packed from and unpacked
   into directly by the exchanges that move pieces; other plans go through
   a contiguous copy (dt__contig_copy). acc >= 0: combined into dst with
   that dt_reduce (dt_tensor_redistribute_reduce), on the device that holds
   dst. */
/* Can plan run as one posted exchange (begin/end)? One step that moves,
   a piece exchange or a gather, nothing after it, in the tensor's own
   host memory over a backend that starts messages (else begin runs it). */
static int dt__plan_posts(const dt__ctx *x, const dt__plan *plan, const dt__device *e, const dt_tensor *t) {
    const dt__step *s = &plan->s[0];
    if (plan->n != 1 || e != t->dev || !dt__on_host(e)) return 0;
    if (!dt__comm_carrier(x->m->comm)->be.start) return 0;
    return s->kind == DT__GATHER || s->kind == DT__ALLTOALL ||
           (s->kind == DT__EXCHANGE && !dt__pl_cyclic(s->from, x->m->ndim) && !dt__pl_cyclic(s->to, x->m->ndim));
}

static dt_status dt__redistribute_run(const dt_tensor *t, const dt_placement *dst_pl, void *dst,
                                      const int64_t *dst_stride, int acc, dt__async *a);

static dt_status dt__redistribute_into_acc(const dt_tensor *t, const dt_placement *dst_pl, void *dst,
                                           const int64_t *dst_stride, int acc) {
    return dt__redistribute_run(t, dst_pl, dst, dst_stride, acc, NULL);
}

/* the same, posted into a where the plan allows (dt__plan_posts), else whole */
static dt_status dt__redistribute_run(const dt_tensor *t, const dt_placement *dst_pl, void *dst,
                                      const int64_t *dst_stride, int acc, dt__async *a) {
    dt__ctx x;
    dt__plan plan;
    dt__box b;
    const dt__device *e;
    const void *src = t->data;
    void *out = dst;
    size_t obytes;
    dt_status st;
    if (t->mesh->rank < 0) return DT_OK;
    dt__ctx_of(t, &x);
    x.acc = acc;
    x.dev = e = dt__engine(t);
    if (!e) return dt__fail(DT_ERR_DEVICE, "dt_tensor_redistribute: the mesh's backend takes device %d's memory, "
                            "which is not in this build", t->mesh->comm->root->be.device);
    dt__plan_build_shaped(t->mesh->ndim, t->mesh->shape, x.ndim, x.gshape, t->desc.placements, dst_pl, &plan);
    if (t->mesh->rank == 0 && dt__log_on(DT__LOG_PLAN)) dt__plan_log(&x, t->desc.placements, dst_pl, &plan);
    dt__layout_box(x.ndim, x.gshape, t->mesh->ndim, t->mesh->shape, t->mesh->coord, dst_pl, &b);
    obytes = dt__box_numel(x.ndim, &b) * x.es;
    /* (posted or not alike on every rank: nothing here depends on this rank's storage) */
    if (a && dt__plan_posts(&x, &plan, e, t)) x.async = a; /* (its step takes strided ends) */
    else if ((t->strided || dst_stride) &&
             (e != t->dev || !dt__plan_takes_strides(&x, &plan, t->strided, !!dst_stride)))
        return dt__redistribute_staged(t, dst_pl, dst, dst_stride, obytes, acc);
    if (e != t->dev) { /* (empty shards too: every pointer a step sees is in e's memory) */
        void *buf = NULL;
        if ((st = dt__stage_buf(t->mesh, e, t->dev, DT__SCRATCH_STAGE0, t->bytes, &buf)) ||
            (st = dt__copy_across(e, t->dev, buf, src, t->bytes)))
            return st;
        src = buf;
    }
    if ((!dst || !dt__in_memory(e, t->dev, dst)) &&
        (st = dt__stage_buf(t->mesh, e, t->dev, DT__SCRATCH_STAGE1, obytes, &out)))
        return st;
    if (out != dst) x.acc = -1; /* staged: assigned into e's buffer, combined in t's memory below */
    st = dt__plan_run(&x, &plan, t->desc.placements, src, t->strided ? t->stride : NULL, out, dst_stride);
    if (st) return st;
    if (out == dst || !obytes) return DT_OK;
    if (acc >= 0) return dt__combine_staged(t, e, out, dst, &b, obytes, acc);
    return dt__copy_across(e, t->dev, dst, out, obytes);
}

static dt_status dt__redistribute_into_strided(const dt_tensor *t, const dt_placement *dst_pl, void *dst,
                                               const int64_t *dst_stride) {
    return dt__redistribute_into_acc(t, dst_pl, dst, dst_stride, -1);
}

static dt_status dt__redistribute_into(const dt_tensor *t, const dt_placement *dst_pl, void *dst) {
    return dt__redistribute_into_strided(t, dst_pl, dst, NULL);
}


/* DTENSOR_SHM=auto (the default): a mesh's arena is made, collectively, at
   its first redistribution of a host tensor averaging at least
   DTENSOR_SHM_AUTO_MIN bytes a rank, before the result is allocated, so
   that the result and the tensors after it live there. (That call's
   source, older, moves by MPI.) The verdict comes from the global shape
   alone: the same on every rank. */
static dt_status dt__shm_auto(const dt_tensor *t) {
    dt_mesh *m = t->mesh;
    size_t bytes = dt_dtype_size(t->desc.dtype);
    dt_status st;
    int d;
    if (!m->shm_auto || m->rank < 0 || !dt__on_host(t->dev)) return DT_OK;
    for (d = 0; d < t->desc.ndim; d++) bytes *= (size_t)t->desc.shape[d];
    if (bytes / (size_t)m->size < m->shm_auto) return DT_OK;
    m->shm_auto = 0;
    st = dt__comm_shm_make(m->comm, &m->shm);
    if (!st && m->shm && m->rank == 0 && dt__log_on(DT__LOG_SHM))
        fprintf(stderr, "dtensor: shm: arena of %zu bytes a rank made at the first redistribution of %zu bytes "
                "(DTENSOR_SHM=auto)\n", m->shm->cap, bytes);
    return st;
}

/* a: NULL for the blocking call; else begin's record, attached to the
   result when the call succeeds (a posted exchange, or nothing in flight) */
static dt_status dt__redistribute_body(const char *fn, const dt_tensor *t, const dt_placement *placements,
                                       dt_tensor **out, dt__async *a) {
    dt_tensor_desc want;
    dt_tensor *o = NULL;
    dt_status st;
    int i;
    if ((st = dt__check_tensor(fn, t))) return st;
    want = t->desc;
    if (!placements) st = dt__fail(DT_ERR_ARG, "%s: placements is NULL", fn);
    else if (!out) st = dt__fail(DT_ERR_ARG, "%s: out is NULL", fn);
    else st = dt__check_placements(fn, t->mesh, t->desc.ndim, t->desc.shape, placements, t->mesh->ndim, want.placements);
    if (!st) st = dt__check_complex_partial(fn, t->desc.dtype, want.placements, t->mesh->ndim);
    for (i = 0; i < t->mesh->ndim && !st; i++)
        if (dt__is(t->desc.placements[i], DT_SHARD) && dt__is(want.placements[i], DT_PARTIAL))
            st = dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d]: Shard(%d) -> Partial(%s) is not a redistribution "
                          "(a shard cannot become a partial sum without changing the value)", fn, i,
                          (int)t->desc.placements[i].dim, dt__reduce_name(want.placements[i].reduce));
    if (!st && *out) st = dt__not_pending(fn, "*out", *out);
    if (!st && *out) st = dt__check_out_spec(fn, *out, t->mesh, &want); /* strided storage taken */
    /* consistency checks: local errors take part, so every rank fails together */
    if ((st = dt__consistent_spec(t->mesh, fn, st, &t->desc, want.placements, NULL, 0, NULL))) return st;
    if ((st = dt__shm_auto(t))) return dt__within(fn, st);
    if (*out) {
        if (*out == t) { dt__async_attach(*out, a); return DT_OK; } /* same spec: nothing to do */
        st = dt__redistribute_run(t, want.placements, (*out)->data, (*out)->strided ? (*out)->stride : NULL, -1, a);
        if (!st) dt__async_attach(*out, a);
        return dt__within(fn, st);
    }
    if ((st = dt__tensor_make(fn, t->mesh, &want, NULL, 0, &o))) return st;
    if ((st = dt__redistribute_run(t, want.placements, o->data, NULL, -1, a))) {
        dt_tensor_destroy(o);
        return dt__within(fn, st);
    }
    dt__async_attach(o, a);
    *out = o;
    return DT_OK;
}
DT_API dt_status dt_tensor_redistribute(const dt_tensor *t, const dt_placement *placements, dt_tensor **out) {
    DT__PUBLIC("dt_tensor_redistribute", dt__redistribute_body("dt_tensor_redistribute", t, placements, out, NULL));
}

static dt_status dt__redistribute_reduce_body(const char *fn, const dt_tensor *t, const dt_placement *placements,
                                              dt_reduce op, dt_tensor *out, dt__async *a) {
    dt_tensor_desc want;
    dt_status st;
    int64_t arg = (int64_t)op;
    int i;
    if ((st = dt__check_tensor(fn, t))) return st;
    want = t->desc;
    if (!placements) st = dt__fail(DT_ERR_ARG, "%s: placements is NULL", fn);
    else if (!out) st = dt__fail(DT_ERR_ARG, "%s: out is NULL", fn);
    else if ((int)op != DT_SUM && (int)op != DT_MAX && (int)op != DT_MIN)
        st = dt__fail(DT_ERR_ARG, "%s: op = %d (%s), must be DT_SUM, DT_MAX or DT_MIN (an average is no elementwise "
                      "accumulation)", fn, (int)op, (int)op == DT_AVG ? "DT_AVG" : "not a dt_reduce");
    else st = dt__check_placements(fn, t->mesh, t->desc.ndim, t->desc.shape, placements, t->mesh->ndim, want.placements);
    if (!st) st = dt__check_tensor(fn, out);
    if (!st) st = dt__check_complex_partial(fn, t->desc.dtype, want.placements, t->mesh->ndim);
    if (!st && (t->desc.dtype == DT_C64 || t->desc.dtype == DT_C128) && op != DT_SUM)
        st = dt__fail(DT_ERR_DTYPE, "%s: op %s of %s: complex numbers have no order (DT_SUM only)", fn,
                      dt__reduce_name(op), dt_dtype_name(t->desc.dtype));
    for (i = 0; i < t->mesh->ndim && !st; i++) {
        if (dt__is(want.placements[i], DT_PARTIAL))
            st = dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d] is Partial(%s): a Partial destination is not "
                          "supported (redistribute to Replicate or Shard)", fn, i,
                          dt__reduce_name(want.placements[i].reduce));
    }
    if (!st) st = dt__check_out_spec(fn, out, t->mesh, &want); /* strided storage taken */
    /* consistency checks: local errors take part, so every rank fails together */
    if ((st = dt__consistent_spec(t->mesh, fn, st, &t->desc, want.placements, &arg, 1, "op"))) return st;
    if ((st = dt__shm_auto(t))) return dt__within(fn, st);
    st = dt__redistribute_run(t, want.placements, out->data, out->strided ? out->stride : NULL, (int)op, a);
    if (!st) dt__async_attach(out, a);
    return dt__within(fn, st);
}
DT_API dt_status dt_tensor_redistribute_reduce(const dt_tensor *t, const dt_placement *placements, dt_reduce op,
                                               dt_tensor *out) {
    DT__PUBLIC("dt_tensor_redistribute_reduce",
               dt__redistribute_reduce_body("dt_tensor_redistribute_reduce", t, placements, op, out, NULL));
}

/* the begin calls: the blocking call's checks and agreement, a record for
   its _end (freed here when the call fails) */
static dt_status dt__redistribute_begin_body(const dt_tensor *t, const dt_placement *placements, dt_tensor **out) {
    const char *fn = "dt_tensor_redistribute_begin";
    dt__async *a = NULL;
    dt_status st = dt__async_new(fn, t ? t->desc.ndim : 0, &a);
    if (!st) st = dt__redistribute_body(fn, t, placements, out, a);
    if (st) dt__async_free(a);
    return st;
}
DT_API dt_status dt_tensor_redistribute_begin(const dt_tensor *t, const dt_placement *placements, dt_tensor **out) {
    DT__PUBLIC("dt_tensor_redistribute_begin", dt__redistribute_begin_body(t, placements, out));
}

static dt_status dt__redistribute_reduce_begin_body(const dt_tensor *t, const dt_placement *placements, dt_reduce op,
                                                    dt_tensor *out) {
    const char *fn = "dt_tensor_redistribute_reduce_begin";
    dt__async *a = NULL;
    dt_status st = dt__async_new(fn, t ? t->desc.ndim : 0, &a);
    if (!st) st = dt__redistribute_reduce_body(fn, t, placements, op, out, a);
    if (st) dt__async_free(a);
    return st;
}
DT_API dt_status dt_tensor_redistribute_reduce_begin(const dt_tensor *t, const dt_placement *placements, dt_reduce op,
                                                     dt_tensor *out) {
    DT__PUBLIC("dt_tensor_redistribute_reduce_begin", dt__redistribute_reduce_begin_body(t, placements, op, out));
}

/* Collective: a rank whose out has nothing begun fails, and so does every
   rank (agreed before anyone waits, so a misuse is an error, not a hang) */
static dt_status dt__redistribute_end_body(dt_tensor *out) {
    const char *fn = "dt_tensor_redistribute_end";
    dt__async *a;
    dt_status st = DT_OK;
    if (!out) return dt__fail(DT_ERR_ARG, "%s: out is NULL", fn);
    if (!out->async)
        st = dt__fail(DT_ERR_ARG, "%s: no dt_tensor_redistribute_begin is outstanding on this tensor (never begun, "
                      "or already ended)", fn);
    if (out->mesh->rank >= 0 && out->mesh->size > 1 && (st = dt__agree(out->mesh->comm, fn, st, 0))) return st;
    if (st) return st;
    a = (dt__async *)out->async;
    dt__async_attach(out, NULL);
    return dt__within(fn, dt__async_finish(a));
}
DT_API dt_status dt_tensor_redistribute_end(dt_tensor *out) {
    DT__PUBLIC("dt_tensor_redistribute_end", dt__redistribute_end_body(out));
}

static dt_status dt__redistribute_test_body(dt_tensor *out, int *done) {
    const char *fn = "dt_tensor_redistribute_test";
    dt__async *a;
    if (!out || !done) return dt__fail(DT_ERR_ARG, "%s: out or done is NULL", fn);
    if (!out->async) return dt__fail(DT_ERR_ARG, "%s: no dt_tensor_redistribute_begin is outstanding on this tensor", fn);
    a = (dt__async *)out->async;
    if (!a->comm) { *done = 1; return DT_OK; }
    return dt__within(fn, dt__comm_test(a->comm, a->request, done));
}
DT_API dt_status dt_tensor_redistribute_test(dt_tensor *out, int *done) {
    DT__PUBLIC("dt_tensor_redistribute_test", dt__redistribute_test_body(out, done));
}

static dt_status dt__tensor_gather_body(const dt_tensor *t, void *full) {
    dt_placement rep[DT_MAX_MESH_DIMS];
    dt_status st;
    size_t n = 1;
    int i;
    if ((st = dt__check_tensor("dt_tensor_gather", t))) return st;
    for (i = 0; i < t->desc.ndim; i++) n *= (size_t)t->desc.shape[i];
    if (!full && n && t->mesh->rank >= 0) st = dt__fail(DT_ERR_ARG, "dt_tensor_gather: full is NULL");
    if ((st = dt__consistent_spec(t->mesh, "dt_tensor_gather", st, &t->desc, NULL, NULL, 0, NULL))) return st;
    memset(rep, 0, sizeof rep);
    return dt__within("dt_tensor_gather", dt__redistribute_into(t, rep, full));
}
DT_API dt_status dt_tensor_gather(const dt_tensor *t, void *full) {
    DT__PUBLIC("dt_tensor_gather", dt__tensor_gather_body(t, full));
}

static dt_status dt__distribute_device(dt_mesh *m, const dt_tensor_desc *d, const void *full, int src_rank,
                                       dt_tensor **out);

/* the same placements with every cyclic rule made torch.chunk: a layout of
   boxes, which the steps that need one (distribute, RNG fills, I/O) work in */
static void dt__boxed(const dt_placement *pl, int mndim, dt_placement *out) {
    int i;
    for (i = 0; i < mndim; i++)
        out[i] = pl[i].kind == DT_SHARD && pl[i].split == DT_SPLIT_CYCLIC ? dt_shard(pl[i].dim) : pl[i];
}

/* a cyclic layout is distributed as its boxed twin, then redistributed (a
   set-up step: one extra exchange) */
static dt_status dt__distribute_cyclic(dt_mesh *m, const dt_tensor_desc *norm, const void *full, int src_rank,
                                       dt_tensor **out) {
    dt_tensor_desc boxed = *norm;
    dt_tensor *b = NULL, *t = NULL;
    dt_status st;
    dt__boxed(norm->placements, m->ndim, boxed.placements);
    if ((st = dt_tensor_distribute(m, &boxed, full, src_rank, &b))) return st;
    if (!(st = dt__tensor_make("dt_tensor_distribute", m, norm, NULL, 0, &t)) &&
        (st = dt__redistribute_into(b, norm->placements, t->data))) {
        dt_tensor_destroy(t);
        t = NULL;
    }
    dt_tensor_destroy(b);
    if (!st) *out = t;
    return st;
}

/* From a full array on mesh rank `src` (or on every rank): each rank gets
   its own box, replicas included, in one alltoallv in which only `src`
   sends. Partial targets then follow Replicate -> Partial. */
static dt_status dt__tensor_distribute_body(dt_mesh *m, const dt_tensor_desc *d, const void *full, int src_rank,
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
    if (!m) return dt__fail(DT_ERR_ARG, "%s: mesh is NULL", fn);
    if (out && d && d->device != DT_HOST && dt__device_of(d->device)) return dt__distribute_device(m, d, full, src_rank, out);
    st = out ? dt__check_desc(fn, m, d, &norm) : dt__fail(DT_ERR_ARG, "%s: out is NULL", fn); /* agreed on below */
    if (!st && (src_rank < DT_SRC_ALL || src_rank >= m->size))
        st = dt__fail(DT_ERR_ARG, "%s: src_rank = %d, must be DT_SRC_ALL (-1) or a mesh rank 0..%d", fn, src_rank,
                      m->size - 1);
    if (!st && !full && (src_rank == DT_SRC_ALL || src_rank == m->rank) && m->rank >= 0) {
        size_t n = 1;
        for (i = 0; i < norm.ndim; i++) n *= (size_t)norm.shape[i];
        if (n) st = dt__fail(DT_ERR_ARG, "%s: full is NULL on the source rank %d", fn, m->rank);
    }
    if (dt__checks_on()) { /* consistency checks: the same agreement, with descriptions */
        int64_t a = src_rank;
        char as[32];
        snprintf(as, sizeof as, "src_rank %d", src_rank);
        if ((st = dt__consistent_spec(m, fn, st, &norm, NULL, &a, 1, as))) return st;
    } else if (src_rank != DT_SRC_ALL && m->rank >= 0) { /* all ranks enter the scatter, or none */
        uint64_t h = st ? 0 : dt__desc_hash(&norm) ^ (uint64_t)(int64_t)src_rank;
        if ((st = dt__agree(m->comm, fn, st, h))) return st;
    }
    if (st) return st;
    if (dt__pl_cyclic(norm.placements, m->ndim)) return dt__within(fn, dt__distribute_cyclic(m, &norm, full, src_rank, out));
    if ((st = dt__tensor_make(fn, m, &norm, NULL, 0, &t))) return st;
    if (m->rank < 0) { *out = t; return DT_OK; }
    dt__ctx_of(t, &x);
    for (i = 0; i < m->ndim; i++) rep[i] = dt__is(norm.placements[i], DT_PARTIAL) ? dt_replicate() : norm.placements[i];
    in.data = (char *)full;
    in.ndim = norm.ndim;
    in.es = x.es;
    in.stride = NULL;
    for (i = 0; i < norm.ndim; i++) { in.box.lo[i] = 0; in.box.ext[i] = norm.shape[i]; }
    dt__array_at(&x, rep, t->data, &mine);
    for (i = 0, j = 1; i < m->ndim; i++) j &= dt__is(rep[i], DT_REPLICATE);
    if (src_rank == DT_SRC_ALL) {
        dt__copy_box(&in, &mine, &mine.box);
    } else if (j) { /* everyone gets everything: a broadcast */
        /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): full is non-NULL on the source rank whenever the tensor is non-empty (checked above, collectively) */
        if (m->rank == src_rank && t->bytes) memcpy(t->data, full, t->bytes);
        if ((st = dt__comm_broadcast(m->comm, t->data, t->bytes, src_rank))) {
            dt_tensor_destroy(t);
            return dt__within(fn, st);
        }
    } else {
        if ((st = dt__boxes(m->size, &send, &recv))) { dt_tensor_destroy(t); return dt__within(fn, st); }
        for (j = 0; j < m->size; j++) {
            dt__mesh_coord_of(m, j, c);
            if (m->rank == src_rank) dt__box_at(&x, rep, c, &send[j]);
            else dt__box_empty(x.ndim, &send[j]);
            if (j == src_rank) recv[j] = mine.box;
            else dt__box_empty(x.ndim, &recv[j]);
        }
        st = dt__exchange(m, x.dev, m->comm, &in, &mine, send, recv, 0, dt__box_numel(x.ndim, &in.box) * x.es);
        DT_FREE(send);
        if (st) { dt_tensor_destroy(t); return dt__within(fn, st); }
    }
    for (i = 0; i < m->ndim; i++) dt__to_partial(m, &dt__host_device, i, norm.placements[i], t->data, t->bytes);
    *out = t;
    return DT_OK;
}
DT_API dt_status dt_tensor_distribute(dt_mesh *m, const dt_tensor_desc *d, const void *full, int src_rank,
                                      dt_tensor **out) {
    DT__PUBLIC("dt_tensor_distribute", dt__tensor_distribute_body(m, d, full, src_rank, out));
}

/* Device tensors are distributed through host memory (a set-up step, not a
   hot path): `full` may be host or device memory. */
static dt_status dt__distribute_device(dt_mesh *m, const dt_tensor_desc *d, const void *full, int src_rank,
                                       dt_tensor **out) {
    const char *fn = "dt_tensor_distribute";
    const dt__device *dev = dt__device_of(d->device);
    dt_tensor_desc hd = *d, norm;
    dt_tensor *h = NULL, *t = NULL;
    void *staged = NULL;
    size_t bytes;
    int i;
    dt_status st = dt__check_desc(fn, m, d, &norm);
    if (st) return st;
    for (i = 0, bytes = dt_dtype_size(norm.dtype); i < norm.ndim; i++) bytes *= (size_t)norm.shape[i];
    if (full && bytes && dev->owns(full) && (src_rank == DT_SRC_ALL || src_rank == m->rank)) {
        if ((st = dt__alloc(fn, bytes, &staged))) return st;
        if ((st = dev->copy(fn, staged, full, bytes))) { DT_FREE(staged); return st; }
        full = staged;
    }
    hd.device = DT_HOST;
    st = dt_tensor_distribute(m, &hd, full, src_rank, &h);
    DT_FREE(staged);
    if (st) return st;
    if ((st = dt__tensor_make(fn, m, &norm, NULL, 0, &t)) || (st = dev->copy(fn, t->data, h->data, h->bytes))) {
        dt_tensor_destroy(t);
        dt_tensor_destroy(h);
        return st;
    }
    dt_tensor_destroy(h);
    *out = t;
    return DT_OK;
}

/* >>propagate -------------------------------------------------------------
   Picks one combination per mesh dim: the one whose input redistributions
   cost least under an alpha-beta model (the comm's alpha and beta; the
   bytes a rank holds, computed from the global shape so that every rank
   computes the same number); local changes (Replicate -> Shard or ->
   Partial) cost a hundredth of moving the bytes, so a combination that
   moves nothing wins and one that only slices beats one that communicates;
   ties go to the earlier combination. The choice depends only on the op,
   the input specs and the static args, so it is cached per mesh in a
   direct-mapped table of DT_OP_CACHE entries (a colliding entry is
   replaced: bounded, cf. pytorch #178335). */

/*    HOW AN OP CHOOSES ITS SHARDING. Every op is one row of dt__op_table (one
   line of the op registry, top of the implementation): a
   name, a family, an arity, the kernel it runs and its Partial rule. The
   family's shape inference (>>ops) validates the inputs, computes the result's
   shape and describes every input dim by what it becomes (the dim map):
   an output dim, a contracted or reduced dim (group g), or a fixed dim
   that must not be split (a softmax dim, a broadcast size-1 dim, a
   narrowed dim). The rule then lists, for ONE mesh dim, the valid
   combinations of input placements -> output placement:

     1. all Replicate                       -> Replicate
     2. per output dim j: the inputs having j Shard it, the others
        Replicate (an input's broadcast dim is fixed)  -> Shard(j)
     3. per contraction/reduction group: the inputs having it Shard it;
        additive inputs (a bias, addmm's c) Partial(SUM), others
        Replicate                           -> Partial(op's kind)
     4. the op's Partial rule: which Partial inputs pass through as what.
        Linear ops keep Partial(SUM) (a + b, scale, matmul with a
        replicated operand); a Partial plus a replicated tensor needs both
        Partial, and Replicate -> Partial is local and exact (the value on
        coordinate 0, zeros elsewhere), so the replicated value is added
        once (pytorch #163193); max/min pass only through monotone maps
        and only as MAX/MIN (#159856, #165962); everything else reduces
        first. An integer Partial(AVG) is the mean truncated toward zero,
        and truncation commutes with almost nothing (trunc(mean(3x)) is
        not 3 trunc(mean(x))): it passes only through data movement and
        negation (DT__TRUNC_OK), and every other op reduces it first
        (on mesh dims of one rank the mean is the value: it passes).

   Propagation (>>propagate) picks one combination per mesh dim. Combining
   across mesh dims needs no extra rule: a tensor dim sharded on several
   mesh dims is split in mesh-dim order for every tensor alike, so the
   local blocks of all operands still line up. */

#define DT__MAX_IN 8   /* inputs of one op (cat/stack take up to 8)          */
#define DT__MAX_ARGS 12
#define DT__MAX_OPTS (2 + 4 * DT_MAX_DIMS + 12)
#define DT__D_FIXED (-1)          /* dim map: must not be split             */
#define DT__D_CLASS (-2)          /* cross_entropy's class dim              */
#define DT__D_GROUP(g) (-16 - (g)) /* contraction/reduction group g (0..7)  */

static int dt__has_trait(const dt__opdef *f, int trait) { return (dt__family_traits[f->family] & trait) != 0; }

typedef struct dt__in {         /* one input as an op sees it                      */
    const dt_tensor *t;         /* NULL: an absent optional input (a bias)           */
    const dt_tensor_desc *d;    /* t's desc, or `own` for a host scalar              */
    dt_tensor_desc own;
    const char *name;           /* the argument's name, for messages                 */
} dt__in;

typedef struct dt__call {
    int op;
    const dt__opdef *def;
    const char *fn;
    dt_mesh *m;
    int nin;
    dt__in in[DT__MAX_IN];
    int8_t dmap[DT__MAX_IN][DT_MAX_DIMS];
    int8_t grp[2][DT_MAX_DIMS];    /* reshape: the dim group of each input / output dim, -1 */
    dt_tensor_desc out;            /* the result; placements from propagation (on a cache
                                      hit filled only for the reduce family, whose runner
                                      is the one that reads it: norm2's Partial)          */
    dt_tensor_desc out_public;     /* what the caller gets (norm2: Partial finished)      */
    int64_t arg[DT__MAX_ARGS];     /* static args: part of the cache key                  */
    int narg;
    double a, b;                   /* scalar args: not part of the key                    */
    int keep;                      /* axpy: the input whose spec the output keeps; -1      */
    dt_placement want[DT__MAX_IN][DT_MAX_MESH_DIMS]; /* the chosen input placements      */
    double cost;
    int cached;
    unsigned moves;                /* bit i: input i's placements are not want[i] (it moves) */
    const dt__device *dev;         /* where every input and the result live              */
} dt__call;

#define DT__KEY_WORDS 48
typedef struct dt__entry {
    uint64_t key[DT__KEY_WORDS];
    int nkey;                      /* 0: empty */
    dt_tensor_desc out, out_public;
    dt_placement want[DT__MAX_IN][DT_MAX_MESH_DIMS];
    double cost;
    unsigned moves;                /* dt__call's: a function of the key (it holds the inputs' placements) */
} dt__entry;

typedef struct dt__opts {
    int n;
    dt_placement in[DT__MAX_OPTS][DT__MAX_IN];
    dt_placement out[DT__MAX_OPTS];
} dt__opts;

/* the cache key: op, static args, each input's dtype, rank, placements, shape.
   0 words: too long to cache (e.g. cat of many high-rank tensors). */
static int dt__key_build(const dt__call *c, uint64_t *w) {
    int n = 0, i, j, mnd = c->m->ndim;
    w[n++] = (uint64_t)c->op | (uint64_t)c->nin << 8 | (uint64_t)c->narg << 16 | (uint64_t)mnd << 24;
    for (i = 0; i < c->narg; i++) w[n++] = (uint64_t)c->arg[i];
    for (i = 0; i < c->nin; i++) {
        const dt_tensor_desc *d = c->in[i].d;
        uint64_t pl = 0, tag;
        int rules = 0;
        if (n + 2 + DT_MAX_DIMS + DT_MAX_MESH_DIMS / 7 > DT__KEY_WORDS) return 0;
        if (!d) { w[n++] = 0xffu; continue; }
        for (j = 0; j < mnd; j++) {
            const dt_placement *p = &d->placements[j];
            if (j && j % 7 == 0) { w[n++] = pl; pl = 0; }
            pl |= ((uint64_t)p->kind | (uint64_t)p->reduce << 2 | (uint64_t)(p->dim & 15) << 4) << (8 * (j % 7));
            rules |= p->split;
        }
        /* dtype, rank and presence: beside the placements (8 bits a mesh dim) when they leave room */
        tag = (uint64_t)d->dtype | (uint64_t)d->ndim << 8 | (uint64_t)(c->in[i].t == NULL) << 16;
        w[n++] = mnd <= 4 ? pl | tag << 32 : pl;
        for (j = 0; j < mnd && rules; j++) { /* split rules: their words; sizes arrays are not cached */
            const dt_placement *p = &d->placements[j];
            if (p->kind != DT_SHARD || !p->split) continue;
            if (p->split == DT_SPLIT_SIZES || n + 4 + DT_MAX_DIMS + DT_MAX_MESH_DIMS / 7 > DT__KEY_WORDS) return 0;
            w[n++] = (uint64_t)j | (uint64_t)p->split << 8 | (uint64_t)p->block << 16;
            if (p->src) w[n++] = (uint64_t)1 << 63 | (uint64_t)(uint32_t)p->src; /* bit 63: not a rule word */
        }
        if (mnd > 4) w[n++] = tag;
        for (j = 0; j < d->ndim; j++) w[n++] = (uint64_t)d->shape[j];
    }
    return n;
}

/* (one multiply a word; the low bits that pick the slot get the high bits
   folded in at the end) */
static uint64_t dt__key_hash(const uint64_t *w, int n) {
    uint64_t h = 0x9e3779b97f4a7c15ull;
    int i;
    for (i = 0; i < n; i++) h = (h ^ w[i]) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
}


/* ---- the rule: options on one mesh dim ---- */

/* Partial(MAX/MIN): an order, which complex numbers lack */
static int dt__pl_ordered(dt_placement p) {
    return p.kind == DT_PARTIAL && (p.reduce == DT_MAX || p.reduce == DT_MIN);
}

/* a strategy that puts a complex input or result in Partial(MAX/MIN)
   (which no complex tensor may be) is not offered */
static int dt__opt_complex_ok(const dt__call *c, const dt_placement *in, dt_placement out) {
    int i;
    if (dt__pl_ordered(out) && dt__is_complex(c->out.dtype)) return 0;
    for (i = 0; i < c->nin; i++)
        if (c->in[i].d && dt__is_complex(c->in[i].d->dtype) && dt__pl_ordered(in[i])) return 0;
    return 1;
}

static void dt__opts_add(dt__opts *o, const dt__call *c, const dt_placement *in, dt_placement out) {
    int i;
    if (o->n >= DT__MAX_OPTS || !dt__opt_complex_ok(c, in, out)) return;
    for (i = 0; i < c->nin; i++) o->in[o->n][i] = in[i];
    o->out[o->n++] = out;
}

/* the input dim of input i that maps to code v, or -1 */
static int dt__dim_with(const dt__call *c, int i, int v) {
    int d;
    if (!c->in[i].d) return -1;
    for (d = 0; d < c->in[i].d->ndim; d++)
        if (c->dmap[i][d] == v) return d;
    return -1;
}

/* the flat element range [*a, *a + *n) of a box over dims [g0, g1) of shape
   sh; 0 if the box is not one contiguous span */
static int dt__flat_range(const int64_t *sh, const int64_t *lo, const int64_t *ext, int g0, int g1, int64_t *a,
                          int64_t *n) {
    int64_t stride = 1;
    int p, t = g1 - 1;
    *a = 0;
    *n = 1;
    for (p = g0; p < g1; p++) *n *= ext[p];
    if (!*n) return 1;
    while (t >= g0 && ext[t] == sh[t]) t--;   /* full trailing dims */
    for (p = g0; p < t; p++)
        if (ext[p] != 1) return 0;            /* then one partial dim, then single indices */
    for (p = g1 - 1; p >= g0; p--) { *a += lo[p] * stride; stride *= sh[p]; }
    return 1;
}

/* reshape keeps input dim d sharded as output dim j on mesh dim `mdim` only
   if every rank's elements stay where they are. With the mesh dims already
   chosen to split dims of the same group (nested, in mesh-dim order), each
   rank's elements of the group must be one span, the same in both shapes. */
static int dt__reshape_keeps(const dt__call *c, int d, int j, int mdim) {
    const int64_t *si = c->in[0].d->shape, *so = c->out.shape;
    int kd[DT_MAX_MESH_DIMS], kj[DT_MAX_MESH_DIMS], ks[DT_MAX_MESH_DIMS], nk = 0, i, g = c->grp[0][d];
    int coord[DT_MAX_MESH_DIMS], total = 1, i0 = 0, i1 = 0, j0 = 0, j1 = 0;
    while (c->grp[0][i0] != g) i0++;
    for (i1 = i0; i1 < c->in[0].d->ndim && c->grp[0][i1] == g; i1++) {}
    while (c->grp[1][j0] != g) j0++;
    for (j1 = j0; j1 < c->out.ndim && c->grp[1][j1] == g; j1++) {}
    for (i = 0; i < mdim; i++)
        if (c->want[0][i].kind == DT_SHARD && c->grp[0][c->want[0][i].dim] == g) {
            kd[nk] = c->want[0][i].dim;
            kj[nk] = c->out.placements[i].dim;
            ks[nk++] = c->m->shape[i];
        }
    kd[nk] = d;
    kj[nk] = j;
    ks[nk++] = c->m->shape[mdim];
    for (i = 0; i < nk; i++) { total *= ks[i]; coord[i] = 0; }
    while (total--) {
        int64_t li[DT_MAX_DIMS], ei[DT_MAX_DIMS], lo[DT_MAX_DIMS], eo[DT_MAX_DIMS], off, len, ai, ni, ao, no;
        memcpy(ei, si, sizeof ei);
        memcpy(eo, so, sizeof eo);
        memset(li, 0, sizeof li);
        memset(lo, 0, sizeof lo);
        for (i = 0; i < nk; i++) {
            dt__chunk(ei[kd[i]], ks[i], coord[i], &off, &len); li[kd[i]] += off; ei[kd[i]] = len;
            dt__chunk(eo[kj[i]], ks[i], coord[i], &off, &len); lo[kj[i]] += off; eo[kj[i]] = len;
        }
        if (!dt__flat_range(si, li, ei, i0, i1, &ai, &ni) || !dt__flat_range(so, lo, eo, j0, j1, &ao, &no)) return 0;
        if (ni != no || (ni && ai != ao)) return 0;
        for (i = nk - 1; i >= 0 && ++coord[i] == ks[i]; i--) coord[i] = 0;
    }
    return 1;
}

/* reshape: any input dim of a group may stay sharded as any output dim of it
   whose elements line up (10 -> (2, 5) nested twice: rows, then columns) */
static void dt__opts_reshape(const dt__call *c, int mdim, dt__opts *o) {
    dt_placement in[DT__MAX_IN];
    int d, j;
    memset(in, 0, sizeof in);
    /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): in[0] is every op's required first input, never NULL */
    for (d = 0; d < c->in[0].d->ndim; d++)
        for (j = 0; j < c->out.ndim; j++)
            if (c->grp[0][d] >= 0 && c->grp[0][d] == c->grp[1][j] && c->in[0].d->shape[d] > 1 && c->out.shape[j] > 1 &&
                dt__reshape_keeps(c, d, j, mdim)) {
                in[0] = dt_shard(d);
                dt__opts_add(o, c, in, dt_shard(j));
            }
}


/* Split rules other than torch.chunk (the table's options are all chunk):
   an input sharded by such a rule on this mesh dim also offers the option
   of keeping it, every input whose dim maps to the same code then taking
   the same rule, so that ops on inputs of one layout run where the data is.
   Only families whose kernels never read a block's global offset, or (for
   the one-span rules) read it from the box; views, cat and reshape work in
   chunk. Inputs of another extent along the code (broadcasting) refuse. */
static int dt__rule_family(const dt__call *c, const dt_placement *p) {
    if (dt__has_trait(c->def, DT__FAM_CHUNK_ONLY)) return 0;
    return p->split != DT_SPLIT_CYCLIC || !dt__has_trait(c->def, DT__FAM_INDICES);
}

/* the rule input k has on mesh dim mdim, for code v (an output dim or a
   contracted group), if every input mapping v can take it; 0 if none */
static int dt__rule_for(const dt__call *c, int mdim, int k, int v, dt_placement *rule) {
    const dt_placement *p;
    int d = dt__dim_with(c, k, v), i;
    int64_t ext;
    if (d < 0 || !c->in[k].t) return 0;
    p = &c->in[k].d->placements[mdim];
    if (p->kind != DT_SHARD || p->dim != d || p->split == DT_SPLIT_CHUNK || !dt__rule_family(c, p)) return 0;
    ext = c->in[k].d->shape[d];
    if (v >= 0 && c->out.shape[v] != ext) return 0; /* a broadcast input dim */
    for (i = 0; i < c->nin; i++) {
        int e = dt__dim_with(c, i, v);
        if (e >= 0 && c->in[i].d->shape[e] != ext) return 0;
    }
    for (i = 0; i < k; i++) { /* an earlier input with the same rule offered it already */
        dt_placement q;
        if (dt__rule_for(c, mdim, i, v, &q) && q.split == p->split && q.block == p->block && q.src == p->src &&
            (p->split != DT_SPLIT_SIZES || dt__placement_eq(q, *p)))
            return 0;
    }
    *rule = *p;
    return 1;
}

static dt_placement dt__with_dim(dt_placement rule, int d) {
    rule.dim = (int8_t)d;
    return rule;
}

static void dt__opts_shards(const dt__call *c, int mdim, dt__opts *o) {
    dt_placement in[DT__MAX_IN], rule;
    int i, j, k, any;
    if (dt__has_trait(c->def, DT__FAM_DIM_GROUPS)) { dt__opts_reshape(c, mdim, o); return; }
    for (j = 0; j < c->out.ndim; j++) {
        memset(in, 0, sizeof in);
        any = 0;
        for (i = 0; i < c->nin; i++) {
            int d = dt__dim_with(c, i, j);
            if (d < 0) continue;
            in[i] = dt_shard(d);
            any = 1;
        }
        if (any) dt__opts_add(o, c, in, dt_shard(j));
        for (k = 0; any && k < c->nin; k++) {
            if (!dt__rule_for(c, mdim, k, j, &rule)) continue;
            for (i = 0; i < c->nin; i++)
                if (in[i].kind == DT_SHARD) in[i] = dt__with_dim(rule, in[i].dim);
            dt__opts_add(o, c, in, dt__with_dim(rule, j));
        }
    }
}

static void dt__opts_groups(const dt__call *c, int mdim, dt__opts *o) {
    dt_placement in[DT__MAX_IN];
    int i, g, any;
    if (c->def->reduce < 0) return;
    for (g = 0; g < 8; g++) {
        dt_placement rule;
        int k;
        memset(in, 0, sizeof in);
        any = 0;
        for (i = 0; i < c->nin; i++) {
            int d = dt__dim_with(c, i, DT__D_GROUP(g));
            if (d >= 0) { in[i] = dt_shard(d); any = 1; }
            else if (c->in[i].d && dt__has_trait(c->def, DT__FAM_ADDEND)) in[i] = dt_partial(DT_SUM); /* bias, addmm's c */
        }
        if (any) dt__opts_add(o, c, in, dt_partial((dt_reduce)c->def->reduce));
        for (k = 0; any && k < c->nin; k++) { /* a contraction over the parts of any one rule */
            if (!dt__rule_for(c, mdim, k, DT__D_GROUP(g), &rule)) continue;
            for (i = 0; i < c->nin; i++)
                if (in[i].kind == DT_SHARD) in[i] = dt__with_dim(rule, in[i].dim);
            dt__opts_add(o, c, in, dt_partial((dt_reduce)c->def->reduce));
        }
    }
}

/* may Partial(AVG) pass through this call on mesh dim mdim? Not for
   integers, unless the op commutes with the truncation of their mean (see
   the table's notes) or the mesh dim has one rank (the mean of one value) */
static int dt__avg_passes(const dt__call *c, int mdim) {
    return !dt__int_avg(c->in[0].d->dtype, DT_AVG) || (c->def->flags & (DT__PASS_ALL | DT__TRUNC_OK)) ||
           c->m->shape[mdim] == 1;
}

/* does Partial rule r involve AVG? */
static int dt__prule_avg(const dt__prule *r) {
    return r->out == DT_AVG || r->in[0] == DT_AVG || r->in[1] == DT_AVG || r->in[2] == DT_AVG;
}

static void dt__opts_partial(const dt__call *c, int mdim, dt__opts *o) {
    dt_placement in[DT__MAX_IN];
    const dt__opdef *f = c->def;
    int i, k, r, avg = dt__avg_passes(c, mdim);
    if (dt__has_trait(c->def, DT__FAM_PMAP)) {
        for (k = 0; k < 4; k++) {
            in[0] = dt_partial((dt_reduce)k);
            if (f->flags & DT__TO_REP) dt__opts_add(o, c, in, dt_replicate());
            else if (f->pmap[k] >= 0 && (avg || (k != DT_AVG && f->pmap[k] != DT_AVG)))
                dt__opts_add(o, c, in, dt_partial((dt_reduce)f->pmap[k]));
        }
        return;
    }
    if (f->flags & DT__PASS_ALL) {
        for (k = 0; k < 4; k++) {
            for (i = 0; i < c->nin; i++) in[i] = dt_partial((dt_reduce)k);
            dt__opts_add(o, c, in, dt_partial((dt_reduce)k));
        }
        return;
    }
    for (r = 0; r < f->nprules; r++) {
        if (!avg && dt__prule_avg(&f->prules[r])) continue;
        for (i = 0; i < c->nin && i < DT__MAX_IN; i++) { /* (the bound quiets GCC -O3's -Wstringop-overflow) */
            int8_t v = i < 3 ? f->prules[r].in[i] : -1;
            in[i] = v < 0 ? dt_replicate() : dt_partial((dt_reduce)v);
        }
        dt__opts_add(o, c, in, dt_partial((dt_reduce)f->prules[r].out));
    }
}

static void dt__opts_build(const dt__call *c, int mdim, dt__opts *o) {
    dt_placement in[DT__MAX_IN];
    int i;
    o->n = 0;
    memset(in, 0, sizeof in);
    dt__opts_add(o, c, in, dt_replicate());
    dt__opts_shards(c, mdim, o);
    dt__opts_groups(c, mdim, o);
    if (dt__has_trait(c->def, DT__FAM_CLASS_SPLIT)) { /* class-sharded logits: statistics allreduced in the kernel */
        in[0] = dt_shard(1);
        dt__opts_add(o, c, in, dt_replicate());
    }
    dt__opts_partial(c, mdim, o);
    for (i = 0; i < c->nin; i++) /* absent inputs take no part */
        if (!c->in[i].d) { int k; for (k = 0; k < o->n; k++) o->in[k][i] = dt_replicate(); }
}

/* ---- cost ---- */

static double dt__rank_bytes(const dt_mesh *m, const dt_tensor_desc *d) {
    double b = (double)dt_dtype_size(d->dtype);
    int i;
    for (i = 0; i < d->ndim; i++) b *= (double)d->shape[i];
    for (i = 0; i < m->ndim; i++)
        if (d->placements[i].kind == DT_SHARD) b /= m->shape[i];
    return b;
}

static double dt__move_cost(const dt_mesh *m, int mdim, double bytes, dt_placement from, dt_placement to) {
    double alpha = m->root->be.alpha > 0 ? m->root->be.alpha : 5e-6; /* root: also outside the mesh */
    double beta = m->root->be.beta > 0 ? m->root->be.beta : 2e-10;
    double k = m->shape[mdim], local = 0.01 * beta * bytes, B = bytes * beta;
    if (dt__placement_eq(from, to)) return 0;
    if (k == 1) return local;
    if (from.kind == DT_REPLICATE) return local;                          /* slice, or keep on one */
    if (from.kind == DT_SHARD && to.kind == DT_SHARD) return alpha + B * (k - 1) / k;  /* all-to-all */
    if (from.kind == DT_SHARD) return alpha + B * (k - 1) + (to.kind == DT_PARTIAL ? local * k : 0); /* allgather */
    if (to.kind == DT_SHARD) return alpha + B * (k - 1) / k;              /* reduce-scatter */
    return 2 * alpha + 2 * B * (k - 1) / k + (to.kind == DT_PARTIAL ? local : 0); /* allreduce */
}

/* does moving `from` -> `to` on this mesh dim talk to other ranks? (R -> S
   and R -> P are local) */
static int dt__communicates(const dt_mesh *m, int mdim, dt_placement from, dt_placement to) {
    return m->shape[mdim] > 1 && from.kind != DT_REPLICATE && !dt__placement_eq(from, to);
}

/* does option k turn non-Partial inputs into a Partial output? Its consumer
   will pay at least a reduce-scatter of the output, so that is counted: a
   matmul of two row-sharded matrices then gathers B (and yields rows)
   rather than re-sharding A to contract locally (and yielding a full-size
   Partial). A Partial carried through from a Partial input costs nothing new. */
static int dt__makes_partial(const dt__call *c, const dt__opts *o, int k) {
    int i;
    if (o->out[k].kind != DT_PARTIAL) return 0;
    for (i = 0; i < c->nin; i++)
        if (o->in[k][i].kind == DT_PARTIAL && c->in[i].d && !(dt__has_trait(c->def, DT__FAM_ADDEND) && i == 2))
            return 0; /* (a bias is made Partial only to be added once) */
    return 1;
}

/* choose per mesh dim: combinations that move nothing between ranks first,
   then the least cost (input moves, plus the reduction a new Partial output
   implies), then table order. axpy keeps its y: only combinations that
   leave it alone. */
static void dt__choose(dt__call *c) {
    dt__opts o;
    double bytes[DT__MAX_IN];
    int i, mdim, k;
    c->cost = 0;
    for (i = 0; i < c->nin; i++) bytes[i] = c->in[i].d ? dt__rank_bytes(c->m, c->in[i].d) : 0;
    for (mdim = 0; mdim < c->m->ndim; mdim++) {
        int best = -1, best_moves = 1;
        double best_cost = 0;
        dt__opts_build(c, mdim, &o);
        for (k = 0; k < o.n; k++) {
            double cost = 0;
            int moves = 0;
            if (c->keep >= 0 && (!dt__placement_eq(o.in[k][c->keep], c->in[c->keep].d->placements[mdim]) ||
                                 !dt__placement_eq(o.out[k], c->in[c->keep].d->placements[mdim])))
                continue;
            for (i = 0; i < c->nin; i++) {
                if (!c->in[i].d) continue;
                cost += dt__move_cost(c->m, mdim, bytes[i], c->in[i].d->placements[mdim], o.in[k][i]);
                moves |= dt__communicates(c->m, mdim, c->in[i].d->placements[mdim], o.in[k][i]);
            }
            if (dt__makes_partial(c, &o, k))
                cost += dt__move_cost(c->m, mdim, dt__rank_bytes(c->m, &c->out), o.out[k], dt_shard(0));
            if (best < 0 || moves < best_moves || (moves == best_moves && cost < best_cost)) {
                best = k;
                best_cost = cost;
                best_moves = moves;
            }
        }
        DT_ASSERT(best >= 0); /* all-Replicate is always there; axpy's y always has its own */
        for (i = 0; i < c->nin; i++) c->want[i][mdim] = o.in[best][i];
        c->out.placements[mdim] = o.out[best];
        c->cost += best_cost;
    }
}

/* Each mesh dim was chosen alone, so a sizes rule carried on one may end up
   splitting another part than the one its sizes add up to (nested under a
   split another mesh dim chose, or no longer nested): such a mesh dim falls
   back to torch.chunk for the result and every input. On identical layouts
   (a pointwise op) every sizes rule still fits and stays. */
static int dt__sizes_bad(const dt__call *c, const dt_placement *pl, const int64_t *shape, int i) {
    return pl[i].kind == DT_SHARD && pl[i].split == DT_SPLIT_SIZES &&
           !dt__sizes_fit(c->m->shape, pl, shape, i);
}

static void dt__sizes_unnest(dt__call *c) {
    int i, k, bad, again = 1;
    while (again) { /* (a fallback can unsettle a later mesh dim's sizes) */
        again = 0;
        for (i = 0; i < c->m->ndim; i++) {
            bad = dt__sizes_bad(c, c->out.placements, c->out.shape, i);
            for (k = 0; k < c->nin && !bad; k++)
                bad = c->in[k].d && dt__sizes_bad(c, c->want[k], c->in[k].d->shape, i);
            if (!bad) continue;
            again = 1;
            for (k = 0; k < c->nin; k++)
                if (c->want[k][i].kind == DT_SHARD && c->want[k][i].split == DT_SPLIT_SIZES)
                    c->want[k][i] = dt_shard(c->want[k][i].dim);
            if (c->out.placements[i].kind == DT_SHARD && c->out.placements[i].split == DT_SPLIT_SIZES)
                c->out.placements[i] = dt_shard(c->out.placements[i].dim);
        }
    }
}

/* norm2 reduces its sums of squares before the sqrt: the caller sees Replicate */
static void dt__public_out(dt__call *c) {
    int i;
    c->out_public = c->out;
    if (c->op == DT__OP_NORM2)
        for (i = 0; i < c->m->ndim; i++)
            if (c->out.placements[i].kind == DT_PARTIAL) c->out_public.placements[i] = dt_replicate();
}

static void dt__explain_line(const dt__call *c, FILE *f) {
    char a[160], b[160], sh[160];
    int i;
    fprintf(f, "%s:", c->def->name);
    for (i = 0; i < c->nin; i++) {
        const dt_tensor_desc *d = c->in[i].d;
        if (!d) continue;
        dt__placements_str(d->placements, c->m->ndim, d->ndim, a, sizeof a);
        dt__placements_str(c->want[i], c->m->ndim, d->ndim, b, sizeof b);
        fprintf(f, " %s %s%s %s", c->in[i].name, dt_dtype_name(d->dtype), dt__shape_str(d->shape, d->ndim, sh, sizeof sh), a);
        if (!dt__placements_eq(d->placements, c->want[i], c->m->ndim)) fprintf(f, " -> %s", b);
        fprintf(f, ";");
    }
    fprintf(f, " out %s%s %s; cost %.3g s%s\n", dt_dtype_name(c->out_public.dtype),
            dt__shape_str(c->out_public.shape, c->out_public.ndim, sh, sizeof sh),
            dt__placements_str(c->out_public.placements, c->m->ndim, c->out_public.ndim, a, sizeof a), c->cost,
            c->cached ? " (cached)" : "");
}

/* the strategy of call c: from the cache, or from the family's shape inference
   (shapes, the dim map) and the rule; errors are never cached */
static dt_status dt__propagate(dt__call *c, dt_status (*infer)(dt__call *)) {
    uint64_t key[DT__KEY_WORDS];
    dt_mesh *m = c->m;
    dt__entry *e = NULL;
    dt_status st;
    int n = dt__key_build(c, key);
    c->cached = 0;
    if (n) {
        if (!m->ops) {
            size_t bytes = (size_t)DT_OP_CACHE * sizeof(dt__entry);
            if (dt__alloc(c->fn, bytes, (void **)&m->ops) == DT_OK) memset(m->ops, 0, bytes);
        }
        if (m->ops) { /* the slot this op used last (a loop repeats its calls), else the key's own slot */
            e = &m->ops[m->op_last[c->op]];
            c->cached = e->nkey == n && !memcmp(e->key, key, (size_t)n * sizeof key[0]);
            if (!c->cached) {
                unsigned slot = (unsigned)(dt__key_hash(key, n) % DT_OP_CACHE);
                e = &m->ops[slot];
                m->op_last[c->op] = (unsigned short)slot;
                c->cached = e->nkey == n && !memcmp(e->key, key, (size_t)n * sizeof key[0]);
            }
        }
    }
    if (c->cached) {
        if (c->def->family == DT__F_REDUCE) c->out = e->out;
        c->out_public = e->out_public;
        memcpy(c->want, e->want, (size_t)c->nin * sizeof c->want[0]); /* the rows the op has: its key holds nin */
        c->cost = e->cost;
        c->moves = e->moves;
    } else {
        int i;
        if ((st = infer(c)) || (st = dt__shape_fits(c->fn, "the result", c->out.dtype, c->out.ndim, c->out.shape)))
            return st;
        dt__choose(c);
        dt__sizes_unnest(c);
        dt__public_out(c);
        c->moves = 0;
        for (i = 0; i < c->nin; i++)
            if (c->in[i].d && !dt__placements_eq(c->in[i].d->placements, c->want[i], m->ndim)) c->moves |= 1u << i;
        if (e) {
            if (!e->nkey) m->ops_count++;
            memcpy(e->key, key, (size_t)n * sizeof key[0]);
            e->nkey = n;
            e->out = c->out;
            e->out_public = c->out_public;
            memcpy(e->want, c->want, sizeof c->want);
            e->cost = c->cost;
            e->moves = c->moves;
        }
    }
    if (m->explain) dt__explain_line(c, m->explain);
    if (m->rank == 0 && dt__log_on(DT__LOG_OPS)) dt__explain_line(c, stderr);
    return DT_OK;
}

static dt_status dt__explain_body(dt_mesh *m, FILE *f) {
    if (!m) return dt__fail(DT_ERR_ARG, "dt_explain: mesh is NULL");
    m->explain = f;
    return DT_OK;
}
DT_API dt_status dt_explain(dt_mesh *m, FILE *f) { DT__PUBLIC("dt_explain", dt__explain_body(m, f)); }

DT_API int dt_mesh_op_cache_count(const dt_mesh *m) { return m ? m->ops_count : 0; }

/* >>ops -------------------------------------------------------------------
   Each public op fills a dt__call (inputs, static args, scalars) and hands
   it to dt__dispatch, which reads the op's family in dt__families: its
   shape inference (dt__infer_<family>: the result's shape and the dim map,
   run by >>propagate on a strategy-cache miss) and its runner
   (dt__run_<family>: the local kernels on the blocks). dt__dispatch
   propagates (cached), makes or reuses *out, moves the inputs that must
   move into the mesh's input slots and runs the family. An op family is
   one line of DT__FAMILIES (>>registry) and its two functions here, side
   by side. */

/* ---- the call: inputs, arguments, their validation ---- */

static dt_status dt__call_init(dt__call *c, int op, const char *fn) {
    c->op = op;
    c->def = &dt__op_table[op];
    c->fn = fn;
    c->m = NULL;
    c->nin = 0;
    c->narg = 0;
    c->a = c->b = 0;
    c->keep = -1;
    return DT_OK;
}

static void dt__call_arg(dt__call *c, int64_t v) { c->arg[c->narg++] = v; }

/* add input t (may be NULL when `optional`) */
static dt_status dt__call_in(dt__call *c, const dt_tensor *t, const char *name, int optional) {
    dt__in *in = &c->in[c->nin++];
    in->t = t;
    in->name = name;
    in->d = t ? &t->desc : NULL;
    if (!t && !optional) return dt__fail(DT_ERR_ARG, "%s: %s is NULL", c->fn, name);
    return dt__not_pending(c->fn, name, t);
}

/* all inputs on one mesh; a 0-d tensor from another mesh is a replicated scalar */
static dt_status dt__call_mesh(dt__call *c) {
    int i, first = -1;
    for (i = 0; i < c->nin && first < 0; i++)
        if (c->in[i].t && c->in[i].t->desc.ndim > 0) first = i;
    for (i = 0; i < c->nin && first < 0; i++)
        if (c->in[i].t) first = i;
    /* cppcheck-suppress negativeIndex ; first >= 0: every op has a required (non-NULL) first input */
    c->m = c->in[first].t->mesh;
    /* cppcheck-suppress negativeIndex ; as above */
    c->dev = c->in[first].t->dev;
    for (i = 0; i < c->nin; i++) {
        dt__in *in = &c->in[i];
        int k;
        /* strided storage (local_strides, local_ghost) is read in place or copied by dt__move_inputs */
        if (in->t && in->t->dev != c->dev)
            return dt__fail(DT_ERR_DEVICE, "%s: %s is on device %d (%s) but %s is on device %d (%s); move one with "
                            "dt_tensor_from_local(DT_COPY) or dt_tensor_gather", c->fn, c->in[first].name,
                            c->in[first].t->desc.device, c->dev->name, in->name, in->t->desc.device, in->t->dev->name);
        if (!in->t || in->t->mesh == c->m) continue;
        if (in->t->desc.ndim != 0)
            return dt__fail(DT_ERR_MESH, "%s: %s and %s live on different meshes (only a 0-d tensor may come from "
                            "another mesh, as a replicated scalar)", c->fn, c->in[first].name, in->name);
        for (k = 0; k < in->t->mesh->ndim; k++)
            if (in->t->desc.placements[k].kind == DT_PARTIAL)
                return dt__fail(DT_ERR_PLACEMENT, "%s: the scalar %s from another mesh is Partial on it; reduce it "
                                "first", c->fn, in->name);
        if (!in->t->data)
            return dt__fail(DT_ERR_MESH, "%s: the scalar %s from another mesh has no value on this rank", c->fn,
                            in->name);
        in->own = in->t->desc;
        memset(in->own.placements, 0, sizeof in->own.placements);
        in->d = &in->own;
    }
    return DT_OK;
}

static dt_status dt__same_dtype(const dt__call *c, int i, int j) {
    if (!c->in[i].d || !c->in[j].d || c->in[i].d->dtype == c->in[j].d->dtype) return DT_OK;
    return dt__fail(DT_ERR_DTYPE, "%s: %s is %s but %s is %s (convert one with dt_cast)", c->fn, c->in[i].name,
                    dt_dtype_name(c->in[i].d->dtype), c->in[j].name, dt_dtype_name(c->in[j].d->dtype));
}

/* not an integer: the floating dtypes and complex (whose parts are floating;
   the ops complex does not define are refused by dt__complex_allowed) */
static int dt__is_float(dt_dtype t) {
    return t == DT_F32 || t == DT_F64 || t == DT_F16 || t == DT_BF16 || dt__is_complex(t);
}

/* consistency checks of an op (dt__consistent): the op, its static and
   scalar args, each input's spec, the mesh */
static uint64_t dt__call_hash(const dt__call *c) {
    uint64_t h = 14695981039346656037ull, dh;
    int64_t v[3];
    int i;
    v[0] = c->op;
    v[1] = c->nin;
    v[2] = c->narg;
    h = dt__hash(h, v, sizeof v);
    h = dt__hash(h, c->arg, (size_t)c->narg * sizeof c->arg[0]);
    h = dt__hash(h, &c->a, sizeof c->a);
    h = dt__hash(h, &c->b, sizeof c->b);
    h = dt__hash(h, c->m->shape, (size_t)c->m->ndim * sizeof(int));
    if (c->def->family == DT__F_MATMUL) { /* the budget fixes the panels every rank must agree on */
        uint64_t b[2];
        b[0] = (uint64_t)c->m->mm_budget;
        b[1] = dt__env_bytes("DTENSOR_MATMUL_BUDGET", 0);
        h = dt__hash(h, b, sizeof b);
    }
    for (i = 0; i < c->nin; i++) {
        dh = c->in[i].d ? dt__desc_hash(c->in[i].d) : 0xffu;
        h = dt__hash(h, &dh, sizeof dh);
    }
    return h;
}

static void dt__describe_call(const void *ctx, char *buf, size_t cap) {
    const dt__call *c = (const dt__call *)ctx;
    size_t len = 0;
    int i;
    buf[0] = 0;
    for (i = 0; i < c->nin && len < cap; i++) {
        dt__spec_ctx x;
        char one[96];
        x.d = c->in[i].d;
        x.mndim = c->m->ndim;
        x.dst = NULL;
        x.args = x.d ? NULL : "none";
        dt__describe_spec(&x, one, sizeof one);
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", one);
    }
    for (i = 0; i < c->narg && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "; args ", (long long)c->arg[i]);
    if (len < cap && (c->a != 0 || c->b != 0)) len += (size_t)snprintf(buf + len, cap - len, "; a %g, b %g", c->a, c->b);
    if (len < cap && c->def->family == DT__F_MATMUL)
        snprintf(buf + len, cap - len, "; matmul budget %lld (DTENSOR_MATMUL_BUDGET %llu)", (long long)c->m->mm_budget,
                 (unsigned long long)dt__env_bytes("DTENSOR_MATMUL_BUDGET", 0));
}

/* with checks on: a rank whose inputs were refused before dispatch still
   takes part in the check, so the others fail with it instead of waiting */
static dt_status dt__call_refused(const dt__call *c, dt_status st) {
    if (!c->m) return st;
    return dt__consistent(c->m, c->fn, st, 0, NULL, NULL);
}

static dt_status dt__norm_dim(const dt__call *c, const char *what, int dim, int ndim, int *out) {
    int d = dim < 0 ? dim + ndim : dim;
    *out = 0; /* set on every path: callers' -O2 flow analysis cannot see the early return */
    if (d < 0 || d >= ndim)
        return dt__fail(DT_ERR_SHAPE, "%s: %s = %d is out of range for a %d-d tensor", c->fn, what, dim, ndim);
    *out = d;
    return DT_OK;
}

static void dt__out_like(dt__call *c, const dt_tensor_desc *d) {
    memset(&c->out, 0, sizeof c->out);
    c->out.dtype = d->dtype;
    c->out.ndim = d->ndim;
    memcpy(c->out.shape, d->shape, sizeof c->out.shape);
}

static void dt__map_identity(dt__call *c, int i) {
    int d;
    for (d = 0; d < c->in[i].d->ndim; d++) c->dmap[i][d] = (int8_t)d;
}

/* ---- what the runners share ---- */

typedef struct dt__local { /* an input's block on this rank after the moves */
    const void *data;
    dt__box box;
    int ndim;
    const int64_t *stride;      /* element strides (a strided input read in place); NULL: row-major */
} dt__local;

static void dt__strides(const int64_t *ext, int n, int64_t *st) {
    int64_t s = 1;
    int d;
    for (d = n - 1; d >= 0; d--) { st[d] = s; s *= ext[d]; }
}

static size_t dt__prod(const int64_t *e, int from, int to) {
    size_t p = 1;
    int d;
    for (d = from; d < to; d++) p *= (size_t)e[d];
    return p;
}

/* a value of dtype t from a double (addmm's beta), through the kernel cast */
static void dt__scalar_of(dt_dtype t, double v, void *out) { dt__host_kernels.cast(DT_F64, &v, t, out, 1); }

/* the same in the call's memory: a kernel operand (device: the scalar slot) */
static dt_status dt__scalar_on(const dt__call *c, dt_dtype t, double v, char *host, void **out) {
    dt_status st;
    dt__scalar_of(t, v, host);
    *out = host;
    if (dt__on_host(c->dev)) return DT_OK;
    if ((st = dt__scratch_on(c->m, c->dev, DT__SCRATCH_SCALAR, 16, out))) return st;
    return c->dev->copy(c->fn, *out, host, dt_dtype_size(t));
}

/* narrow, cat, stack: box copies between local blocks, in local coordinates */
static void dt__local_array(const dt__local *x, size_t es, dt__array *a) {
    int d;
    a->data = (char *)x->data;
    a->ndim = x->ndim;
    a->es = es;
    a->stride = NULL;
    for (d = 0; d < x->ndim; d++) { a->box.lo[d] = 0; a->box.ext[d] = x->box.ext[d]; }
}

/* ---- unary: elementwise maps; dt_cast ---- */

static dt_status dt__infer_unary(dt__call *c) {
    dt__out_like(c, c->in[0].d);
    if (c->op == DT__OP_CAST) c->out.dtype = (dt_dtype)c->arg[0];
    dt__map_identity(c, 0);
    return DT_OK;
}

static dt_status dt__run_unary(const dt__call *c, const dt__local *x, dt_tensor *o) {
    const dt__kernels *k = c->dev->kernels();
    int64_t idx[DT_MAX_DIMS], n, off = 0;
    size_t xes, oes, rows, r;
    int nd = x->ndim, d;
    if (!x->stride) {
        if (c->op == DT__OP_CAST) k->cast(c->in[0].d->dtype, x->data, o->desc.dtype, o->data, o->numel);
        else k->unary((dt__uop)c->def->kernel, o->desc.dtype, x->data, o->data, o->numel, c->a);
        return DT_OK;
    }
    /* strided x (unit-stride last dim): one kernel call per row into the contiguous result */
    if (!o->numel) return DT_OK;
    xes = dt_dtype_size(c->in[0].d->dtype);
    oes = dt_dtype_size(o->desc.dtype);
    for (d = 0; d < nd; d++) idx[d] = 0;
    n = x->box.ext[nd - 1];
    rows = o->numel / (size_t)n;
    for (r = 0; r < rows; r++) {
        const char *xr = (const char *)x->data + (size_t)off * xes;
        char *orow = (char *)o->data + r * (size_t)n * oes;
        if (c->op == DT__OP_CAST) k->cast(c->in[0].d->dtype, xr, o->desc.dtype, orow, (size_t)n);
        else k->unary((dt__uop)c->def->kernel, o->desc.dtype, xr, orow, (size_t)n, c->a);
        for (d = nd - 2; d >= 0; d--) { /* next row: odometer over the leading dims */
            off += x->stride[d];
            if (++idx[d] < x->box.ext[d]) break;
            off -= x->box.ext[d] * x->stride[d];
            idx[d] = 0;
        }
    }
    return DT_OK;
}

/* ---- binary: elementwise with broadcasting ---- */

static dt_status dt__infer_binary(dt__call *c) {
    const dt_tensor_desc *a = c->in[0].d, *b = c->in[1].d;
    int n = a->ndim > b->ndim ? a->ndim : b->ndim, j;
    char sa[160], sb[160];
    memset(&c->out, 0, sizeof c->out);
    c->out.dtype = a->dtype;
    c->out.ndim = n;
    for (j = 0; j < n; j++) {
        int da = j - (n - a->ndim), db = j - (n - b->ndim);
        int64_t ea = da >= 0 ? a->shape[da] : 1, eb = db >= 0 ? b->shape[db] : 1;
        if (ea != eb && ea != 1 && eb != 1)
            return dt__fail(DT_ERR_SHAPE, "%s: %s %s and %s %s do not broadcast (dim %d: %lld vs %lld)", c->fn,
                            c->in[0].name, dt__shape_str(a->shape, a->ndim, sa, sizeof sa), c->in[1].name,
                            dt__shape_str(b->shape, b->ndim, sb, sizeof sb), dt__tdim(j, n), (long long)ea, (long long)eb);
        c->out.shape[j] = ea == 1 ? eb : ea;
        if (da >= 0) c->dmap[0][da] = (int8_t)(ea == c->out.shape[j] ? j : DT__D_FIXED);
        if (db >= 0) c->dmap[1][db] = (int8_t)(eb == c->out.shape[j] ? j : DT__D_FIXED);
    }
    if (c->keep >= 0 && memcmp(c->out.shape, c->in[c->keep].d->shape, (size_t)n * sizeof(int64_t)))
        return dt__fail(DT_ERR_SHAPE, "%s: %s %s does not broadcast to y %s", c->fn, c->in[0].name,
                        dt__shape_str(a->shape, a->ndim, sa, sizeof sa), dt__shape_str(b->shape, b->ndim, sb, sizeof sb));
    return DT_OK;
}

/* element strides of an operand aligned at the right of the result (0: broadcast) */
static void dt__bcast_strides(const dt__local *x, const int64_t *oext, int n, int64_t *st) {
    int64_t xs[DT_MAX_DIMS];
    int j;
    if (x->stride) memcpy(xs, x->stride, (size_t)x->ndim * sizeof *xs); /* strided storage, read in place */
    else dt__strides(x->box.ext, x->ndim, xs);
    for (j = 0; j < n; j++) {
        int d = j - (n - x->ndim);
        st[j] = d < 0 || (x->box.ext[d] == 1 && oext[j] != 1) ? 0 : xs[d];
    }
}

static int dt__same_ext(const dt__box *a, const dt__box *b, int n) {
    int d;
    for (d = 0; d < n; d++)
        if (a->ext[d] != b->ext[d]) return 0;
    return 1;
}

static dt_status dt__run_binary(const dt__call *c, const dt__local *in, dt_tensor *o) {
    int64_t sa[DT_MAX_DIMS], sb[DT_MAX_DIMS], one = 1, zero = 0;
    int n = o->desc.ndim;
    if (!o->numel) return DT_OK;
    if (n == 0) {
        c->dev->kernels()->binary((dt__bop)c->def->kernel, o->desc.dtype, 1, &one, in[0].data, &zero, in[1].data, &zero,
                            o->data, c->a);
        return DT_OK;
    }
    if (!in[0].stride && !in[1].stride && in[0].ndim == n && in[1].ndim == n && dt__same_ext(&in[0].box, &o->box, n) &&
        dt__same_ext(&in[1].box, &o->box, n)) {
        /* no broadcast, both row-major: one flat row (the common case, without the stride walk) */
        int64_t len = (int64_t)o->numel;
        c->dev->kernels()->binary((dt__bop)c->def->kernel, o->desc.dtype, 1, &len, in[0].data, &one, in[1].data, &one,
                                  o->data, c->a);
        return DT_OK;
    }
    dt__bcast_strides(&in[0], o->box.ext, n, sa);
    dt__bcast_strides(&in[1], o->box.ext, n, sb);
    c->dev->kernels()->binary((dt__bop)c->def->kernel, o->desc.dtype, n, o->box.ext, in[0].data, sa, in[1].data, sb, o->data,
                        c->a);
    return DT_OK;
}

/* ---- reduce: sum, mean, max, min, norm2, argmax over dims ---- */

/* arg[0]: the mask of reduced dims, arg[1]: keepdim */
static dt_status dt__infer_reduce(dt__call *c) {
    const dt_tensor_desc *x = c->in[0].d;
    unsigned mask = (unsigned)c->arg[0];
    int d, j = 0, g = 0;
    memset(&c->out, 0, sizeof c->out);
    c->out.dtype = c->op == DT__OP_ARGMAX ? DT_I64 : x->dtype;
    for (d = 0; d < x->ndim; d++) {
        if (mask >> d & 1u) {
            c->dmap[0][d] = (int8_t)(c->def->reduce < 0 ? DT__D_FIXED : DT__D_GROUP(g));
            g++;
            if (c->arg[1]) c->out.shape[j++] = 1;
        } else {
            c->dmap[0][d] = (int8_t)j;
            c->out.shape[j++] = x->shape[d];
        }
    }
    c->out.ndim = j;
    if (c->op == DT__OP_ARGMAX || c->op == DT__OP_MAX || c->op == DT__OP_MIN)
        for (d = 0; d < x->ndim; d++)
            if ((mask >> d & 1u) && !x->shape[d]) {
                char sh[160];
                return dt__fail(DT_ERR_SHAPE, "%s: x %s: reduced dim %d has size 0 (the %s of nothing is undefined)",
                                c->fn, dt__shape_str(x->shape, x->ndim, sh, sizeof sh), d,
                                c->op == DT__OP_MIN ? "min" : "max");
            }
    return DT_OK;
}

static double dt__reduced_count(const dt__call *c) {
    const dt_tensor_desc *x = c->in[0].d;
    double n = 1;
    int d;
    for (d = 0; d < x->ndim; d++)
        if ((unsigned)c->arg[0] >> d & 1u) n *= (double)x->shape[d];
    return n;
}

/* norm2: sums of squares, Partial where a reduced dim was sharded, are
   reduced into the result, then the square root */
static dt_status dt__run_reduce(const dt__call *c, const dt__local *x, dt_tensor *o) {
    const dt__kernels *k = c->dev->kernels();
    dt_tensor part;
    dt_status st;
    void *buf;
    double scale = c->op == DT__OP_MEAN ? 1.0 / dt__reduced_count(c) : 1.0;
    if (c->op != DT__OP_NORM2 || dt__placements_eq(c->out.placements, c->out_public.placements, c->m->ndim)) {
        k->reduce((dt__rop)c->def->kernel, c->in[0].d->dtype, x->ndim, x->box.ext, (unsigned)c->arg[0], x->data, o->data,
                  scale);
        if (c->op == DT__OP_NORM2) k->unary(DT__U_SQRT, o->desc.dtype, o->data, o->data, o->numel, 0);
        return DT_OK;
    }
    if ((st = dt__scratch_on(c->m, c->dev, DT__SCRATCH_TMP, o->bytes, &buf))) return st;
    dt__tensor_view(o, &c->out, buf, &part);
    k->reduce(DT__R_SUMSQ, c->in[0].d->dtype, x->ndim, x->box.ext, (unsigned)c->arg[0], x->data, buf, 1.0);
    if ((st = dt__redistribute_into(&part, c->out_public.placements, o->data))) return st;
    k->unary(DT__U_SQRT, o->desc.dtype, o->data, o->data, o->numel, 0);
    return DT_OK;
}

/* ---- matmul: matmul, mm, bmm, addmm, linear, dot ---- */

/* matmul family. arg[0]: 1 when b is a linear weight [out,in] (used transposed).
   a: [...,m,k] or [k]; b: [...,k,n] or [k]; c (addmm) broadcasts to [m,n];
   bias (linear) is [n]. Batch dims broadcast. */
static dt_status dt__infer_matmul(dt__call *c) {
    const dt_tensor_desc *a = c->in[0].d, *b = c->in[1].d;
    int wt = (int)c->arg[0], na = a->ndim, nb = b->ndim, ba, bb, nbatch, j, ka, kb;
    int64_t K1, K2;
    char s1[160], s2[160];
    if (na < 1 || nb < 1 || (wt && nb != 2))
        return dt__fail(DT_ERR_SHAPE, "%s: %s is %d-d and %s is %d-d; %s", c->fn, c->in[0].name, na, c->in[1].name, nb,
                        wt ? "the weight must be 2-D [out, in]" : "both need at least 1 dim");
    ka = na - 1;
    kb = wt ? 1 : (nb == 1 ? 0 : nb - 2);
    K1 = a->shape[ka];
    K2 = b->shape[kb];
    if (K1 != K2)
        return dt__fail(DT_ERR_SHAPE, "%s: inner dims differ: %s %s has %lld, %s %s has %lld", c->fn, c->in[0].name,
                        dt__shape_str(a->shape, na, s1, sizeof s1), (long long)K1, c->in[1].name,
                        dt__shape_str(b->shape, nb, s2, sizeof s2), (long long)K2);
    ba = na >= 2 ? na - 2 : 0;
    bb = wt || nb < 2 ? 0 : nb - 2;
    nbatch = ba > bb ? ba : bb;
    memset(&c->out, 0, sizeof c->out);
    c->out.dtype = a->dtype;
    for (j = 0; j < nbatch; j++) {
        int da = j - (nbatch - ba), db = j - (nbatch - bb);
        int64_t ea = da >= 0 ? a->shape[da] : 1, eb = db >= 0 ? b->shape[db] : 1;
        if (ea != eb && ea != 1 && eb != 1)
            return dt__fail(DT_ERR_SHAPE, "%s: batch dims of %s %s and %s %s do not broadcast", c->fn, c->in[0].name,
                            dt__shape_str(a->shape, na, s1, sizeof s1), c->in[1].name,
                            dt__shape_str(b->shape, nb, s2, sizeof s2));
        c->out.shape[j] = ea == 1 ? eb : ea;
        if (da >= 0) c->dmap[0][da] = (int8_t)(ea == c->out.shape[j] ? j : DT__D_FIXED);
        if (db >= 0) c->dmap[1][db] = (int8_t)(eb == c->out.shape[j] ? j : DT__D_FIXED);
    }
    j = nbatch;
    if (na >= 2) { c->dmap[0][na - 2] = (int8_t)j; c->out.shape[j++] = a->shape[na - 2]; }
    c->dmap[0][ka] = (int8_t)DT__D_GROUP(0);
    c->dmap[1][kb] = (int8_t)DT__D_GROUP(0);
    if (wt) { c->dmap[1][0] = (int8_t)j; c->out.shape[j++] = b->shape[0]; }
    else if (nb >= 2) { c->dmap[1][nb - 1] = (int8_t)j; c->out.shape[j++] = b->shape[nb - 1]; }
    c->out.ndim = j;
    if (c->nin > 2 && c->in[2].d) { /* bias / addmm's c: broadcast against the result's last two dims */
        const dt_tensor_desc *e = c->in[2].d;
        int n = c->out.ndim, d;
        if (e->ndim > (n < 2 ? n : 2) || (wt && e->ndim != 1))
            return dt__fail(DT_ERR_SHAPE, "%s: %s %s does not broadcast to the result %s", c->fn, c->in[2].name,
                            dt__shape_str(e->shape, e->ndim, s1, sizeof s1),
                            dt__shape_str(c->out.shape, n, s2, sizeof s2));
        for (d = 0; d < e->ndim; d++) {
            int jo = n - e->ndim + d;
            if (e->shape[d] != c->out.shape[jo] && e->shape[d] != 1)
                return dt__fail(DT_ERR_SHAPE, "%s: %s %s does not broadcast to the result %s", c->fn, c->in[2].name,
                                dt__shape_str(e->shape, e->ndim, s1, sizeof s1),
                                dt__shape_str(c->out.shape, n, s2, sizeof s2));
            c->dmap[2][d] = (int8_t)(e->shape[d] == c->out.shape[jo] ? jo : DT__D_FIXED);
        }
    }
    return DT_OK;
}

/* o = the product of the blocks in[0] and in[1] (+ the bias or beta*c of
   in[2]); acc: o += the product instead (a streamed panel after the first,
   >>ops' SUMMA below). a and b may be strided (a panel read in place). */
static dt_status dt__matmul_blocks(const dt__call *c, const dt__local *in, dt_tensor *o, int acc) {
    const dt__kernels *k = c->dev->kernels();
    const dt__local *a = &in[0], *b = &in[1];
    dt_dtype t = o->desc.dtype;
    size_t es = dt_dtype_size(t);
    int wt = (int)c->arg[0], na = a->ndim, nb = b->ndim, nbatch = 0, j;
    int64_t M = na >= 2 ? a->box.ext[na - 2] : 1, K = a->box.ext[na - 1];
    int64_t N = wt ? b->box.ext[0] : (nb >= 2 ? b->box.ext[nb - 1] : 1);
    int64_t rsa = K, csa = 1, rsb = wt ? 1 : N, csb = wt ? K : 1;
    int64_t bext[DT_MAX_DIMS], sa[DT_MAX_DIMS], sb[DT_MAX_DIMS], idx[DT_MAX_DIMS];
    double beta = 0;
    size_t nb_out, e;
    dt__local av = *a, bv = *b;
    dt_status st;
    if (!o->numel) return DT_OK;
    /* batch dims: the result's dims before m, n */
    nbatch = o->desc.ndim - (na >= 2) - (wt || nb >= 2);
    memcpy(bext, o->box.ext, sizeof bext);
    av.ndim = na >= 2 ? na - 2 : 0;
    bv.ndim = wt || nb < 2 ? 0 : nb - 2;
    dt__bcast_strides(&av, bext, nbatch, sa);
    dt__bcast_strides(&bv, bext, nbatch, sb);
    for (j = 0; j < nbatch; j++) { /* (strided: already in elements) */
        if (!a->stride) sa[j] *= M * K;
        if (!b->stride) sb[j] *= K * N;
    }
    /* (a 1-row a or 1-column b: the unused stride as if the rows were packed) */
    if (a->stride) { csa = a->stride[na - 1]; rsa = na >= 2 ? a->stride[na - 2] : csa * K; }
    if (b->stride) {
        rsb = wt ? b->stride[1] : nb >= 2 ? b->stride[nb - 2] : b->stride[0];
        csb = wt ? b->stride[0] : nb >= 2 ? b->stride[nb - 1] : rsb * K;
    }
    if (acc) beta = 1;
    else if (c->nin > 2 && in[2].data) { /* start from the bias / beta*c, then accumulate */
        int64_t oe[2], sc[2], zero[2] = {0, 0}, rows = (int64_t)(o->numel / (size_t)(M * N));
        char bs[16];
        void *beta_v = NULL;
        dt__local cv = in[2];
        oe[0] = M; oe[1] = N;
        dt__bcast_strides(&cv, oe, 2, sc);
        if ((st = dt__scalar_on(c, t, c->op == DT__OP_ADDMM ? c->b : 1.0, bs, &beta_v))) return st;
        for (e = 0; e < (size_t)rows; e++)
            k->binary(DT__B_MUL, t, 2, oe, cv.data, sc, beta_v, zero, (char *)o->data + e * (size_t)(M * N) * es, 0);
        beta = 1;
    }
    nb_out = dt__prod(o->box.ext, 0, nbatch);
    for (j = 0; j < nbatch; j++) idx[j] = 0;
    for (e = 0; e < nb_out; e++) {
        int64_t oa = 0, ob = 0;
        for (j = 0; j < nbatch; j++) { oa += idx[j] * sa[j]; ob += idx[j] * sb[j]; }
        /* K == 0: a and b are empty (data may be NULL; no offset on NULL) */
        st = k->gemm(t, M, N, K, c->op == DT__OP_ADDMM ? c->a : 1.0, K ? (const char *)a->data + (size_t)oa * es : a->data,
                     rsa, csa, K ? (const char *)b->data + (size_t)ob * es : b->data, rsb, csb, beta,
                     (char *)o->data + e * (size_t)(M * N) * es, N, 1);
        if (st) return st;
        for (j = nbatch - 1; j >= 0; j--) {
            if (++idx[j] < bext[j]) break;
            idx[j] = 0;
        }
    }
    return DT_OK;
}

DT__MAYBE_UNUSED static dt_status dt__run_matmul(const dt__call *c, const dt__local *in, dt_tensor *o) {
    return dt__matmul_blocks(c, in, o, 0);
}

/* ---- matmul streamed over the mesh (SUMMA) ----
   When the chosen strategy gathers an operand's contracted dim k over a
   mesh dim (a [S(0), S(1)] x [S(0), S(1)] on a 2-D mesh: a's k over mesh
   dim 1, b's over mesh dim 0; a 1-D mesh whose b is split along k), the
   gathered blocks are never formed: k runs in panels. Panel [k0, k0 + w)
   lies inside one owner's part of each gathered operand (the parts'
   boundaries, one-span or block-cyclic, cut the k range into segments;
   each segment into panels of at most w); the owner packs its slice of
   the panel from its storage (any strides) and sends it to the other
   ranks of its mesh-dim row, one message each, started with the comm's
   split-phase start/wait (MPI_Isend/Irecv, NCCL's grouped send/recv), so
   that panel p+1 moves while panel p multiplies into the output block.
   An operand that does not move is packed from its own block. Working
   memory: nbuf (2: double-buffered, 1 when two panels of DT__MM_KALIGN
   do not fit; dt__summa_width) panels of a
   and b, sized by the budget (dt_mesh_set_matmul_budget), allocated for
   the call and freed at its end: nothing is held by the mesh after it.
   Every rank derives the panels from the global layout alone (the width
   from the largest rank's panel), so all agree without a message, and a
   budget too small for a panel of width 1 is refused on every rank
   before anything moves. */

#define DT__MM_FLOOR ((size_t)64 << 10)  /* the default budget is never below this */
#define DT__MM_SMALL ((size_t)256 << 10) /* gathered bytes under which gathering wins (latency) */
/* The depth of k a BLAS kernel takes in one pass over its block of the
   result (BLIS's KC: 256 in its generic, Haswell, Zen and SKX configs;
   OpenBLAS's GEMM_Q is 256-384). A GEMM costs one pass per started KC of
   its k, and a pass's fixed part (loading and storing the result's
   micro-tiles) is large: k = 1024 in panels of 192 takes 6 passes where
   one call takes 4 (+14 % instructions through BLIS's generic kernel).
   So panels are whole multiples of it where the budget allows one. */
#define DT__MM_KALIGN 256

typedef struct dt__summa {
    int g[2];           /* the mesh dim operand i's k is gathered over; -1: held whole */
    int kd[2];          /* operand i's contracted dim */
    dt_placement pk[2]; /* its k placement on mesh dim g[i] */
    int64_t K, w;       /* the contracted extent; the widest panel */
    int nbuf;           /* panels in flight: 2 (double-buffered) or 1 */
    dt__box box[2];     /* operand i's block on this rank once gathered (k whole) */
    int64_t st[2][DT_MAX_DIMS]; /* the element strides of operand i's storage */
    size_t unit[2];     /* its panel's bytes per unit of width, on this rank */
    size_t budget, work, gathered; /* bytes: the budget; a rank's most working bytes
                                      streamed; gathered */
    int L, nl, li;      /* 2.5D: the mesh dim whose copies (layers) split k (-1: none),
                           their count (1: none) and this rank's layer */
    int64_t rot;        /* where this rank starts k (dt__summa_rotate; k wraps to 0 at K) */
    int defer;          /* 1: sends from the rank's storage are waited for at the end */
    double rsum, csum;  /* bytes over all ranks: the panels they receive without
                           layers; their result blocks */
    double fsum;        /* flops over all ranks, without layers */
    double bound;       /* this rank's lower bound on the bytes it receives */
    int shared;         /* 1: every panel read in place from its owner's segment of the
                           node's shared arena (dt__summa_share): no message, no buffer */
    int64_t *pub;       /* then every mesh rank's words (dt__summa_share): per operand,
                           its block's offset in the rank's segment and its strides */
} dt__summa;

typedef struct dt__summa_panel {
    int64_t k0, w;      /* [k0, k0 + w) of k */
    int owner[2];       /* the coordinate on mesh dim g[i] holding it (g[i] < 0: this rank) */
    int64_t lk[2];      /* where it starts in the owner's block */
} dt__summa_panel;

/* a three-way environment choice, read once into *state: 1 for `one`,
   2 for `two`, 0 otherwise (auto) */
static int dt__env_choice(int *state, const char *name, const char *one, const char *two) {
    if (*state < 0) {
        const char *e = getenv(name);
        *state = e && !strcmp(e, one) ? 1 : e && !strcmp(e, two) ? 2 : 0;
    }
    return *state;
}

/* DTENSOR_MATMUL=stream|gather|auto (default auto) */
static int dt__mm_mode_state = -1;
static int dt__mm_mode(void) { return dt__env_choice(&dt__mm_mode_state, "DTENSOR_MATMUL", "stream", "gather"); }

static size_t dt__box_bytes(int ndim, const dt__box *b, size_t es) { return dt__box_numel(ndim, b) * es; }

/* Is the strategy a gather of k that streams? Each of a, b either keeps its
   placements or differs on one mesh dim only, Shard(k) -> Replicate; k
   is sharded nowhere once moved (the result is not Partial over k); both
   in the comm's memory. */
static int dt__summa_applies(const dt__call *c, dt__summa *s) {
    int i, j, cd = c->m->comm->root->be.device, any = 0;
    if (c->def->family != DT__F_MATMUL || !(c->moves & 3u) || c->m->rank < 0) return 0;
    if (cd != DT_ANY_MEMORY && cd != c->in[0].d->device) return 0;
    s->kd[0] = c->in[0].d->ndim - 1;
    s->kd[1] = c->arg[0] ? 1 : c->in[1].d->ndim == 1 ? 0 : c->in[1].d->ndim - 2;
    s->K = c->in[0].d->shape[s->kd[0]];
    if (s->K <= 0) return 0;
    for (i = 0; i < 2; i++) {
        const dt_tensor *t = c->in[i].t;
        s->g[i] = -1;
        if (!t || t->mesh != c->m) return 0;
        for (j = 0; j < c->m->ndim; j++) {
            dt_placement p = t->desc.placements[j], q = c->want[i][j];
            if (q.kind == DT_SHARD && q.dim == s->kd[i]) return 0;
            if (dt__placement_eq(p, q)) continue;
            if (p.kind != DT_SHARD || p.dim != s->kd[i] || q.kind != DT_REPLICATE || s->g[i] >= 0) return 0;
            any = 1;
            if (c->m->shape[j] == 1) continue; /* one part: k is whole here already (read in place) */
            s->g[i] = j;
            s->pk[i] = p;
        }
    }
    return any;
}

/* the budget: the mesh's (dt_mesh_set_matmul_budget), else
   DTENSOR_MATMUL_BUDGET, else a quarter of the largest rank's a + b + c
   shard bytes, at least DT__MM_FLOOR */
static size_t dt__summa_budget(const dt__call *c, size_t shards) {
    size_t q;
    if (c->m->mm_budget > 0) return (size_t)c->m->mm_budget;
    q = dt__env_bytes("DTENSOR_MATMUL_BUDGET", 0);
    if (q) return q;
    q = shards / 4;
    return q > DT__MM_FLOOR ? q : DT__MM_FLOOR;
}

/* A lower bound on the bytes a rank receives in a product of K-long dot
   products over the result's elements, when each rank does its 1/p share
   of them (F multiply-adds) and starts with `held` bytes of a, b and the
   result: by the Loomis-Whitney inequality F products touch at least
   3 F^(2/3) elements of a, b and the result together; those not held
   must arrive. (The memory-independent bound of Ballard et al., and of
   COSMA for ample memory; SUMMA on a q x q mesh moves 2 n^2 / q per rank
   against its 3 n^2 / q^(4/3) - 3 n^2 / q^2.) */
static double dt__matmul_bound(const dt__call *c, int64_t K, size_t held, size_t es) {
    double f = (double)dt__prod(c->out_public.shape, 0, c->out_public.ndim) * (double)K / (double)c->m->size;
    double w = 3.0 * pow(f, 2.0 / 3.0) * (double)es - (double)held;
    return w > 0 ? w : 0;
}

/* The widest panel and the buffers per operand, for panels of umax bytes
   per unit of width on the largest rank: double-buffered in whole
   multiples of DT__MM_KALIGN where two fit the budget; else one buffer of
   DT__MM_KALIGN where that fits (a narrower panel costs more passes of the
   GEMM than the overlap gives back: the exchanges are a few per cent of
   the GEMM at any n where streaming is chosen; and a panel read in place
   from the rank's own block still moves while the one before multiplies,
   dt__summa_run); else as wide as two fit, or one. */
static void dt__summa_width(dt__summa *s, size_t umax) {
    int64_t w2 = umax ? (int64_t)(s->budget / (2 * umax)) : 0, w1 = umax ? (int64_t)(s->budget / umax) : 0;
    s->nbuf = 2;
    if (!umax) s->w = s->K; /* nothing moves (one-rank mesh dims): no buffer */
    else if (w2 >= DT__MM_KALIGN) s->w = w2 / DT__MM_KALIGN * DT__MM_KALIGN;
    else if (w1 >= DT__MM_KALIGN) { s->nbuf = 1; s->w = DT__MM_KALIGN; }
    else if (w2 >= 1) s->w = w2;
    else { s->nbuf = 1; s->w = w1; }
}

/* Sizes over every rank of the mesh, from the layouts alone: the largest
   panel unit and shards fix the width, the same on every rank. */
static void dt__summa_size(const dt__call *c, dt__summa *s) {
    const dt_mesh *m = c->m;
    size_t es = dt_dtype_size(c->in[0].d->dtype), umax = 0, shards = 0, gmax = 0;
    int r, i, coord[DT_MAX_MESH_DIMS];
    s->rsum = s->csum = s->fsum = 0;
    s->L = -1;
    s->nl = 1;
    s->li = 0;
    for (r = 0; r < m->size; r++) {
        size_t u = 0, sh = 0, gb = 0, own = 0, cb;
        dt__box b;
        dt__mesh_coord_of(m, r, coord);
        for (i = 0; i < 2; i++) {
            const dt_tensor_desc *d = c->in[i].d;
            size_t held;
            dt__layout_box(d->ndim, d->shape, m->ndim, m->shape, coord, c->want[i], &b);
            if (r == m->rank) s->box[i] = b;
            if (s->g[i] >= 0) gb += dt__box_bytes(d->ndim, &b, es);
            b.ext[s->kd[i]] = 1;
            if (s->g[i] >= 0) u += dt__box_bytes(d->ndim, &b, es); /* (one held whole is read in place) */
            if (r == m->rank) s->unit[i] = dt__box_bytes(d->ndim, &b, es);
            dt__layout_box(d->ndim, d->shape, m->ndim, m->shape, coord, d->placements, &b);
            held = dt__box_bytes(d->ndim, &b, es);
            sh += held;
            if (s->g[i] >= 0) own += held;
        }
        dt__layout_box(c->out_public.ndim, c->out_public.shape, m->ndim, m->shape, coord, c->out_public.placements, &b);
        cb = dt__box_bytes(c->out_public.ndim, &b, es);
        sh += cb;
        s->rsum += (double)(gb - own); /* (received: the gathered blocks beyond the shards) */
        s->csum += (double)cb;
        s->fsum += 2.0 * (double)cb / (double)es * (double)s->K * (dt__is_complex(c->in[0].d->dtype) ? 4 : 1);
        if (r == m->rank) s->bound = dt__matmul_bound(c, s->K, sh, es);
        if (u > umax) umax = u;
        if (sh > shards) shards = sh;
        if (gb > gmax) gmax = gb;
    }
    s->budget = dt__summa_budget(c, shards);
    s->gathered = gmax;
    dt__summa_width(s, umax);
    for (i = 0; i < 2; i++) { /* no panel is wider than the widest part */
        int64_t part = s->K, off, len;
        int cc, n = s->g[i] >= 0 ? m->shape[s->g[i]] : 1;
        if (s->g[i] >= 0 && s->pk[i].split == DT_SPLIT_CYCLIC) part = s->pk[i].block;
        else if (s->g[i] >= 0)
            for (cc = 0, part = 0; cc < n; cc++) {
                dt__split_span(s->K, n, cc, &s->pk[i], &off, &len);
                if (len > part) part = len;
            }
        if (s->w > part) s->w = part;
    }
    if (s->nbuf == 1 && umax && (size_t)s->w <= s->budget / (2 * umax)) s->nbuf = 2; /* (narrowed: two fit) */
    s->work = (size_t)s->nbuf * umax * (size_t)(s->w > 0 ? s->w : 1);
}

/* the part of k holding position k0 under operand i's split: its end (the
   return) and start, its owner on mesh dim g[i], k0's place in its block */
static int64_t dt__summa_part(const dt__summa *s, const dt_mesh *m, int i, int64_t k0, int *owner, int64_t *lk,
                              int64_t *start) {
    const dt_placement *p = &s->pk[i];
    int n;
    if (s->g[i] < 0) { *owner = 0; *lk = k0; *start = 0; return s->K; }
    n = m->shape[s->g[i]];
    if (p->split == DT_SPLIT_CYCLIC) {
        int64_t blk = k0 / p->block;
        *owner = (int)((blk % n + p->src) % n);
        *lk = blk / n * p->block + k0 % p->block;
        *start = blk * p->block;
        return dt__end_clamped(blk * p->block, p->block, s->K);
    } else {
        int64_t off, len;
        *owner = dt__split_find(s->K, n, p, k0);
        dt__split_span(s->K, n, *owner, p, &off, &len);
        *lk = k0 - off;
        *start = off;
        return off + len;
    }
}

/* the segment of k holding k0: the stretch [*lo, return) where neither
   operand's owner changes */
static int64_t dt__summa_segment(const dt__summa *s, const dt_mesh *m, int64_t k0, dt__summa_panel *pn, int64_t *lo) {
    int64_t b0, b1, e0 = dt__summa_part(s, m, 0, k0, &pn->owner[0], &pn->lk[0], &b0);
    int64_t e1 = dt__summa_part(s, m, 1, k0, &pn->owner[1], &pn->lk[1], &b1);
    *lo = b0 > b1 ? b0 : b1;
    return e0 < e1 ? e0 : e1;
}

/* this rank's next panel at or after k; 0: none left. Each segment is cut
   into nl near-equal sub-ranges, layer li taking the li-th (no layers: the
   segment whole), and the rest of the sub-range from k into panels of w
   rounded down to a multiple of DT__MM_KALIGN, the remainder last (or,
   under a budget narrower than DT__MM_KALIGN, ceil(len / w) near-equal
   panels). */
static int dt__summa_next(const dt__summa *s, const dt_mesh *m, int64_t k, dt__summa_panel *pn) {
    while (k < s->K) {
        int64_t lo, hi = dt__summa_segment(s, m, k, pn, &lo), len = hi - lo, np;
        int64_t sub0 = lo + len * s->li / s->nl, sub1 = lo + len * (s->li + 1) / s->nl;
        if (k >= sub1) { k = hi; continue; }
        if (k < sub0) { k = sub0; continue; }
        np = dt__ceil_div(sub1 - k, s->w);
        pn->k0 = k;
        /* (whole multiples of DT__MM_KALIGN, the rest last: the fewest GEMM passes) */
        if (s->w >= DT__MM_KALIGN) pn->w = sub1 - k <= s->w ? sub1 - k : s->w / DT__MM_KALIGN * DT__MM_KALIGN;
        else pn->w = dt__ceil_div(sub1 - k, np);
        return 1;
    }
    return 0;
}

/* is operand i's block on this rank one stretch per index of k (its
   slice of a panel sent from its storage as is)? */
static int dt__summa_flat(const dt__summa *s, const dt_tensor *t, int i) {
    int d, flat = !t->strided && !t->ghosted;
    for (d = 0; d < s->kd[i]; d++) flat = flat && t->box.ext[d] == 1;
    return flat;
}

/* this rank's panel after x (x NULL: its first), in its order: from
   s->rot to K, then from 0 to s->rot (a part's start: no panel crosses it);
   0: none left */
static int dt__summa_following(const dt__summa *s, const dt_mesh *m, const dt__summa_panel *x, dt__summa_panel *pn) {
    int64_t k = x ? x->k0 + x->w : s->rot;
    int first_pass = !x || x->k0 >= s->rot;
    if (first_pass && dt__summa_next(s, m, k, pn)) return 1;
    if (first_pass) k = 0;
    return dt__summa_next(s, m, k, pn) && pn->k0 < s->rot;
}

/* Where this rank starts k. With one operand moving, in one span of k per
   owner, over the library's MPI backend (any number of messages in flight,
   matched in the order posted): at its own part. Every rank then
   multiplies what it holds first while the others' parts wait for it
   (the sends complete at the end, s->defer), instead of the owner of the
   first part running ahead while the others receive, and its receiving
   coming after theirs (their copies and its own in a row: +2-5 % at 2
   ranks). Each owner's panels still go out in k order, as each receiver
   takes them. Else at 0, every rank in one order: NCCL runs each rank's
   messages in stream order, a backend without start/wait in blocking
   rounds, a block-cyclic owner holds several spans, and an owner whose
   slices are packed to be sent waits for each before its buffer is
   reused (with every rank on its own part first, for ever). */
static void dt__summa_rotate(const dt__call *c, dt__summa *s) {
    int i = s->g[0] >= 0 ? 0 : 1;
    dt_comm *dc = s->g[i] >= 0 ? c->m->dim[s->g[i]] : NULL;
    int64_t off, len;
    s->rot = 0;
    s->defer = !s->shared && dt__comm_ordered_messages(c->m->comm);
    if (!dc || !(s->defer || s->shared)) return;
    if ((s->g[0] >= 0) == (s->g[1] >= 0) || s->L >= 0 || s->pk[i].split == DT_SPLIT_CYCLIC ||
        !(s->shared || dt__summa_flat(s, c->in[i].t, i)))
        return;
    dt__split_span(s->K, dc->size, dc->rank, &s->pk[i], &off, &len);
    s->rot = off;
}

/* the element strides of operand i's storage on this rank, into s->st[i] */
static void dt__summa_strides(const dt__call *c, dt__summa *s) {
    int i;
    for (i = 0; i < 2; i++) {
        const dt_tensor *t = c->in[i].t;
        if (t->strided || t->ghosted) memcpy(s->st[i], t->stride, (size_t)t->desc.ndim * sizeof t->stride[0]);
        else dt__strides(t->box.ext, t->desc.ndim, s->st[i]);
    }
}

/* the words mesh rank r published for operand i (dt__summa_share) */
static const int64_t *dt__summa_words(const dt__call *c, const dt__summa *s, int r, int i) {
    int k = 2 + c->in[0].d->ndim + c->in[1].d->ndim;
    return s->pub + (size_t)r * (size_t)k + (i ? 1 + c->in[0].d->ndim : 0);
}

static long dt__summa_in_place = 0; /* streamed products read in place from the arena (read by the tests) */
static long dt__summa_calls = 0;    /* streamed products (read by the tests) */

/* Read in place? On a mesh with a shared arena (>>backend's shm: every
   rank's segment mapped into every rank), a host product whose moving
   operands lie in the arena on every rank needs neither messages nor
   buffers: each panel is read by the GEMM straight from its owner's
   storage, through the owner's strides. Every rank publishes, per operand,
   its block's offset in its segment (-1: outside; an empty block: 0, it is
   never read) and its strides, in one small allgather (dt__comm_shm_begin,
   after which every owner's stores are visible); the verdict comes from
   the same gathered words on every rank. The owners then keep their
   storage unchanged until the end of the product: dt__summa_run_shared
   ends on dt__comm_shm_end's barrier. The panels are whole segments (one
   GEMM per owner's part: no panel costs an extra pass). */
static dt_status dt__summa_share(const dt__call *c, dt__summa *s) {
    dt_mesh *m = c->m;
    int k = 2 + c->in[0].d->ndim + c->in[1].d->ndim, i, d, r, ok = 1;
    int64_t mine[2 + 2 * DT_MAX_DIMS];
    dt_status st;
    s->shared = 0;
    s->pub = NULL;
    if (!m->shm || !dt__on_host(c->dev) || m->size < 2) return DT_OK;
    for (i = 0, d = 0; i < 2; i++) {
        const dt_tensor *t = c->in[i].t;
        int j;
        mine[d++] = !t->numel || s->g[i] < 0 ? 0 : dt__shm_owns(m->shm, t->data) ? (int64_t)((const char *)t->data - m->shm->mine) : -1;
        for (j = 0; j < t->desc.ndim; j++) mine[d++] = s->st[i][j];
    }
    if ((st = dt__alloc(c->fn, (size_t)m->size * (size_t)k * sizeof *s->pub, (void **)&s->pub))) return st;
    if ((st = dt__comm_shm_begin(m->shm, m->comm, mine, k, s->pub))) { DT_FREE(s->pub); s->pub = NULL; return st; }
    for (r = 0; r < m->size; r++)
        for (i = 0; i < 2; i++) ok = ok && dt__summa_words(c, s, r, i)[0] >= 0;
    if (!ok) { /* (the same verdict on every rank: the messages' way, after one allgather) */
        DT_FREE(s->pub);
        s->pub = NULL;
        return DT_OK;
    }
    s->shared = 1;
    s->w = s->K;
    s->nbuf = 0;
    s->work = 0;
    dt__summa_in_place++;
    return DT_OK;
}

/* DTENSOR_MATMUL_LAYERS=on|off|auto (default auto) */
static int dt__mm_layers_state = -1;
static int dt__mm_layers_mode(void) {
    return dt__env_choice(&dt__mm_layers_state, "DTENSOR_MATMUL_LAYERS", "on", "off");
}

/* a byte moved between ranks costs about the time of this many flops on a
   rank (a core's GEMM at tens of GFLOP/s against its share of the links;
   a GPU's ratio is higher): the exchange rate of the layers' cost model */
#define DT__MM_FLOPS_PER_BYTE 16.0

/* 2.5D. A mesh dim over which a, b and the result are all Replicate holds
   nl copies of one product. Instead of each copy computing it whole, the
   copies (layers) split every segment of k (dt__summa_next): each streams
   and multiplies its share of the panels, and the result blocks are summed
   over the dim. The memory is the replicated operands the program already
   holds; the result block is held by every layer anyway. Per rank, the
   panels received drop from R to R / nl bytes and the flops from F to
   F / nl; the sum adds 2 (nl - 1) / nl of the result block's C bytes (an
   allreduce: reduce-scatter and allgather). In bytes, with a flop worth
   1 / DT__MM_FLOPS_PER_BYTE of one, layers pay when
   (R + F / DT__MM_FLOPS_PER_BYTE) (nl - 1) / nl >= 2 C (nl - 1) / nl,
   totals over all ranks (the same on each): that is, unless k is short.
   The largest such dim is taken; each layer must have a panel (a segment
   at least nl long). DTENSOR_MATMUL_LAYERS=on|off forces the choice. */
static void dt__summa_layers(const dt__call *c, dt__summa *s) {
    const dt_mesh *m = c->m;
    int j, mode = dt__mm_layers_mode(), coord[DT_MAX_MESH_DIMS];
    int64_t k = 0, longest = 0;
    dt__summa_panel pn;
    /* (dt__summa_size set no layers: L = -1, nl = 1, li = 0) */
    if (mode == 2 || (mode == 0 && s->rsum + s->fsum / DT__MM_FLOPS_PER_BYTE < 2 * s->csum)) return;
    for (j = 0; j < m->ndim; j++)
        if (m->shape[j] > 1 && j != s->g[0] && j != s->g[1] && c->want[0][j].kind == DT_REPLICATE &&
            c->want[1][j].kind == DT_REPLICATE && c->out_public.placements[j].kind == DT_REPLICATE &&
            (s->L < 0 || m->shape[j] > m->shape[s->L]))
            s->L = j;
    if (s->L < 0) return;
    while (k < s->K) { /* (one pass over the owners' parts) */
        int64_t lo, hi = dt__summa_segment(s, m, k, &pn, &lo);
        if (hi - lo > longest) longest = hi - lo;
        k = hi;
    }
    if (longest < m->shape[s->L]) { s->L = -1; return; }
    dt__mesh_coord_of(m, m->rank, coord);
    s->nl = m->shape[s->L];
    s->li = coord[s->L];
}

static long dt__summa_layered = 0; /* layered products (read by the tests) */

/* the layers' result blocks summed over their mesh dim (F16/BF16 in F32
   unless the backend reduces them, in a buffer of the call) */
static dt_status dt__summa_layers_sum(const dt__call *c, const dt__summa *s, dt_tensor *o) {
    dt_comm *g = c->m->dim[s->L];
    dt_dtype t = o->desc.dtype;
    size_t n = o->numel;
    int half = dt__dtype_is_half(t) && !g->root->be.native_half;
    int dev_mpi = !dt__on_host(c->dev) && c->m->comm->root->be.device == DT_ANY_MEMORY;
    float *f = NULL;
    dt_status st;
    if (half) {
        if ((st = c->dev->alloc(c->fn, n * sizeof(float) + 1, (void **)&f))) return st;
        dt__dev_cast(c->dev, t, o->data, DT_F32, f, n);
    }
    /* the device's queued GEMMs (and cast) are done before a CUDA-aware MPI reads */
    st = dev_mpi ? c->dev->sync(c->fn) : DT_OK;
    if (!st) st = half ? dt__comm_allreduce(g, f, f, n, DT_F32, DT_SUM) : dt__comm_allreduce(g, o->data, o->data, n, t, DT_SUM);
    if (!st && half) dt__dev_cast(c->dev, DT_F32, f, t, o->data, n);
    if (half) c->dev->free(f);
    if (!st) dt__summa_layered++;
    return st;
}

/* operand i's panel as an array: its gathered block with k cut to the panel */
static void dt__summa_panel_box(const dt__summa *s, int i, const dt__summa_panel *pn, dt__box *b) {
    *b = s->box[i];
    b->lo[s->kd[i]] = pn->k0;
    b->ext[s->kd[i]] = pn->w;
}

typedef struct dt__summa_slot {
    void *buf[2];       /* a's and b's panel, packed */
    const void *read[2];         /* where the GEMM reads them: buf, or the owner's storage */
    const int64_t *rstride[2];   /* its strides there (NULL: buf, packed) */
    void *req[2];       /* their exchanges in flight (NULL: none) */
    dt_comm *comm[2];
    dt_message *msgs[2]; /* their messages (a row's ranks less one, at most) */
    int stored[2];      /* 1: req[i] only sends, from the rank's storage (not buf) */
    dt__summa_panel pn;
} dt__summa_slot;

/* sends from storage in flight past their panel's GEMM (s->defer) */
#define DT__SUMMA_SENDS 16
typedef struct dt__summa_send {
    dt_comm *comm;
    void *req;
} dt__summa_send;
typedef struct dt__summa_sends {
    dt__summa_send e[DT__SUMMA_SENDS]; /* oldest first */
    int n;
} dt__summa_sends;

/* does panel pn take operand i's buffer on this rank: it arrives there, or
   is packed there to be sent (dt__summa_post)? */
static int dt__summa_uses_buf(const dt__call *c, const dt__summa *s, const dt__summa_panel *pn, int i) {
    dt_comm *dc = s->g[i] >= 0 ? c->m->dim[s->g[i]] : NULL;
    if (!dc || !s->unit[i] || !pn->w) return 0; /* (held whole: read in place) */
    return dc->rank != pn->owner[i] || !dt__summa_flat(s, c->in[i].t, i);
}

/* do panels p and q both take one operand's buffer (one buffer: the two
   slots share it, and q moves only after p has multiplied)? */
static int dt__summa_clash(const dt__call *c, const dt__summa *s, const dt__summa_panel *p, const dt__summa_panel *q) {
    int i;
    for (i = 0; i < 2; i++)
        if (dt__summa_uses_buf(c, s, p, i) && dt__summa_uses_buf(c, s, q, i)) return 1;
    return 0;
}

/* Panel pn into slot x: an owner's slice is read in place by its GEMM
   (strides) and packed only to be sent, unless it is one stretch of its
   storage already (a row panel of a contiguous block); the others'
   arrive in the slot's buffer. Then the messages start: an owner sends to
   each other rank of its mesh-dim row, the others receive from it. */
static dt_status dt__summa_post(const dt__call *c, const dt__summa *s, const dt__summa_panel *pn, dt__summa_slot *x) {
    dt_mesh *m = c->m;
    int i, r, d;
    x->pn = *pn;
    for (i = 0; i < 2; i++) {
        const dt_tensor *t = c->in[i].t;
        dt_message *msgs = x->msgs[i];
        dt_comm *dc = s->g[i] >= 0 ? m->dim[s->g[i]] : NULL;
        int mine = !dc || dc->rank == pn->owner[i], n = 0, send = mine && dc && dc->size > 1;
        size_t bytes = s->unit[i] * (size_t)pn->w;
        dt_status st;
        x->req[i] = NULL;
        x->comm[i] = dc;
        x->read[i] = x->buf[i];
        x->rstride[i] = NULL;
        x->stored[i] = 0;
        if (!bytes) continue;
        if (mine) {
            x->read[i] = (const char *)t->data + (size_t)(pn->lk[i] * s->st[i][s->kd[i]]) * dt_dtype_size(t->desc.dtype);
            x->rstride[i] = s->st[i];
            if (send && !dt__summa_flat(s, t, i)) { /* packed to be sent: the slice in local coordinates */
                dt__array src, dst;
                dt__box p;
                dt__tensor_array_of_data(t, t->data, &src);
                for (d = 0; d < src.ndim; d++) src.box.lo[d] = 0;
                dst = src;
                dst.data = (char *)x->buf[i];
                dst.stride = NULL;
                dst.box.lo[s->kd[i]] = pn->lk[i];
                dst.box.ext[s->kd[i]] = pn->w;
                p = dst.box;
                if ((st = c->dev->copy_box(c->fn, &src, &dst, &p))) return st;
                x->read[i] = x->buf[i];
                x->rstride[i] = NULL;
            }
        }
        if (!dc || dc->size == 1) continue;
        x->stored[i] = send && x->read[i] != x->buf[i];
        if (send) {
            for (r = 0; r < dc->size; r++)
                if (r != dc->rank) {
                    msgs[n].buf = (void *)(uintptr_t)x->read[i]; /* (sent, never written) */
                    msgs[n].bytes = bytes;
                    msgs[n].peer = dt__comm_carrier_rank(dc, r);
                    msgs[n++].send = 1;
                }
        } else {
            msgs[0].buf = x->buf[i];
            msgs[0].bytes = bytes;
            msgs[0].peer = dt__comm_carrier_rank(dc, pn->owner[i]);
            msgs[n++].send = 0;
        }
        /* a device's pack must be done before a CUDA-aware MPI reads it */
        if (!dt__on_host(c->dev) && m->comm->root->be.device == DT_ANY_MEMORY && send && (st = c->dev->sync(c->fn)))
            return st;
        if ((st = dt__comm_start(dc, DT__TAG_MATMUL, n, msgs, send ? bytes * (uint64_t)n : 0, send ? 0 : bytes,
                                 &x->req[i])))
            return st;
    }
    return DT_OK;
}

/* complete slot x's exchanges (all of them, also after a failure) */
static dt_status dt__summa_wait(dt__summa_slot *x) {
    dt_status st = DT_OK, e;
    int i;
    for (i = 0; i < 2; i++) {
        if (!x->req[i]) continue;
        e = dt__comm_wait(x->comm[i], x->req[i]);
        x->req[i] = NULL;
        if (!st) st = e;
    }
    return st;
}

/* the oldest of the sends in flight completed */
static dt_status dt__summa_sends_wait_one(dt__summa_sends *q) {
    dt_status st = dt__comm_wait(q->e[0].comm, q->e[0].req);
    q->n--;
    memmove(q->e, q->e + 1, (size_t)q->n * sizeof q->e[0]);
    return st;
}

/* all of them (also after a failure) */
static dt_status dt__summa_sends_wait(dt__summa_sends *q) {
    dt_status st = DT_OK, e;
    while (q->n)
        if ((e = dt__summa_sends_wait_one(q)) && !st) st = e;
    return st;
}

/* slot x's exchanges done before its GEMM, but (s->defer) sends from
   storage: they join q, to complete at the end (the oldest first when q
   is full), so that an owner does not wait for its receivers */
static dt_status dt__summa_arrived(const dt__summa *s, dt__summa_slot *x, dt__summa_sends *q) {
    dt_status st;
    int i;
    for (i = 0; i < 2 && s->defer; i++) {
        if (!x->req[i] || !x->stored[i]) continue;
        if (q->n == DT__SUMMA_SENDS && (st = dt__summa_sends_wait_one(q))) return st;
        q->e[q->n].comm = x->comm[i];
        q->e[q->n++].req = x->req[i];
        x->req[i] = NULL;
    }
    return dt__summa_wait(x);
}

static long dt__summa_gemms = 0; /* panels multiplied (read by the tests: the overlap's record) */
static int64_t dt__summa_first = 0; /* where this rank's last streamed product started k (read by the tests) */

/* the fewest rows of C a GEMM piece takes between two tests: each piece
   packs the panel of b again, 4 / DT__SUMMA_PIECE bytes a flop (under 1 %) */
#define DT__SUMMA_PIECE 2048
static int64_t dt__summa_piece = DT__SUMMA_PIECE; /* (the tests lower it, to run the pieces) */

/* is one of slot x's exchanges in flight over a backend that can test it? */
static int dt__summa_testable(const dt__summa_slot *x) {
    int i;
    for (i = 0; i < 2; i++)
        if (x->req[i] && dt__comm_can_test(x->comm[i])) return 1;
    return 0;
}

/* slot x's messages moved forward (a rendezvous answered, a chunk copied) */
static dt_status dt__summa_progress(dt__summa_slot *x) {
    int i, done;
    dt_status st;
    for (i = 0; i < 2; i++)
        if (x->req[i] && (st = dt__comm_test(x->comm[i], x->req[i], &done))) return st;
    return DT_OK;
}

/* Panel x's GEMM into o. While the next panel is in flight over a backend
   that can test, its messages are moved forward first: without a progress
   thread, MPI answers a rendezvous only inside MPI calls, and a network
   card then moves the data while the GEMM runs. A tall host GEMM also
   runs in pieces of C's rows with a test between them; not a short one:
   each piece packs b's panel again (+25 % at 128 rows through BLIS's SKX
   kernels), and within a node the message is a copy that a busy core
   makes either way. (A device queues its GEMM whole: NCCL moves on its
   own.) */
static dt_status dt__summa_gemm(const dt__call *c, const dt__local *in, dt_tensor *o, int acc, dt__summa_slot *next) {
    int na = in[0].ndim;
    int64_t M = na >= 2 ? in[0].box.ext[na - 2] : 1, K = in[0].box.ext[na - 1], rows, r0;
    int64_t rsa = in[0].stride ? in[0].stride[na - 2] : K, N = M ? (int64_t)(o->numel / (size_t)M) : 0;
    size_t es = dt_dtype_size(o->desc.dtype);
    dt_status st;
    if (!next || !dt__on_host(c->dev) || !dt__summa_testable(next)) return dt__matmul_blocks(c, in, o, acc);
    if ((st = dt__summa_progress(next))) return st;
    if (o->desc.ndim != 2 || na != 2 || !(acc || c->nin < 3 || !in[2].data) || M < 2 * dt__summa_piece)
        return dt__matmul_blocks(c, in, o, acc);
    rows = dt__ceil_div(M, 4);
    if (rows < dt__summa_piece) rows = dt__summa_piece;
    for (r0 = 0; r0 < M; r0 += rows) {
        dt__local part[3];
        dt_tensor ov = *o;
        int64_t h = M - r0 < rows ? M - r0 : rows;
        part[0] = in[0];
        part[1] = in[1];
        part[2] = in[2];
        part[0].box.ext[0] = h;
        part[0].data = (const char *)in[0].data + (size_t)(r0 * rsa) * es;
        ov.box.ext[0] = h;
        ov.numel = (size_t)(h * N);
        ov.data = (char *)o->data + (size_t)(r0 * N) * es;
        if ((st = dt__matmul_blocks(c, part, &ov, acc)) || (st = dt__summa_progress(next))) return st;
    }
    return DT_OK;
}

static void dt__summa_log(const dt__call *c, const dt__summa *s, int streamed, FILE *f) {
    char layers[80] = "";
    if (streamed && s->L >= 0)
        snprintf(layers, sizeof layers, "; 2.5D: %d layers over mesh dim %d split k, their results summed", s->nl, s->L);
    if (streamed && s->shared)
        fprintf(f, "%s: streamed (SUMMA), read in place: k = %lld in the owners' parts, each read by the GEMM from "
                "its owner's storage in the node's shared arena (no messages, no buffers); a's k over mesh dim %d, "
                "b's over %d (-1: held)%s\n", c->fn, (long long)s->K, s->g[0], s->g[1], layers);
    else if (streamed)
        fprintf(f, "%s: streamed (SUMMA): k = %lld in panels of <= %lld, %s; a's k over mesh dim %d, b's over %d "
                "(-1: held); working %llu bytes of a budget of %llu%s\n", c->fn, (long long)s->K, (long long)s->w,
                s->nbuf == 2 ? "double-buffered" : "single-buffered", s->g[0], s->g[1], (unsigned long long)s->work,
                (unsigned long long)s->budget, layers);
    else
        fprintf(f, "%s: gathered: %llu bytes, within the budget of %llu and under %llu\n", c->fn,
                (unsigned long long)s->gathered, (unsigned long long)s->budget, (unsigned long long)DT__MM_SMALL);
}

/* Stream or gather? 1: stream (s filled); 0: the gather. A budget too small
   for a panel of width 1 fails here, alike on every rank. */
static dt_status dt__summa_choose(const dt__call *c, dt__summa *s, int *stream) {
    int mode = dt__mm_mode();
    dt_status st;
    *stream = 0;
    s->shared = 0;
    s->pub = NULL;
    if (mode == 2 || !dt__summa_applies(c, s)) return DT_OK;
    dt__summa_size(c, s);
    if (mode == 0 && s->gathered <= s->budget && s->gathered <= DT__MM_SMALL) {
        if (c->m->rank == 0 && dt__log_on(DT__LOG_OPS)) dt__summa_log(c, s, 0, stderr);
        return DT_OK;
    }
    if (s->w < 1)
        return dt__fail(DT_ERR_NOMEM, "%s: the matmul budget of %llu bytes is under one panel of width 1 (%llu "
                        "bytes on the largest rank); raise it (dt_mesh_set_matmul_budget, DTENSOR_MATMUL_BUDGET)",
                        c->fn, (unsigned long long)s->budget, (unsigned long long)s->work);
    dt__summa_layers(c, s);
    dt__summa_strides(c, s);
    if ((st = dt__summa_share(c, s))) return st;
    dt__summa_rotate(c, s);
    if (c->m->explain) dt__summa_log(c, s, 1, c->m->explain);
    if (c->m->rank == 0 && dt__log_on(DT__LOG_OPS)) dt__summa_log(c, s, 1, stderr);
    dt__summa_calls++;
    *stream = 1;
    return DT_OK;
}

/* panel pn's operands as the GEMM reads them in place (s->shared): from
   each owner's segment through the owner's strides; the bytes read from
   other ranks' segments, and those they read from this one, counted as
   the messages' way would (received, sent) */
static void dt__summa_read_shared(const dt__call *c, const dt__summa *s, const dt__summa_panel *pn, dt__local *in,
                                  uint64_t *sent, uint64_t *got) {
    const dt_mesh *m = c->m;
    int i, coord[DT_MAX_MESH_DIMS];
    for (i = 0; i < 2; i++) {
        int r = m->rank;
        const char *base = (const char *)c->in[i].t->data;
        const int64_t *w;
        size_t bytes = s->unit[i] * (size_t)pn->w;
        if (s->g[i] >= 0) {
            memcpy(coord, m->coord, sizeof coord);
            coord[s->g[i]] = pn->owner[i];
            r = dt__mesh_rank_of(m, coord);
            base = m->shm->base[r] + dt__summa_words(c, s, r, i)[0];
            if (r != m->rank) *got += bytes;
            else *sent += bytes * (uint64_t)(m->shape[s->g[i]] - 1);
        }
        w = dt__summa_words(c, s, r, i) + 1;
        in[i].data = base + (size_t)(pn->lk[i] * w[s->kd[i]]) * dt_dtype_size(c->in[i].d->dtype);
        in[i].ndim = c->in[i].d->ndim;
        in[i].stride = w;
        dt__summa_panel_box(s, i, pn, &in[i].box);
    }
}

/* The k loop read in place (dt__summa_share): one GEMM per segment, then
   the barrier after which the owners may change their storage (reached
   also after a failure: every rank waits there) */
static dt_status dt__summa_run_shared(const dt__call *c, dt__summa *s, const dt__local *bias, dt_tensor *o) {
    dt__summa_panel pn, x;
    dt_comm_stats before, after;
    uint64_t sent = 0, got = 0;
    int p = 0, more;
    dt_status st = DT_OK, e;
    dt_comm_get_stats(c->m->comm, &before);
    memset(&pn, 0, sizeof pn);
    more = dt__summa_following(s, c->m, NULL, &pn); /* (every layer has a panel: dt__summa_layers) */
    dt__summa_first = more ? pn.k0 : 0;
    for (; more && !st; p++) {
        dt__local in[3];
        dt__summa_read_shared(c, s, &pn, in, &sent, &got);
        in[2] = *bias;
        if (s->li > 0) in[2].data = NULL; /* the bias once: layer 0's */
        st = dt__matmul_blocks(c, in, o, p > 0);
        dt__summa_gemms++;
        x = pn;
        more = dt__summa_following(s, c->m, &x, &pn);
    }
    e = dt__comm_shm_end(c->m->shm, c->m->comm, sent, got);
    if (!st) st = e;
    if (!st && s->L >= 0) st = dt__summa_layers_sum(c, s, o);
    dt_comm_get_stats(c->m->comm, &after);
    if (!st) dt__comm_note_matmul(c->m->comm, after.bytes_recv - before.bytes_recv, (uint64_t)s->bound);
    return st;
}

/* the k loop: post panel p+1, wait for panel p, multiply it */
static dt_status dt__summa_run(const dt__call *c, dt__summa *s, const dt__local *bias, dt_tensor *o) {
    dt__summa_slot slot[2];
    dt__summa_panel pn;
    dt__summa_sends q;
    dt_message *msgs = NULL;
    dt_comm_stats before, after;
    size_t bytes[2];
    int i, j, cur = 0, p = 0, nmsg = 1;
    dt_status st = DT_OK, e;
    if (s->shared) return dt__summa_run_shared(c, s, bias, o);
    memset(slot, 0, sizeof slot);
    q.n = 0;
    for (i = 0; i < 2; i++) {
        bytes[i] = s->g[i] >= 0 ? s->unit[i] * (size_t)s->w : 0; /* (held whole: read in place) */
        if (s->g[i] >= 0 && c->m->shape[s->g[i]] > nmsg) nmsg = c->m->shape[s->g[i]];
    }
    if ((st = dt__alloc(c->fn, 4 * (size_t)nmsg * sizeof *msgs, (void **)&msgs))) return st;
    for (j = 0; j < 2; j++)
        for (i = 0; i < 2; i++) slot[j].msgs[i] = msgs + (2 * j + i) * nmsg;
    for (j = 0; j < 2 && !st; j++) /* (one buffer: the slots share it) */
        for (i = 0; i < 2 && !st; i++)
            if (j < s->nbuf) st = c->dev->alloc(c->fn, bytes[i] ? bytes[i] : 1, &slot[j].buf[i]);
            else slot[j].buf[i] = slot[0].buf[i];
    if (st) goto done;
    dt_comm_get_stats(c->m->comm, &before);
    /* (every layer has a panel: dt__summa_layers) */
    dt__summa_following(s, c->m, NULL, &pn);
    dt__summa_first = pn.k0;
    if ((st = dt__summa_post(c, s, &pn, &slot[0]))) goto done;
    for (;;) {
        dt__summa_slot *x = &slot[cur], *y = &slot[1 - cur];
        dt__local in[3];
        int more = dt__summa_following(s, c->m, &x->pn, &pn);
        int early = more && (s->nbuf == 2 || !dt__summa_clash(c, s, &x->pn, &pn));
        if (early && (st = dt__summa_post(c, s, &pn, y))) goto done; /* it moves while this one multiplies */
        if ((st = dt__summa_arrived(s, x, &q))) goto done;
        for (i = 0; i < 2; i++) {
            in[i].data = x->read[i];
            in[i].ndim = c->in[i].d->ndim;
            in[i].stride = x->rstride[i];
            dt__summa_panel_box(s, i, &x->pn, &in[i].box);
        }
        in[2] = *bias;
        if (s->li > 0) in[2].data = NULL; /* the bias once: layer 0's */
        if ((st = dt__summa_gemm(c, in, o, p > 0, early ? y : NULL))) goto done;
        dt__summa_gemms++;
        p++;
        if (!more) break;
        if (!early && (st = dt__summa_post(c, s, &pn, y))) goto done;
        cur = 1 - cur;
    }
    if ((st = dt__summa_sends_wait(&q))) goto done;
    if (s->L >= 0 && (st = dt__summa_layers_sum(c, s, o))) goto done;
    dt_comm_get_stats(c->m->comm, &after);
    dt__comm_note_matmul(c->m->comm, after.bytes_recv - before.bytes_recv, (uint64_t)s->bound);
done:
    if ((e = dt__summa_sends_wait(&q)) && !st) st = e;
    for (j = 0; j < 2; j++) {
        e = dt__summa_wait(&slot[j]);
        if (!st) st = e;
        /* a device's queued GEMMs read the panels: done before they are freed */
        if (j == 0 && !dt__on_host(c->dev) && (e = c->dev->sync(c->fn)) && !st) st = e;
        for (i = 0; i < 2 && j < s->nbuf; i++) c->dev->free(slot[j].buf[i]);
    }
    DT_FREE(msgs);
    return st;
}

/* ---- softmax: softmax, log_softmax ---- */

/* arg[0]: the dim (softmax) */
static dt_status dt__infer_softmax(dt__call *c) {
    dt__out_like(c, c->in[0].d);
    dt__map_identity(c, 0);
    c->dmap[0][c->arg[0]] = DT__D_FIXED;
    return DT_OK;
}

static dt_status dt__run_softmax(const dt__call *c, const dt__local *x, dt_tensor *o) {
    int d = (int)c->arg[0];
    /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): every device's kernels() returns its static table */
    c->dev->kernels()->softmax(o->desc.dtype, x->data, o->data, dt__prod(x->box.ext, 0, d), (size_t)x->box.ext[d],
                         dt__prod(x->box.ext, d + 1, x->ndim), c->def->kernel);
    return DT_OK;
}

/* ---- norm: layer_norm, rms_norm ---- */

static dt_status dt__infer_norm(dt__call *c) {
    const dt_tensor_desc *x = c->in[0].d;
    int i, last = x->ndim - 1;
    if (x->ndim < 1) return dt__fail(DT_ERR_SHAPE, "%s: x is 0-d; it normalises along the last dim", c->fn);
    for (i = 1; i < c->nin; i++) {
        const dt_tensor_desc *w = c->in[i].d;
        if (w && (w->ndim != 1 || w->shape[0] != x->shape[last]))
            return dt__fail(DT_ERR_SHAPE, "%s: %s must be 1-D of size %lld (x's last dim)", c->fn, c->in[i].name,
                            (long long)x->shape[last]);
        if (w) c->dmap[i][0] = DT__D_FIXED;
    }
    dt__out_like(c, x);
    dt__map_identity(c, 0);
    c->dmap[0][last] = DT__D_FIXED;
    return DT_OK;
}

static dt_status dt__run_norm(const dt__call *c, const dt__local *in, dt_tensor *o) {
    size_t n = (size_t)in[0].box.ext[in[0].ndim - 1];
    if (!o->numel) return DT_OK;
    c->dev->kernels()->norm(o->desc.dtype, in[0].data, in[1].data, c->nin > 2 ? in[2].data : NULL, o->data, o->numel / n, n,
                      c->a, c->def->kernel);
    return DT_OK;
}

/* ---- permute and reshape: transpose, permute, squeeze, unsqueeze; reshape (both run dt__run_view) ---- */

/* transpose/permute: arg[0..ndim) the permutation. squeeze: arg[0] the dim
   (-1: nothing to squeeze). unsqueeze: arg[0] the new dim. */
static dt_status dt__infer_permute(dt__call *c) {
    const dt_tensor_desc *x = c->in[0].d;
    int d, j;
    memset(&c->out, 0, sizeof c->out);
    c->out.dtype = x->dtype;
    if (c->op == DT__OP_SQUEEZE || c->op == DT__OP_UNSQUEEZE) {
        int at = (int)c->arg[0], sq = c->op == DT__OP_SQUEEZE;
        for (d = 0, j = 0; d < x->ndim; d++) {
            if (sq && d == at) { c->dmap[0][d] = DT__D_FIXED; continue; }
            if (!sq && j == at) c->out.shape[j++] = 1;
            c->dmap[0][d] = (int8_t)j;
            c->out.shape[j++] = x->shape[d];
        }
        if (!sq && j == at) c->out.shape[j++] = 1;
        c->out.ndim = j;
        return DT_OK;
    }
    c->out.ndim = x->ndim;
    for (j = 0; j < x->ndim; j++) {
        c->out.shape[j] = x->shape[c->arg[j]];
        c->dmap[0][c->arg[j]] = (int8_t)j;
    }
    return DT_OK;
}

/* reshape: arg[0..n) the new shape (resolved). Dims group into spans with
   equal products; a group's first non-1 input dim may stay sharded as the
   group's first non-1 output dim (if the chunks line up, >>propagate). */
static dt_status dt__infer_reshape(dt__call *c) {
    const dt_tensor_desc *x = c->in[0].d;
    int n = c->narg, i = 0, j = 0, d, g = 0;
    memset(&c->out, 0, sizeof c->out);
    c->out.dtype = x->dtype;
    c->out.ndim = n;
    for (d = 0; d < n; d++) c->out.shape[d] = c->arg[d];
    memset(c->grp, -1, sizeof c->grp);
    while (i < x->ndim && j < n) {
        int i0 = i, j0 = j;
        int64_t pi = x->shape[i++], pj = c->out.shape[j++];
        if (pi == 0 || pj == 0) break; /* empty: nothing keeps a shard */
        while (pi != pj) {
            if (pi < pj && i < x->ndim) pi *= x->shape[i++];
            else if (j < n) pj *= c->out.shape[j++];
            else break;
        }
        for (; i0 < i; i0++) c->grp[0][i0] = (int8_t)g;
        for (; j0 < j; j0++) c->grp[1][j0] = (int8_t)g;
        g++;
    }
    return DT_OK;
}

static dt_status dt__run_view(const dt__call *c, const dt__local *in, dt_tensor *o) {
    int perm[DT_MAX_DIMS], j;
    size_t es = dt_dtype_size(o->desc.dtype);
    if (!o->numel) return DT_OK;
    if (c->def->family == DT__F_PERMUTE && c->def->kernel == 0) {
        for (j = 0; j < in[0].ndim; j++) perm[j] = (int)c->arg[j];
        c->dev->kernels()->permute(es, in[0].ndim, in[0].box.ext, perm, in[0].data, o->data);
    } else if (o->data != in[0].data) {
        return c->dev->copy(c->fn, o->data, in[0].data, o->bytes);
    }
    return DT_OK;
}

/* ---- narrow ---- */

/* narrow: arg = dim, start, length */
static dt_status dt__infer_narrow(dt__call *c) {
    dt__out_like(c, c->in[0].d);
    c->out.shape[c->arg[0]] = c->arg[2];
    dt__map_identity(c, 0);
    c->dmap[0][c->arg[0]] = DT__D_FIXED;
    return DT_OK;
}

static dt_status dt__run_narrow(const dt__call *c, const dt__local *x, dt_tensor *o) {
    int d = (int)c->arg[0];
    dt__array src, dst;
    dt__box p;
    if (!o->numel) return DT_OK;
    dt__local_array(x, dt_dtype_size(o->desc.dtype), &src);
    p = src.box;
    p.lo[d] = c->arg[1];
    p.ext[d] = c->arg[2];
    dst = src;
    dst.data = (char *)o->data;
    dst.box = p;
    src.stride = x->stride; /* strided storage, read in place */
    return c->dev->copy_box(c->fn, &src, &dst, &p);
}

/* ---- cat: cat, stack ---- */

/* cat (arg[0] the dim) / stack (arg[0] the new dim) */
static dt_status dt__infer_cat(dt__call *c) {
    const dt_tensor_desc *x = c->in[0].d;
    int dim = (int)c->arg[0], stack = c->op == DT__OP_STACK, i, d;
    char s1[160], s2[160];
    for (i = 1; i < c->nin; i++) {
        const dt_tensor_desc *y = c->in[i].d;
        int bad = y->ndim != x->ndim;
        for (d = 0; d < x->ndim && !bad; d++) bad = (stack || d != dim) && y->shape[d] != x->shape[d];
        if (bad)
            return dt__fail(DT_ERR_SHAPE, "%s: xs[%d] %s does not match xs[0] %s%s", c->fn, i,
                            dt__shape_str(y->shape, y->ndim, s1, sizeof s1), dt__shape_str(x->shape, x->ndim, s2, sizeof s2),
                            stack ? "" : " outside the cat dim");
    }
    memset(&c->out, 0, sizeof c->out);
    c->out.dtype = x->dtype;
    c->out.ndim = x->ndim + stack;
    for (d = 0; d < c->out.ndim; d++) {
        int src = stack && d > dim ? d - 1 : d;
        c->out.shape[d] = stack && d == dim ? c->nin : x->shape[src];
    }
    if (!stack) {
        c->out.shape[dim] = 0;
        for (i = 0; i < c->nin; i++) {
            int64_t e = c->in[i].d->shape[dim];
            if (e > INT64_MAX - c->out.shape[dim])
                return dt__fail(DT_ERR_SHAPE, "%s: dim %d of xs[0..%d] adds up to more than INT64_MAX (%lld + %lld)",
                                c->fn, dim, i, (long long)c->out.shape[dim], (long long)e);
            c->out.shape[dim] += e;
        }
    }
    for (i = 0; i < c->nin; i++)
        for (d = 0; d < x->ndim; d++)
            c->dmap[i][d] = (int8_t)(stack ? (d >= dim ? d + 1 : d) : (d == dim ? DT__D_FIXED : d));
    return DT_OK;
}

static dt_status dt__run_cat(const dt__call *c, const dt__local *in, dt_tensor *o) {
    int d = (int)c->arg[0], i, k;
    size_t es = dt_dtype_size(o->desc.dtype);
    int64_t at = 0;
    dt__array src, dst;
    dt_status st;
    if (!o->numel) return DT_OK;
    dst.data = (char *)o->data;
    dst.ndim = o->desc.ndim;
    dst.es = es;
    dst.stride = NULL;
    for (k = 0; k < dst.ndim; k++) { dst.box.lo[k] = 0; dst.box.ext[k] = o->box.ext[k]; }
    for (i = 0; i < c->nin; i++) { /* stack: the inputs lack dim d; viewed with extent 1 there */
        dt__local v = in[i];
        if (v.ndim < dst.ndim) {
            for (k = dst.ndim - 1; k > d; k--) v.box.ext[k] = v.box.ext[k - 1];
            v.box.ext[d] = 1;
            v.ndim = dst.ndim;
        }
        dt__local_array(&v, es, &src);
        src.box.lo[d] = at;
        at += src.box.ext[d];
        if (dt__box_numel(src.ndim, &src.box) && (st = c->dev->copy_box(c->fn, &src, &dst, &src.box))) return st;
    }
    return DT_OK;
}

/* ---- embed: embedding ---- */

static dt_status dt__infer_embed(dt__call *c) {
    const dt_tensor_desc *w = c->in[0].d, *ix = c->in[1].d;
    int d;
    if (w->ndim != 2) return dt__fail(DT_ERR_SHAPE, "dt_embedding: table is %d-d, must be 2-D [V, D]", w->ndim);
    if (ix->ndim + 1 > DT_MAX_DIMS)
        return dt__fail(DT_ERR_SHAPE, "dt_embedding: idx is %d-d; the result would exceed DT_MAX_DIMS", ix->ndim);
    memset(&c->out, 0, sizeof c->out);
    c->out.dtype = w->dtype;
    c->out.ndim = ix->ndim + 1;
    for (d = 0; d < ix->ndim && d < DT_MAX_DIMS - 1; d++) { c->out.shape[d] = ix->shape[d]; c->dmap[1][d] = (int8_t)d; }
    c->out.shape[ix->ndim] = w->shape[1];
    c->dmap[0][0] = (int8_t)DT__D_GROUP(0);
    c->dmap[0][1] = (int8_t)ix->ndim;
    return DT_OK;
}

static dt_status dt__run_embed(const dt__call *c, const dt__local *in, dt_tensor *o) {
    if (!o->numel) return DT_OK;
    c->dev->kernels()->embedding(o->desc.dtype, in[0].data, in[0].box.lo[0], in[0].box.ext[0], in[0].box.ext[1],
                           c->in[1].d->dtype, in[1].data, dt__box_numel(in[1].ndim, &in[1].box), o->data);
    return DT_OK;
}

/* ---- xent: cross_entropy ---- */

static dt_status dt__infer_xent(dt__call *c) {
    const dt_tensor_desc *x = c->in[0].d, *t = c->in[1].d;
    if (x->ndim != 2 || t->ndim != 1 || t->shape[0] != x->shape[0])
        return dt__fail(DT_ERR_SHAPE, "dt_cross_entropy: logits must be [N, C] and target [N] (got %d-d and %d-d)",
                        x->ndim, t->ndim);
    if (x->shape[0] == 0) return dt__fail(DT_ERR_SHAPE, "dt_cross_entropy: N = 0 (the mean of nothing)");
    memset(&c->out, 0, sizeof c->out);
    c->out.dtype = x->dtype;
    c->out.ndim = 0;
    c->dmap[0][0] = (int8_t)DT__D_GROUP(0);
    c->dmap[0][1] = DT__D_CLASS;
    c->dmap[1][0] = (int8_t)DT__D_GROUP(0);
    return DT_OK;
}

/* the row statistics d[n] (in the op's memory) reduced over the mesh dims
   that split the classes; a device's buffer over a backend that takes host
   memory only goes through the host buffer h[n] */
static dt_status dt__xent_allreduce(const dt__call *c, double *d, double *h, size_t n, dt_reduce op) {
    int i, cd = c->m->comm->root->be.device;
    int staged = !dt__on_host(c->dev) && cd != DT_ANY_MEMORY && cd != c->in[0].d->device;
    dt_status st;
    for (i = 0; i < c->m->ndim; i++) {
        if (c->want[0][i].kind != DT_SHARD || c->want[0][i].dim != 1) continue;
        if (staged && n && (st = c->dev->copy(c->fn, h, d, n * sizeof(double)))) return st;
        if ((st = dt__comm_allreduce(c->m->dim[i], staged ? h : d, staged ? h : d, n, DT_F64, op))) return st;
        if (staged && n && (st = c->dev->copy(c->fn, d, h, n * sizeof(double)))) return st;
    }
    return DT_OK;
}

/* loss_parallel: per-row max, sum of exp and target logit are reduced over
   the mesh dims that split the classes; rows are summed locally (Partial
   where they are split). On a device the statistics are computed and
   reduced in device memory, then copied to the host (3 doubles a row),
   where the loss is formed as on the host; the scalar is copied back. */
static dt_status dt__run_xent(const dt__call *c, const dt__local *in, dt_tensor *o) {
    const dt__local *x = &in[0];
    size_t rows = (size_t)x->box.ext[0], r, bytes = 3 * rows * sizeof(double) + 1;
    double *buf, *hbuf, loss = 0;
    int dev = !dt__on_host(c->dev);
    char v[16];
    dt_status st;
    if ((st = dt__scratch(c->m, DT__SCRATCH_TMP, bytes, (void **)&hbuf))) return st;
    buf = hbuf;
    if (dev && (st = dt__scratch_on(c->m, c->dev, DT__SCRATCH_TMP, bytes, (void **)&buf))) return st;
    c->dev->kernels()->xent(c->in[0].d->dtype, x->data, rows, (size_t)x->box.ext[1], x->box.lo[1],
                      c->in[1].d->dtype, in[1].data, NULL, buf, NULL, NULL);
    if ((st = dt__xent_allreduce(c, buf, hbuf, rows, DT_MAX))) return st;
    c->dev->kernels()->xent(c->in[0].d->dtype, x->data, rows, (size_t)x->box.ext[1], x->box.lo[1], c->in[1].d->dtype,
                      in[1].data, buf, NULL, buf + rows, buf + 2 * rows);
    if ((st = dt__xent_allreduce(c, buf + rows, hbuf + rows, 2 * rows, DT_SUM))) return st;
    if (dev && rows && (st = c->dev->copy(c->fn, hbuf, buf, 3 * rows * sizeof(double)))) return st;
    for (r = 0; r < rows; r++) loss += log(hbuf[rows + r]) + hbuf[r] - hbuf[2 * rows + r];
    if (!dev) {
        dt__scalar_of(o->desc.dtype, loss / (double)c->in[0].d->shape[0], o->data);
        return DT_OK;
    }
    dt__scalar_of(o->desc.dtype, loss / (double)c->in[0].d->shape[0], v);
    return c->dev->copy(c->fn, o->data, v, dt_dtype_size(o->desc.dtype));
}

/* ---- the family table, and running an op ---- */

/* dt__families[DT__F_x]: one row per line of DT__FAMILIES (>>registry) */
typedef struct dt__family {
    dt_status (*infer)(dt__call *c);                                        /* shapes, dim map */
    dt_status (*run)(const dt__call *c, const dt__local *in, dt_tensor *o); /* local kernels   */
} dt__family;

#define DT__FAMILY_ROW(NAME, infer, run, traits) {dt__infer_##infer, dt__run_##run},
static const dt__family dt__families[DT__F_COUNT] = {DT__FAMILIES(DT__FAMILY_ROW)};
#undef DT__FAMILY_ROW

/* The ops defined on complex numbers (README's list): the arithmetic,
   exp, sum/mean, the matmul family and the data movement. The others are
   about order (relu, max/min, maximum, argmax, softmax, cross-entropy),
   norms and real functions, or (abs) give a real result: refused rather
   than run on the pairs as if they were reals. */
static int dt__complex_allowed(int op) {
    switch (op) {
    case DT__OP_NEG: case DT__OP_SCALE: case DT__OP_SCALE_NEG: case DT__OP_SHIFT: case DT__OP_COPY:
    case DT__OP_FILL: case DT__OP_EXP: case DT__OP_CAST:
    case DT__OP_ADD: case DT__OP_SUB: case DT__OP_MUL: case DT__OP_DIV: case DT__OP_AXPY:
    case DT__OP_SUM: case DT__OP_MEAN:
    case DT__OP_MATMUL: case DT__OP_MM: case DT__OP_BMM: case DT__OP_ADDMM: case DT__OP_LINEAR: case DT__OP_DOT:
    case DT__OP_TRANSPOSE: case DT__OP_PERMUTE: case DT__OP_SQUEEZE: case DT__OP_UNSQUEEZE: case DT__OP_RESHAPE:
    case DT__OP_NARROW: case DT__OP_CAT: case DT__OP_STACK:
        return 1;
    default:
        return 0;
    }
}

/* a complex input: an op complex defines (on the host or a device: both
   kernel tables take C64/C128) */
static dt_status dt__check_complex_op(const dt__call *c) {
    int i;
    for (i = 0; i < c->nin; i++) {
        dt_dtype t;
        if (!c->in[i].d) continue; /* an optional input not given (a bias) */
        t = c->in[i].d->dtype;
        if (!dt__is_complex(t)) continue;
        if (!dt__complex_allowed(c->op))
            return dt__fail(DT_ERR_DTYPE, "%s: %s is %s; the op is not defined for complex dtypes (README lists "
                            "the ops that take complex)", c->fn, c->in[i].name, dt_dtype_name(t));
    }
    return DT_OK;
}

/* inputs present, on one mesh, one dtype, allowed by the op */
static dt_status dt__call_check(dt__call *c) {
    dt_status st;
    int i;
    int indices = dt__has_trait(c->def, DT__FAM_INDICES);
    if ((st = dt__call_mesh(c))) return dt__call_refused(c, st);
    for (i = 1; i < c->nin && !indices; i++)
        if ((st = dt__same_dtype(c, 0, i))) return dt__call_refused(c, st);
    if ((c->def->flags & DT__FLOAT_ONLY) && !dt__is_float(c->in[0].d->dtype))
        return dt__call_refused(c, dt__fail(DT_ERR_DTYPE, "%s: %s is %s; the op is defined for floating-point "
                                            "tensors", c->fn, c->in[0].name, dt_dtype_name(c->in[0].d->dtype)));
    if ((st = dt__check_complex_op(c))) return dt__call_refused(c, st);
    return DT_OK;
}

/* Strided storage (local_strides, local_ghost): the families whose local
   kernels take an input's strides read it in place (DT__FAMILIES' reads
   traits: READS_ANY -- the binary family's kernel walks any strides, narrow
   is a box copy; READS_ROWS -- one kernel call per row of a unit-stride
   last dim, the unary family and casts); the others get one contiguous
   copy of the shard.
   A strided input that must move (other placements) is packed by the
   redistribution, which reads strides. */
static int dt__reads_strides(const dt__call *c, const dt_tensor *t) {
    if (dt__has_trait(c->def, DT__FAM_READS_ANY)) return 1;
    return dt__has_trait(c->def, DT__FAM_READS_ROWS) && t->stride[t->desc.ndim - 1] == 1;
}

/* the inputs' blocks as the op wants them placed: in place where the
   placements match (a strided one per dt__reads_strides, else copied),
   redistributed into scratch otherwise; extra[i]: buffers to free */
static dt_status dt__move_inputs(const dt__call *c, dt__local *loc, void **extra, unsigned skip) {
    dt_mesh *m = c->m;
    int i;
    for (i = 0; i < c->nin; i++) {
        const dt__in *in = &c->in[i];
        const dt_tensor *t = in->t;
        dt_status st;
        size_t bytes;
        void *buf;
        loc[i].data = NULL;
        loc[i].ndim = in->d ? in->d->ndim : 0;
        loc[i].stride = NULL;
        if (!t || (skip >> i & 1u)) continue;
        if (t->mesh != m) { /* a host scalar: Replicate, made Partial where wanted */
            int k;
            loc[i].data = t->data;
            loc[i].box = t->box;
            for (k = 0; k < m->ndim; k++)
                if (c->want[i][k].kind == DT_PARTIAL) {
                    if (loc[i].data == t->data) {
                        if ((st = dt__scratch_on(m, c->dev, i < 3 ? DT__SCRATCH_IN0 + i : DT__SCRATCH_TMP, t->bytes,
                                                 &buf)) ||
                            (st = c->dev->copy(c->fn, buf, t->data, t->bytes)))
                            return st;
                        loc[i].data = buf;
                    }
                    if ((st = dt__to_partial(m, c->dev, k, c->want[i][k], (void *)loc[i].data, t->bytes))) return st;
                }
            continue;
        }
        if (!(c->moves >> i & 1)) { /* (dt__propagate compared the placements; the cache key holds them) */
            loc[i].data = t->data;
            loc[i].box = t->box;
            if (t->strided && t->desc.ndim > 0 && dt__reads_strides(c, t)) {
                loc[i].stride = t->stride; /* read in place */
            } else if (t->strided && t->numel) { /* copied: one contiguous copy, freed at the end of the call */
                dt__array a, b;
                if ((st = c->dev->alloc(c->fn, t->bytes, &buf))) return st;
                extra[i] = buf;
                dt__tensor_array_of_data(t, t->data, &a);
                b = a;
                b.data = (char *)buf;
                b.stride = NULL;
                if ((st = c->dev->copy_box(c->fn, &a, &b, &t->box))) return st; /* (the device's, on its memory) */
                loc[i].data = buf;
            }
            continue;
        }
        dt__layout_box(t->desc.ndim, t->desc.shape, m->ndim, m->shape, m->coord, c->want[i], &loc[i].box);
        bytes = dt__box_numel(t->desc.ndim, &loc[i].box) * dt_dtype_size(t->desc.dtype);
        buf = NULL;
        if (i < 3) st = dt__scratch_on(m, c->dev, DT__SCRATCH_IN0 + i, bytes, &buf);
        else st = c->dev->alloc(c->fn, bytes ? bytes : 1, &buf), extra[i] = buf;
        if (st) return st;
        if ((st = dt__redistribute_into(t, c->want[i], buf))) return st;
        loc[i].data = buf;
    }
    return DT_OK;
}

static dt_status dt__run(const dt__call *c, dt_tensor *o) {
    dt__local loc[DT__MAX_IN];
    void *extra[DT__MAX_IN];
    dt__summa s;
    dt_status st;
    int i, stream = 0;
    if (c->m->rank < 0) return DT_OK;
    memset(extra, 0, sizeof extra);
    memset(loc, 0, sizeof loc);
    /* a matmul that would gather k streams it instead (SUMMA, above) */
    if ((st = dt__summa_choose(c, &s, &stream))) return st;
    st = dt__move_inputs(c, loc, extra, stream ? 3u : 0u);
    if (!st) st = stream ? dt__summa_run(c, &s, &loc[2], o) : dt__families[c->def->family].run(c, loc, o);
    else if (stream && s.shared) (void)dt__comm_shm_end(c->m->shm, c->m->comm, 0, 0); /* (the others wait there) */
    if (stream && s.pub) DT_FREE(s.pub);
    for (i = 0; i < c->nin; i++)
        if (extra[i]) c->dev->free(extra[i]);
    return st;
}

/* dt__check_out_spec's verdict without its messages (the reused *out's check on every call) */
static int dt__out_spec_same(const dt_tensor *o, const dt_mesh *m, const dt_tensor_desc *want) {
    int d;
    if (o->mesh != m || o->desc.device != want->device || o->desc.dtype != want->dtype || o->desc.ndim != want->ndim)
        return 0;
    for (d = 0; d < want->ndim; d++)
        if (o->desc.shape[d] != want->shape[d]) return 0;
    return dt__placements_eq(o->desc.placements, want->placements, m->ndim);
}

/* *out: reuse it if it has the result's spec (error otherwise), else make one */
static dt_status dt__out_prepare(const dt__call *c, dt_tensor **out, dt_tensor **o) {
    dt_status st;
    int i;
    if (!*out) return dt__tensor_make(c->fn, c->m, &c->out_public, NULL, 0, o);
    if (!dt__out_spec_same(*out, c->m, &c->out_public) &&
        (st = dt__check_out_spec(c->fn, *out, c->m, &c->out_public))) /* strided: copied (dt__dispatch) */
        return st;
    if (!(c->def->flags & DT__ELEMENTWISE))
        for (i = 0; i < c->nin; i++)
            if (c->in[i].t && (c->in[i].t == *out || ((*out)->bytes && c->in[i].t->data == (*out)->data)))
                return dt__fail(DT_ERR_ARG, "%s: *out is the input %s; this op cannot run in place", c->fn,
                                c->in[i].name);
    *o = *out;
    return DT_OK;
}

/* A strided *out (local_strides, local_ghost): the op runs into one
   contiguous copy of its shard (read in first: every byte the op leaves
   alone keeps its value), written back through the strides only once the
   op has succeeded; the padding is never written. */
static dt_status dt__dispatch(dt__call *c, dt_tensor **out) {
    dt_tensor *o = NULL, contig;
    void *obuf = NULL;
    dt_status st;
    if (!out) return dt__call_refused(c, dt__fail(DT_ERR_ARG, "%s: out is NULL", c->fn));
    if (!(st = dt__propagate(c, dt__families[c->def->family].infer))) {
        c->out.device = c->out_public.device = c->in[0].d->device;
        st = dt__out_prepare(c, out, &o);
    }
    /* (allocated before the ranks compare: a failure here fails every rank together) */
    if (!st && o && o == *out && o->strided) st = dt__contig_copy(c->fn, o, 1, &contig, &obuf);
    if (st) st = dt__within(c->fn, st);
    /* consistency checks: once per public op, before anything moves */
    if (dt__checks_on() && c->m->size > 1 && c->m->rank >= 0 &&
        (st = dt__consistent(c->m, c->fn, st, st ? 0 : dt__call_hash(c), dt__describe_call, c))) {
        if (o) dt__contig_free(o, obuf);
        if (o && o != *out) dt_tensor_destroy(o);
        return st;
    }
    if (st) { if (o) dt__contig_free(o, obuf); return st; }
    if ((st = dt__run(c, obuf ? &contig : o))) {
        dt__contig_free(o, obuf);
        if (o != *out) dt_tensor_destroy(o);
        return dt__within(c->fn, st);
    }
    if (obuf) {
        st = dt__contig_write_back(c->fn, o, obuf);
        dt__contig_free(o, obuf);
        if (st) return dt__within(c->fn, st);
    }
    *out = o;
    return DT_OK;
}

/* ---- the public ops ---- */

static dt_status dt__unary(int op, const char *fn, const dt_tensor *x, double a, dt_tensor **out) {
    dt__call c;
    dt_status st;
    dt__call_init(&c, op, fn);
    c.a = a;
    if ((st = dt__call_in(&c, x, "x", 0)) || (st = dt__call_check(&c))) return st;
    if (!dt__is_float(x->desc.dtype) && (op == DT__OP_SCALE || op == DT__OP_SCALE_NEG || op == DT__OP_SHIFT ||
                                         op == DT__OP_FILL) && a != (double)(int64_t)a)
        return dt__call_refused(&c, dt__fail(DT_ERR_ARG, "%s: a = %g is not an integer, and x is %s", fn, a,
                                             dt_dtype_name(x->desc.dtype)));
    return dt__dispatch(&c, out);
}

/* the plain unary ops' definitions, one per PLAIN line of DT__UNARY_OPS
   (their prototypes and docs are in the public part) */
#define DT__WRAP_PLAIN(NAME, name) \
    DT_API dt_status dt_##name(const dt_tensor *x, dt_tensor **out) {                    \
        DT__PUBLIC("dt_" #name, dt__unary(DT__OP_##NAME, "dt_" #name, x, 0, out));       \
    }
#define DT__WRAP_ARG(NAME, name) /* written below, by hand */
#define DT__WRAP(NAME, name, wrap, fl, pm, fmath, imath) DT__WRAP_##wrap(NAME, name)
DT__UNARY_OPS(DT__WRAP) DT__DEFS_END;
#undef DT__WRAP
#undef DT__WRAP_PLAIN
#undef DT__WRAP_ARG

DT_API dt_status dt_scale(const dt_tensor *x, double a, dt_tensor **out) {
    DT__PUBLIC("dt_scale", dt__unary(a < 0 ? DT__OP_SCALE_NEG : DT__OP_SCALE, "dt_scale", x, a, out));
}
DT_API dt_status dt_shift(const dt_tensor *x, double a, dt_tensor **out) {
    DT__PUBLIC("dt_shift", dt__unary(DT__OP_SHIFT, "dt_shift", x, a, out));
}
DT_API dt_status dt_pow(const dt_tensor *x, double p, dt_tensor **out) {
    DT__PUBLIC("dt_pow", dt__unary(DT__OP_POW, "dt_pow", x, p, out));
}
DT_API dt_status dt_fill(const dt_tensor *x, double v, dt_tensor **out) {
    DT__PUBLIC("dt_fill", dt__unary(DT__OP_FILL, "dt_fill", x, v, out));
}

static dt_status dt__cast_body(const dt_tensor *x, dt_dtype to, dt_tensor **out) {
    dt__call c;
    dt_status st;
    dt__call_init(&c, DT__OP_CAST, "dt_cast");
    if ((st = dt__call_in(&c, x, "x", 0)) || (st = dt__call_check(&c))) return st;
    if (!dt__dtype_valid(to)) return dt__call_refused(&c, dt__fail(DT_ERR_DTYPE, "dt_cast: to = %d is not a dt_dtype", (int)to));
    if (dt__is_complex(x->desc.dtype) && !dt__is_complex(to))
        return dt__call_refused(&c, dt__fail(DT_ERR_DTYPE, "dt_cast: x is %s and to = %s: a cast would drop the "
                                             "imaginary part (cast to c64/c128 only)", dt_dtype_name(x->desc.dtype),
                                             dt_dtype_name(to)));
    if (dt__is_complex(to) && (st = dt__check_complex_partial("dt_cast", to, x->desc.placements, x->mesh->ndim)))
        return dt__call_refused(&c, st);
    dt__call_arg(&c, (int64_t)to);
    return dt__dispatch(&c, out);
}
DT_API dt_status dt_cast(const dt_tensor *x, dt_dtype to, dt_tensor **out) {
    DT__PUBLIC("dt_cast", dt__cast_body(x, to, out));
}

static dt_status dt__binary(int op, const char *fn, const dt_tensor *a, const dt_tensor *b, dt_tensor **out) {
    dt__call c;
    dt_status st;
    dt__call_init(&c, op, fn);
    if ((st = dt__call_in(&c, a, "a", 0)) || (st = dt__call_in(&c, b, "b", 0)) || (st = dt__call_check(&c))) return st;
    return dt__dispatch(&c, out);
}

DT_API dt_status dt_add(const dt_tensor *a, const dt_tensor *b, dt_tensor **out) {
    DT__PUBLIC("dt_add", dt__binary(DT__OP_ADD, "dt_add", a, b, out));
}
DT_API dt_status dt_sub(const dt_tensor *a, const dt_tensor *b, dt_tensor **out) {
    DT__PUBLIC("dt_sub", dt__binary(DT__OP_SUB, "dt_sub", a, b, out));
}
DT_API dt_status dt_mul(const dt_tensor *a, const dt_tensor *b, dt_tensor **out) {
    DT__PUBLIC("dt_mul", dt__binary(DT__OP_MUL, "dt_mul", a, b, out));
}
DT_API dt_status dt_div(const dt_tensor *a, const dt_tensor *b, dt_tensor **out) {
    DT__PUBLIC("dt_div", dt__binary(DT__OP_DIV, "dt_div", a, b, out));
}
DT_API dt_status dt_maximum(const dt_tensor *a, const dt_tensor *b, dt_tensor **out) {
    DT__PUBLIC("dt_maximum", dt__binary(DT__OP_MAXIMUM, "dt_maximum", a, b, out));
}
DT_API dt_status dt_minimum(const dt_tensor *a, const dt_tensor *b, dt_tensor **out) {
    DT__PUBLIC("dt_minimum", dt__binary(DT__OP_MINIMUM, "dt_minimum", a, b, out));
}

/* y keeps its spec, but an integer Partial(AVG) y (over more than one
   rank) cannot take a*x + y exactly part by part (the mean is truncated):
   refused, not rounded twice */
static dt_status dt__axpy_int_avg(const dt_tensor *y) {
    int i;
    for (i = 0; i < y->mesh->ndim; i++)
        if (y->desc.placements[i].kind == DT_PARTIAL && y->mesh->shape[i] > 1 &&
            dt__int_avg(y->desc.dtype, (dt_reduce)y->desc.placements[i].reduce))
            return dt__fail(DT_ERR_PLACEMENT, "dt_axpy: y is %s and Partial(avg) on mesh dim %d; an integer average "
                            "is truncated, so y = a*x + y cannot be updated in place exactly (redistribute y to "
                            "Replicate first)", dt_dtype_name(y->desc.dtype), i);
    return DT_OK;
}

static dt_status dt__axpy_body(double a, const dt_tensor *x, dt_tensor *y) {
    dt__call c;
    dt_status st;
    dt_tensor *o = y;
    dt__call_init(&c, DT__OP_AXPY, "dt_axpy");
    c.a = a;
    c.keep = 1;
    if ((st = dt__call_in(&c, x, "x", 0)) || (st = dt__call_in(&c, y, "y", 0)) || (st = dt__call_check(&c))) return st;
    if (y->mesh != c.m) return dt__call_refused(&c, dt__fail(DT_ERR_MESH, "dt_axpy: y must live on x's mesh (it is written)"));
    if (!dt__is_float(y->desc.dtype) && a != (double)(int64_t)a)
        return dt__call_refused(&c, dt__fail(DT_ERR_ARG, "dt_axpy: a = %g is not an integer, and y is %s", a,
                                             dt_dtype_name(y->desc.dtype)));
    if ((st = dt__axpy_int_avg(y))) return dt__call_refused(&c, st);
    return dt__dispatch(&c, &o);
}
DT_API dt_status dt_axpy(double a, const dt_tensor *x, dt_tensor *y) { DT__PUBLIC("dt_axpy", dt__axpy_body(a, x, y)); }

static dt_status dt__reduce_call(int op, const char *fn, const dt_tensor *x, int ndims, const int *dims, int keepdim,
                                 dt__call *c) {
    dt_status st;
    unsigned mask = 0;
    int i, d;
    dt__call_init(c, op, fn);
    if ((st = dt__call_in(c, x, "x", 0))) return st;
    if ((st = dt__call_check(c))) {
        if (st == DT_ERR_DTYPE && op == DT__OP_MEAN && !dt__is_float(x->desc.dtype)) {
            /* the dims too: a mean over an empty extent is 0/0, which no integer holds */
            char sh[160], dl[160];
            size_t len = 0;
            dl[0] = 0;
            for (i = 0; dims && i < ndims && len < sizeof dl; i++)
                len += (size_t)snprintf(dl + len, sizeof dl - len, "%s%d", i ? ", " : "", dims[i]);
            dt__fail(DT_ERR_DTYPE, "%s: x is %s %s, dims {%s}%s: the mean of integers is not defined (0/0 over an empty "
                     "extent has no integer value; over the others it would truncate): dt_cast x to a floating "
                     "dtype first, or reduce with dt_sum and divide", fn, dt_dtype_name(x->desc.dtype),
                     dt__shape_str(x->desc.shape, x->desc.ndim, sh, sizeof sh), dl,
                     ndims <= 0 || !dims ? " (all dims)" : "");
        }
        return st;
    }
    if (ndims < 0) return dt__call_refused(c, dt__fail(DT_ERR_ARG, "%s: ndims = %d is negative", fn, ndims));
    if (!dims) ndims = 0; /* documented: NULL dims means all dims */
    if (op == DT__OP_ARGMAX && ndims > 1)
        return dt__call_refused(c, dt__fail(DT_ERR_ARG, "dt_argmax: ndims = %d; argmax takes one dim or all (0)", ndims));
    for (i = 0; i < ndims; i++) {
        if ((st = dt__norm_dim(c, "dims[i]", dims[i], x->desc.ndim, &d))) return dt__call_refused(c, st);
        if (mask >> d & 1u) return dt__call_refused(c, dt__fail(DT_ERR_SHAPE, "%s: dim %d is listed twice", fn,
                                                                    dt__tdim(d, x->desc.ndim)));
        mask |= 1u << d;
    }
    if (ndims == 0 || !dims) mask = (1u << x->desc.ndim) - 1u;
    dt__call_arg(c, (int64_t)mask);
    dt__call_arg(c, keepdim != 0);
    return DT_OK;
}

static dt_status dt__reduce(int op, const char *fn, const dt_tensor *x, int ndims, const int *dims, int keepdim,
                            dt_tensor **out) {
    dt__call c;
    dt_status st = dt__reduce_call(op, fn, x, ndims, dims, keepdim, &c);
    return st ? st : dt__dispatch(&c, out);
}
#define DT__REDUCE(fname, op)                                                                         \
    DT_API dt_status fname(const dt_tensor *x, int ndims, const int *dims, int keepdim, dt_tensor **out) { \
        DT__PUBLIC(#fname, dt__reduce(op, #fname, x, ndims, dims, keepdim, out));                     \
    }                                                                                                 \
    DT__DEFS_END
DT__REDUCE(dt_sum, DT__OP_SUM);
DT__REDUCE(dt_mean, DT__OP_MEAN);
DT__REDUCE(dt_max, DT__OP_MAX);
DT__REDUCE(dt_min, DT__OP_MIN);
DT__REDUCE(dt_norm2, DT__OP_NORM2);
DT__REDUCE(dt_argmax, DT__OP_ARGMAX);
#undef DT__REDUCE

static dt_status dt__matmul(int op, const char *fn, const dt_tensor *a, const dt_tensor *b, const dt_tensor *e,
                            int weight, dt_tensor **out) {
    dt__call call, *c = &call;
    dt_status st;
    dt__call_init(c, op, fn);
    if ((st = dt__call_in(c, a, op == DT__OP_LINEAR ? "x" : "a", 0)) ||
        (st = dt__call_in(c, b, op == DT__OP_LINEAR ? "w" : "b", 0)))
        return st;
    if (op == DT__OP_LINEAR && (st = dt__call_in(c, e, "bias", 1))) return st;
    if ((st = dt__call_check(c))) return st;
    if (op == DT__OP_MM && (a->desc.ndim != 2 || b->desc.ndim != 2))
        return dt__call_refused(c, dt__fail(DT_ERR_SHAPE, "dt_mm: a is %d-d and b is %d-d; both must be 2-D",
                                            a->desc.ndim, b->desc.ndim));
    if (op == DT__OP_BMM && (a->desc.ndim != 3 || b->desc.ndim != 3 || a->desc.shape[0] != b->desc.shape[0]))
        return dt__call_refused(c, dt__fail(DT_ERR_SHAPE, "dt_bmm: a and b must be 3-D with equal batch (got %d-d "
                                            "and %d-d)", a->desc.ndim, b->desc.ndim));
    if (op == DT__OP_DOT && (a->desc.ndim != 1 || b->desc.ndim != 1))
        return dt__call_refused(c, dt__fail(DT_ERR_SHAPE, "dt_dot: a is %d-d and b is %d-d; both must be 1-D",
                                            a->desc.ndim, b->desc.ndim));
    dt__call_arg(c, weight);
    return dt__dispatch(c, out);
}

static dt_status dt__mm_budget_body(dt_mesh *m, int64_t bytes) {
    if (!m) return dt__fail(DT_ERR_ARG, "dt_mesh_set_matmul_budget: mesh is NULL");
    if (bytes < 0) return dt__fail(DT_ERR_ARG, "dt_mesh_set_matmul_budget: bytes = %lld is negative", (long long)bytes);
    m->mm_budget = bytes;
    return DT_OK;
}
DT_API dt_status dt_mesh_set_matmul_budget(dt_mesh *m, int64_t bytes) {
    DT__PUBLIC("dt_mesh_set_matmul_budget", dt__mm_budget_body(m, bytes));
}

DT_API dt_status dt_matmul(const dt_tensor *a, const dt_tensor *b, dt_tensor **out) {
    DT__PUBLIC("dt_matmul", dt__matmul(DT__OP_MATMUL, "dt_matmul", a, b, NULL, 0, out));
}
DT_API dt_status dt_mm(const dt_tensor *a, const dt_tensor *b, dt_tensor **out) {
    DT__PUBLIC("dt_mm", dt__matmul(DT__OP_MM, "dt_mm", a, b, NULL, 0, out));
}
DT_API dt_status dt_bmm(const dt_tensor *a, const dt_tensor *b, dt_tensor **out) {
    DT__PUBLIC("dt_bmm", dt__matmul(DT__OP_BMM, "dt_bmm", a, b, NULL, 0, out));
}
DT_API dt_status dt_dot(const dt_tensor *a, const dt_tensor *b, dt_tensor **out) {
    DT__PUBLIC("dt_dot", dt__matmul(DT__OP_DOT, "dt_dot", a, b, NULL, 0, out));
}
DT_API dt_status dt_linear(const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias, dt_tensor **out) {
    DT__PUBLIC("dt_linear", dt__matmul(DT__OP_LINEAR, "dt_linear", x, w, bias, 1, out));
}
static dt_status dt__addmm_body(const dt_tensor *cm, const dt_tensor *a, const dt_tensor *b, double beta, double alpha,
                                dt_tensor **out) {
    dt__call c;
    dt_status st;
    dt__call_init(&c, DT__OP_ADDMM, "dt_addmm");
    c.a = alpha;
    c.b = beta;
    if ((st = dt__call_in(&c, a, "a", 0)) || (st = dt__call_in(&c, b, "b", 0)) || (st = dt__call_in(&c, cm, "c", 0)) ||
        (st = dt__call_check(&c)))
        return st;
    if (a->desc.ndim != 2 || b->desc.ndim != 2)
        return dt__call_refused(&c, dt__fail(DT_ERR_SHAPE, "dt_addmm: a is %d-d and b is %d-d; both must be 2-D",
                                             a->desc.ndim, b->desc.ndim));
    if (!dt__is_float(a->desc.dtype) && (alpha != (double)(int64_t)alpha || beta != (double)(int64_t)beta))
        return dt__call_refused(&c, dt__fail(DT_ERR_ARG, "dt_addmm: alpha = %g, beta = %g must be integers for %s "
                                             "tensors", alpha, beta, dt_dtype_name(a->desc.dtype)));
    dt__call_arg(&c, 0);
    return dt__dispatch(&c, out);
}
DT_API dt_status dt_addmm(const dt_tensor *cm, const dt_tensor *a, const dt_tensor *b, double beta, double alpha,
                          dt_tensor **out) {
    DT__PUBLIC("dt_addmm", dt__addmm_body(cm, a, b, beta, alpha, out));
}

static dt_status dt__softmax(int op, const char *fn, const dt_tensor *x, int dim, dt_tensor **out) {
    dt__call c;
    dt_status st;
    int d;
    dt__call_init(&c, op, fn);
    if ((st = dt__call_in(&c, x, "x", 0)) || (st = dt__call_check(&c))) return st;
    if ((st = dt__norm_dim(&c, "dim", dim, x->desc.ndim, &d))) return dt__call_refused(&c, st);
    dt__call_arg(&c, d);
    return dt__dispatch(&c, out);
}
DT_API dt_status dt_softmax(const dt_tensor *x, int dim, dt_tensor **out) {
    DT__PUBLIC("dt_softmax", dt__softmax(DT__OP_SOFTMAX, "dt_softmax", x, dim, out));
}
DT_API dt_status dt_log_softmax(const dt_tensor *x, int dim, dt_tensor **out) {
    DT__PUBLIC("dt_log_softmax", dt__softmax(DT__OP_LOG_SOFTMAX, "dt_log_softmax", x, dim, out));
}

static dt_status dt__layer_norm_body(const dt_tensor *x, const dt_tensor *w, const dt_tensor *b, double eps, dt_tensor **out) {
    dt__call c;
    dt_status st;
    dt__call_init(&c, DT__OP_LAYER_NORM, "dt_layer_norm");
    c.a = eps;
    if ((st = dt__call_in(&c, x, "x", 0)) || (st = dt__call_in(&c, w, "w", 1)) || (st = dt__call_in(&c, b, "b", 1)) ||
        (st = dt__call_check(&c)))
        return st;
    return dt__dispatch(&c, out);
}
DT_API dt_status dt_layer_norm(const dt_tensor *x, const dt_tensor *w, const dt_tensor *b, double eps, dt_tensor **out) {
    DT__PUBLIC("dt_layer_norm", dt__layer_norm_body(x, w, b, eps, out));
}

static dt_status dt__rms_norm_body(const dt_tensor *x, const dt_tensor *w, double eps, dt_tensor **out) {
    dt__call c;
    dt_status st;
    dt__call_init(&c, DT__OP_RMS_NORM, "dt_rms_norm");
    c.a = eps;
    if ((st = dt__call_in(&c, x, "x", 0)) || (st = dt__call_in(&c, w, "w", 1)) || (st = dt__call_check(&c))) return st;
    return dt__dispatch(&c, out);
}
DT_API dt_status dt_rms_norm(const dt_tensor *x, const dt_tensor *w, double eps, dt_tensor **out) {
    DT__PUBLIC("dt_rms_norm", dt__rms_norm_body(x, w, eps, out));
}

static dt_status dt__view_call(int op, const char *fn, const dt_tensor *x, dt__call *c) {
    dt_status st;
    dt__call_init(c, op, fn);
    if ((st = dt__call_in(c, x, "x", 0)) || (st = dt__call_check(c))) return st;
    return DT_OK;
}

static dt_status dt__permute_body(const dt_tensor *x, const int *perm, dt_tensor **out) {
    dt__call c;
    dt_status st;
    unsigned seen = 0;
    int j, d;
    if ((st = dt__view_call(DT__OP_PERMUTE, "dt_permute", x, &c))) return st;
    if (!perm && x->desc.ndim) return dt__call_refused(&c, dt__fail(DT_ERR_ARG, "dt_permute: perm is NULL"));
    for (j = 0; j < x->desc.ndim; j++) {
        if ((st = dt__norm_dim(&c, "perm[j]", perm[j], x->desc.ndim, &d))) return dt__call_refused(&c, st);
        if (seen >> d & 1u) return dt__call_refused(&c, dt__fail(DT_ERR_SHAPE, "dt_permute: perm lists dim %d twice",
                                                                    dt__tdim(d, x->desc.ndim)));
        seen |= 1u << d;
        dt__call_arg(&c, d);
    }
    return dt__dispatch(&c, out);
}
DT_API dt_status dt_permute(const dt_tensor *x, const int *perm, dt_tensor **out) {
    DT__PUBLIC("dt_permute", dt__permute_body(x, perm, out));
}

static dt_status dt__transpose_body(const dt_tensor *x, int d0, int d1, dt_tensor **out) {
    dt__call c;
    dt_status st;
    int a, b, j;
    if ((st = dt__view_call(DT__OP_TRANSPOSE, "dt_transpose", x, &c))) return st;
    if ((st = dt__norm_dim(&c, "d0", d0, x->desc.ndim, &a)) || (st = dt__norm_dim(&c, "d1", d1, x->desc.ndim, &b)))
        return dt__call_refused(&c, st);
    for (j = 0; j < x->desc.ndim; j++) dt__call_arg(&c, j == a ? b : j == b ? a : j);
    return dt__dispatch(&c, out);
}
DT_API dt_status dt_transpose(const dt_tensor *x, int d0, int d1, dt_tensor **out) {
    DT__PUBLIC("dt_transpose", dt__transpose_body(x, d0, d1, out));
}

static dt_status dt__squeeze_body(const dt_tensor *x, int dim, dt_tensor **out) {
    dt__call c;
    dt_status st;
    int d;
    if ((st = dt__view_call(DT__OP_SQUEEZE, "dt_squeeze", x, &c))) return st;
    if ((st = dt__norm_dim(&c, "dim", dim, x->desc.ndim, &d))) return dt__call_refused(&c, st);
    dt__call_arg(&c, x->desc.shape[d] == 1 ? d : -1);
    return dt__dispatch(&c, out);
}
DT_API dt_status dt_squeeze(const dt_tensor *x, int dim, dt_tensor **out) {
    DT__PUBLIC("dt_squeeze", dt__squeeze_body(x, dim, out));
}

static dt_status dt__unsqueeze_body(const dt_tensor *x, int dim, dt_tensor **out) {
    dt__call c;
    dt_status st;
    int d;
    if ((st = dt__view_call(DT__OP_UNSQUEEZE, "dt_unsqueeze", x, &c))) return st;
    if (x->desc.ndim >= DT_MAX_DIMS)
        return dt__call_refused(&c, dt__fail(DT_ERR_SHAPE, "dt_unsqueeze: x already has DT_MAX_DIMS = %d dims", DT_MAX_DIMS));
    if ((st = dt__norm_dim(&c, "dim", dim, x->desc.ndim + 1, &d))) return dt__call_refused(&c, st);
    dt__call_arg(&c, d);
    return dt__dispatch(&c, out);
}
DT_API dt_status dt_unsqueeze(const dt_tensor *x, int dim, dt_tensor **out) {
    DT__PUBLIC("dt_unsqueeze", dt__unsqueeze_body(x, dim, out));
}

static dt_status dt__reshape_body(const dt_tensor *x, int ndim, const int64_t *shape, dt_tensor **out) {
    dt__call c;
    dt_status st;
    int j, infer = -1;
    int64_t known = 1, total = 1;
    char s1[160], s2[160];
    if ((st = dt__view_call(DT__OP_RESHAPE, "dt_reshape", x, &c))) return st;
    if (ndim < 0 || ndim > DT_MAX_DIMS)
        return dt__call_refused(&c, dt__fail(DT_ERR_SHAPE, "dt_reshape: ndim = %d, must be 0..%d", ndim, DT_MAX_DIMS));
    if (ndim && !shape) return dt__call_refused(&c, dt__fail(DT_ERR_ARG, "dt_reshape: shape is NULL"));
    for (j = 0; j < x->desc.ndim; j++) total *= x->desc.shape[j];
    for (j = 0; j < ndim; j++) {
        if (shape[j] == -1 && infer < 0) { infer = j; continue; }
        if (shape[j] < 0)
            return dt__call_refused(&c, dt__fail(DT_ERR_SHAPE, "dt_reshape: shape[%d] = %lld (only one -1 is allowed)",
                                                 j, (long long)shape[j]));
        if (shape[j] && known > INT64_MAX / shape[j])
            return dt__call_refused(&c, dt__fail(DT_ERR_SHAPE, "dt_reshape: the new shape overflows int64"));
        known *= shape[j];
    }
    for (j = 0; j < ndim; j++)
        dt__call_arg(&c, j == infer ? (known ? total / known : 0) : shape[j]);
    /* (before the shape inference, whose grouping multiplies spans of these dims) */
    if ((st = dt__shape_fits("dt_reshape", "the new shape", x->desc.dtype, ndim, c.arg)))
        return dt__call_refused(&c, st);
    if ((infer >= 0 ? (known == 0 || total % known) : known != total))
        return dt__call_refused(&c, dt__fail(DT_ERR_SHAPE, "dt_reshape: x %s has %lld elements, the shape %s cannot "
                                             "hold them", dt__shape_str(x->desc.shape, x->desc.ndim, s1, sizeof s1),
                                             (long long)total, dt__shape_str(shape, ndim, s2, sizeof s2)));
    return dt__dispatch(&c, out);
}
DT_API dt_status dt_reshape(const dt_tensor *x, int ndim, const int64_t *shape, dt_tensor **out) {
    DT__PUBLIC("dt_reshape", dt__reshape_body(x, ndim, shape, out));
}

static dt_status dt__narrow_body(const dt_tensor *x, int dim, int64_t start, int64_t length, dt_tensor **out) {
    dt__call c;
    dt_status st;
    int d;
    if ((st = dt__view_call(DT__OP_NARROW, "dt_narrow", x, &c))) return st;
    if ((st = dt__norm_dim(&c, "dim", dim, x->desc.ndim, &d))) return dt__call_refused(&c, st);
    if (start < 0 || length < 0 || start > x->desc.shape[d] - length)
        return dt__call_refused(&c, dt__fail(DT_ERR_SHAPE, "dt_narrow: [%lld, %lld + %lld) is outside dim %d of size "
                                             "%lld", (long long)start, (long long)start, (long long)length, dt__tdim(d, x->desc.ndim),
                                             (long long)x->desc.shape[d]));
    dt__call_arg(&c, d);
    dt__call_arg(&c, start);
    dt__call_arg(&c, length);
    return dt__dispatch(&c, out);
}
DT_API dt_status dt_narrow(const dt_tensor *x, int dim, int64_t start, int64_t length, dt_tensor **out) {
    DT__PUBLIC("dt_narrow", dt__narrow_body(x, dim, start, length, out));
}

static dt_status dt__cat(int op, const char *fn, int n, const dt_tensor *const *xs, int dim, dt_tensor **out) {
    static const char *names[DT__MAX_IN] = {"xs[0]", "xs[1]", "xs[2]", "xs[3]", "xs[4]", "xs[5]", "xs[6]", "xs[7]"};
    dt__call c;
    dt_status st;
    int i, d;
    dt__call_init(&c, op, fn);
    if (n < 1 || n > DT__MAX_IN) return dt__fail(DT_ERR_ARG, "%s: n = %d, must be 1..%d", fn, n, DT__MAX_IN);
    if (!xs) return dt__fail(DT_ERR_ARG, "%s: xs is NULL", fn);
    for (i = 0; i < n; i++)
        if ((st = dt__call_in(&c, xs[i], names[i], 0))) return st;
    if ((st = dt__call_check(&c))) return st;
    for (i = 0; i < n; i++)
        if (xs[i]->mesh != c.m)
            return dt__call_refused(&c, dt__fail(DT_ERR_MESH, "%s: %s lives on another mesh than xs[0]", fn, names[i]));
    if (op == DT__OP_STACK && xs[0]->desc.ndim >= DT_MAX_DIMS)
        return dt__call_refused(&c, dt__fail(DT_ERR_SHAPE, "dt_stack: the result would have more than DT_MAX_DIMS dims"));
    if ((st = dt__norm_dim(&c, "dim", dim, xs[0]->desc.ndim + (op == DT__OP_STACK), &d))) return dt__call_refused(&c, st);
    dt__call_arg(&c, d);
    return dt__dispatch(&c, out);
}
DT_API dt_status dt_cat(int n, const dt_tensor *const *xs, int dim, dt_tensor **out) {
    DT__PUBLIC("dt_cat", dt__cat(DT__OP_CAT, "dt_cat", n, xs, dim, out));
}
DT_API dt_status dt_stack(int n, const dt_tensor *const *xs, int dim, dt_tensor **out) {
    DT__PUBLIC("dt_stack", dt__cat(DT__OP_STACK, "dt_stack", n, xs, dim, out));
}

/* one move of the split dim (if it is sharded), then local narrows */
static dt_status dt__split_body(const dt_tensor *x, int dim, int n, const int64_t *sizes, dt_tensor **outs) {
    dt__call c;
    dt_status st = DT_OK;
    dt_placement pl[DT_MAX_MESH_DIMS];
    const dt_tensor *src = x;
    dt_tensor *moved = NULL;
    unsigned char *made = NULL; /* outs[i] was NULL on entry */
    int64_t off = 0;
    int i, d, sharded = 0;
    if ((st = dt__view_call(DT__OP_NARROW, "dt_split", x, &c))) return st;
    if ((st = dt__norm_dim(&c, "dim", dim, x->desc.ndim, &d))) return dt__call_refused(&c, st);
    if (n < 1 || !sizes || !outs)
        return dt__call_refused(&c, dt__fail(DT_ERR_ARG, "dt_split: n = %d, sizes and outs must be given", n));
    for (i = 0; i < n; i++) {
        if (sizes[i] < 0 || sizes[i] > x->desc.shape[d] - off)
            return dt__call_refused(&c, dt__fail(DT_ERR_SHAPE, "dt_split: sizes[%d] = %lld does not fit dim %d of "
                                                 "size %lld", i, (long long)sizes[i], dt__tdim(d, x->desc.ndim),
                                                 (long long)x->desc.shape[d]));
        off += sizes[i];
    }
    if (off != x->desc.shape[d])
        return dt__call_refused(&c, dt__fail(DT_ERR_SHAPE, "dt_split: sizes add up to %lld, dim %d has %lld",
                                             (long long)off, dt__tdim(d, x->desc.ndim), (long long)x->desc.shape[d]));
    memcpy(pl, x->desc.placements, sizeof pl);
    for (i = 0; i < x->mesh->ndim; i++)
        if (pl[i].kind == DT_SHARD && pl[i].dim == d) { pl[i] = dt_replicate(); sharded = 1; }
    if (sharded) {
        if ((st = dt_tensor_redistribute(x, pl, &moved))) return st;
        src = moved;
    }
    if ((st = dt__alloc("dt_split", (size_t)n, (void **)&made))) { dt_tensor_destroy(moved); return st; }
    for (i = 0; i < n; i++) made[i] = outs[i] == NULL;
    for (i = 0, off = 0; i < n && !st; i++) {
        st = dt_narrow(src, d, off, sizes[i], &outs[i]);
        off += sizes[i];
    }
    if (st) /* the pieces this call made are freed: the caller's outs are as they were */
        for (i = 0; i < n; i++)
            if (made[i] && outs[i]) { dt_tensor_destroy(outs[i]); outs[i] = NULL; }
    DT_FREE(made);
    dt_tensor_destroy(moved);
    return dt__within("dt_split", st);
}
DT_API dt_status dt_split(const dt_tensor *x, int dim, int n, const int64_t *sizes, dt_tensor **outs) {
    DT__PUBLIC("dt_split", dt__split_body(x, dim, n, sizes, outs));
}

/* a device tensor's smallest and largest index: two reductions on its
   device, one pair of scalars copied to the host (the copy waits for them) */
static dt_status dt__device_index_range(const dt__call *c, const dt_tensor *ix, int64_t *lo, int64_t *hi) {
    const dt__kernels *k = ix->dev->kernels();
    int64_t n = (int64_t)ix->numel, v[2] = {0, 0};
    int32_t w[2] = {0, 0};
    size_t es = dt_dtype_size(ix->desc.dtype);
    char *buf = NULL;
    dt_status st = dt__scratch_on(c->m, ix->dev, DT__SCRATCH_SCALAR, 2 * es, (void **)&buf);
    if (st) return st;
    k->reduce(DT__R_MIN, ix->desc.dtype, 1, &n, 1u, ix->data, buf, 1.0);
    k->reduce(DT__R_MAX, ix->desc.dtype, 1, &n, 1u, ix->data, buf + es, 1.0);
    if ((st = ix->dev->copy(c->fn, es == 4 ? (void *)w : (void *)v, buf, 2 * es)) || (st = ix->dev->sync(c->fn)))
        return st;
    *lo = es == 4 ? w[0] : v[0];
    *hi = es == 4 ? w[1] : v[1];
    return DT_OK;
}

/* out-of-range indices are refused on every rank before anything moves
   (a device tensor's are checked on its device: dt__device_index_range).
   `pre`: this rank's earlier argument error (it takes part in the same
   agreement, so the other ranks fail with it instead of waiting here) */
static dt_status dt__check_indices(const dt__call *c, const dt_tensor *ix, int64_t limit, const char *what,
                                   dt_status pre) {
    size_t i;
    dt_status st = pre, ag;
    if (!st && ix->numel && !dt__on_host(ix->dev)) {
        int64_t lo = 0, hi = 0;
        st = dt__device_index_range(c, ix, &lo, &hi);
        if (!st && (lo < 0 || hi >= limit))
            st = dt__fail(DT_ERR_ARG, "%s: %s holds %lld (its %s on this rank, device %d); valid indices are 0..%lld",
                          c->fn, what, (long long)(lo < 0 ? lo : hi), lo < 0 ? "minimum" : "maximum",
                          ix->desc.device, (long long)limit - 1);
    }
    for (i = 0; i < ix->numel && !st && dt__on_host(ix->dev); i++) {
        int64_t v = ix->desc.dtype == DT_I32 ? ((const int32_t *)ix->data)[i] : ((const int64_t *)ix->data)[i];
        if (v < 0 || v >= limit)
            st = dt__fail(DT_ERR_ARG, "%s: %s holds %lld at local element %zu; valid indices are 0..%lld", c->fn, what,
                          (long long)v, i, (long long)limit - 1);
    }
    if (c->m->rank < 0) return st;
    /* with consistency checks on, the ranks that accepted theirs get DT_ERR_MISMATCH (dt__agree_ex) */
    ag = dt__agree_ex(c->m->comm, c->fn, st, 0, NULL, NULL, dt__checks_on());
    if (ag && ((!st && ag != DT_ERR_MISMATCH) || dt__checks_on())) return ag;
    if (ag && !st) { /* every rank reports the bad argument, not a mismatch */
        char why[sizeof dt__errbuf];
        memcpy(why, dt__errbuf, sizeof why);
        st = dt__fail(DT_ERR_ARG, "%s: %s holds an index outside 0..%lld on another rank, or another rank's "
                      "arguments were refused (%s)", c->fn, what, (long long)limit - 1, why);
    }
    return st;
}

static dt_status dt__int_index(const dt__call *c, int i) {
    dt_dtype t = c->in[i].d->dtype;
    if (t == DT_I32 || t == DT_I64) return DT_OK;
    return dt__fail(DT_ERR_DTYPE, "%s: %s is %s; indices must be i32 or i64", c->fn, c->in[i].name, dt_dtype_name(t));
}

static dt_status dt__embedding_body(const dt_tensor *table, const dt_tensor *idx, dt_tensor **out) {
    dt__call c;
    dt_status st;
    dt__call_init(&c, DT__OP_EMBEDDING, "dt_embedding");
    if ((st = dt__call_in(&c, table, "table", 0)) || (st = dt__call_in(&c, idx, "idx", 0)) || (st = dt__call_check(&c)))
        return st;
    st = dt__int_index(&c, 1);
    if (!st && table->desc.ndim != 2)
        st = dt__fail(DT_ERR_SHAPE, "dt_embedding: table is %d-d, must be 2-D [V, D]", table->desc.ndim);
    if (!st && idx->mesh != c.m) st = dt__fail(DT_ERR_MESH, "dt_embedding: idx lives on another mesh than table");
    if ((st = dt__check_indices(&c, idx, table->desc.ndim == 2 ? table->desc.shape[0] : 0, "idx", st))) return st;
    return dt__dispatch(&c, out);
}
DT_API dt_status dt_embedding(const dt_tensor *table, const dt_tensor *idx, dt_tensor **out) {
    DT__PUBLIC("dt_embedding", dt__embedding_body(table, idx, out));
}

static dt_status dt__cross_entropy_body(const dt_tensor *logits, const dt_tensor *target, dt_tensor **out) {
    dt__call c;
    dt_status st;
    dt__call_init(&c, DT__OP_CROSS_ENTROPY, "dt_cross_entropy");
    if ((st = dt__call_in(&c, logits, "logits", 0)) || (st = dt__call_in(&c, target, "target", 0)) ||
        (st = dt__call_check(&c)))
        return st;
    st = dt__int_index(&c, 1);
    if (!st && !dt__is_float(logits->desc.dtype))
        st = dt__fail(DT_ERR_DTYPE, "dt_cross_entropy: logits are %s; they must be floating point",
                      dt_dtype_name(logits->desc.dtype));
    if (!st && target->mesh != c.m)
        st = dt__fail(DT_ERR_MESH, "dt_cross_entropy: target lives on another mesh than logits");
    if (logits->desc.ndim == 2) {
        if ((st = dt__check_indices(&c, target, logits->desc.shape[1], "target", st))) return st;
    } else if (st)
        return dt__call_refused(&c, st);
    return dt__dispatch(&c, out);
}
DT_API dt_status dt_cross_entropy(const dt_tensor *logits, const dt_tensor *target, dt_tensor **out) {
    DT__PUBLIC("dt_cross_entropy", dt__cross_entropy_body(logits, target, out));
}

/* >>rng -------------------------------------------------------------------
   The per-mesh Philox state and the random ops. The stream and the word ->
   value mapping are documented with the public functions (>>api). An op
   checks its arguments, has the kernel table's rng entry (>>kernels) fill
   this rank's box, then moves the offset on by the words the whole tensor
   spans, on every rank alike: no communication, and a rank outside the
   mesh keeps its offset in step by the same arithmetic. */

/* ---- state ---- */

static uint64_t dt__rng_words(const dt_tensor_desc *d, int w) {
    uint64_t n = 1;
    int i;
    for (i = 0; i < d->ndim; i++) n *= (uint64_t)d->shape[i];
    return ((uint64_t)w * n + 3u) & ~(uint64_t)3u; /* w*N <= 2 * bytes / 4 < 2^62: no overflow */
}

/* the stream has room for the op: a wrap would repeat numbers */
static dt_status dt__rng_room(const char *fn, const dt_mesh *m, uint64_t words) {
    if (words > UINT64_MAX - m->rng_offset)
        return dt__fail(DT_ERR_ARG, "%s: the RNG stream is used up (offset %llu + %llu words passes 2^64); "
                        "reseed with dt_manual_seed", fn, (unsigned long long)m->rng_offset,
                        (unsigned long long)words);
    return DT_OK;
}

/* collective: every mesh rank must pass the same (seed, offset) */
static dt_status dt__rng_agree(dt_mesh *m, const char *fn, uint64_t seed, uint64_t offset) {
    int64_t mine[2], *all = NULL, v[8], nomem;
    int j, bad = 0, first = -1;
    dt_status st, ast;
    if (m->rank < 0 || m->size == 1) return DT_OK;
    /* one reduction that allocates nothing tells whether all agree (the common case) */
    dt__ctl_words(seed, v);
    dt__ctl_words(offset, v + 4);
    if ((st = dt__comm_allmax_ctl(m->comm, v, 8))) return dt__within(fn, st);
    if (dt__ctl_same(v) && dt__ctl_same(v + 4)) return DT_OK;
    /* they differ: gather who passed what, after agreeing that every rank has the room */
    ast = dt__alloc(fn, 2 * (size_t)m->size * (sizeof(int64_t) + sizeof(size_t)), (void **)&all);
    nomem = ast != DT_OK;
    if ((st = dt__comm_allmax_ctl(m->comm, &nomem, 1))) { DT_FREE(all); return dt__within(fn, st); }
    if (nomem || ast) {
        DT_FREE(all);
        return ast ? ast : dt__fail(DT_ERR_NOMEM, "%s: a mesh rank ran out of memory comparing the states; state "
                                    "unchanged", fn);
    }
    mine[0] = (int64_t)seed;
    mine[1] = (int64_t)offset;
    if ((st = dt__comm_allgather_ctl_into(m->comm, mine, 2, all, (size_t *)(all + 2 * m->size)))) {
        DT_FREE(all);
        return dt__within(fn, st);
    }
    for (j = 1; j < m->size; j++)
        if (all[2 * j] != all[0] || all[2 * j + 1] != all[1]) { bad++; if (first < 0) first = j; }
    if (bad)
        st = dt__fail(DT_ERR_MISMATCH, "%s: the mesh ranks disagree: mesh rank 0 passed seed %llu offset %llu, "
                      "mesh rank %d passed seed %llu offset %llu (%d rank%s differ from rank 0); state unchanged", fn,
                      (unsigned long long)all[0], (unsigned long long)all[1], first,
                      (unsigned long long)all[2 * first], (unsigned long long)all[2 * first + 1], bad,
                      bad == 1 ? "" : "s");
    DT_FREE(all);
    return st;
}

static dt_status dt__rng_set(const char *fn, dt_mesh *m, uint64_t seed, uint64_t offset) {
    dt_status st;
    if (!m) return dt__fail(DT_ERR_ARG, "%s: mesh is NULL", fn);
    if ((st = dt__rng_agree(m, fn, seed, offset))) return dt__within(fn, st); /* (a backend failure names no call) */
    m->rng_seed = seed;
    m->rng_offset = offset;
    return DT_OK;
}

DT_API dt_status dt_manual_seed(dt_mesh *m, uint64_t seed) {
    DT__PUBLIC("dt_manual_seed", dt__rng_set("dt_manual_seed", m, seed, 0));
}
DT_API dt_status dt_rng_set_state(dt_mesh *m, uint64_t seed, uint64_t offset) {
    DT__PUBLIC("dt_rng_set_state", dt__rng_set("dt_rng_set_state", m, seed, offset));
}

static dt_status dt__rng_get_state_body(const dt_mesh *m, uint64_t *seed, uint64_t *offset) {
    if (!m) return dt__fail(DT_ERR_ARG, "dt_rng_get_state: mesh is NULL");
    if (!seed || !offset) return dt__fail(DT_ERR_ARG, "dt_rng_get_state: %s is NULL", seed ? "offset" : "seed");
    *seed = m->rng_seed;
    *offset = m->rng_offset;
    return DT_OK;
}
DT_API dt_status dt_rng_get_state(const dt_mesh *m, uint64_t *seed, uint64_t *offset) {
    DT__PUBLIC("dt_rng_get_state", dt__rng_get_state_body(m, seed, offset));
}

/* ---- the random ops ---- */

static int dt__rng_w(dt_dtype t) {
    return t == DT_C128 ? 4 : t == DT_F64 || t == DT_I64 || t == DT_C64 ? 2 : 1;
}

/* the kernel's call, complex as the doubled last dim of its part dtype (the
   API's spec: element g is the part values 2g, 2g+1), so every device's
   real kernel fills it */
static void dt__rng_call(const dt__kernels *k, const dt__rng_op *op, int nd, const int64_t *gs, const int64_t *lo,
                         const int64_t *ext, void *y) {
    int64_t g2[DT_MAX_DIMS], lo2[DT_MAX_DIMS], ext2[DT_MAX_DIMS];
    dt__rng_op part;
    if (!dt__is_complex(op->t)) { k->rng(op, nd, gs, lo, ext, y); return; }
    part = *op;
    part.t = dt__part_dtype(op->t);
    part.w = op->w / 2;
    if (nd == 0) { /* a scalar: one pair */
        g2[0] = ext2[0] = 2;
        lo2[0] = 0;
        k->rng(&part, 1, g2, lo2, ext2, y);
        return;
    }
    memcpy(g2, gs, (size_t)nd * sizeof *gs);
    memcpy(lo2, lo, (size_t)nd * sizeof *lo);
    memcpy(ext2, ext, (size_t)nd * sizeof *ext);
    g2[nd - 1] *= 2;
    lo2[nd - 1] *= 2;
    ext2[nd - 1] *= 2;
    k->rng(&part, nd, g2, lo2, ext2, y);
}

/* the distributions with no complex meaning in torch */
static dt_status dt__rng_not_complex(const char *fn, dt_dtype t) {
    if (!dt__is_complex(t)) return DT_OK;
    return dt__fail(DT_ERR_DTYPE, "%s: the tensor is %s; this distribution is not defined for complex dtypes "
                    "(dt_uniform_, dt_normal_, dt_tensor_rand and dt_tensor_randn are)", fn, dt_dtype_name(t));
}

static dt_status dt__rng_no_partial(const char *fn, const char *what, const dt_mesh *m, const dt_placement *pl) {
    int i;
    for (i = 0; i < m->ndim; i++)
        if (pl[i].kind == DT_PARTIAL)
            return dt__fail(DT_ERR_PLACEMENT, "%s: %s is Partial(%s) on mesh dim %d; a random op needs Shard or "
                            "Replicate (its value is a reduction over ranks: redistribute it first)", fn, what,
                            dt__reduce_name(pl[i].reduce), i);
    return DT_OK;
}

static dt_status dt__rng_float_only(const char *fn, dt_dtype t) {
    if (dt__is_float(t)) return DT_OK;
    return dt__fail(DT_ERR_DTYPE, "%s: the tensor is %s; this distribution needs f32, f64, f16 or bf16 (use "
                    "dt_randint_ or dt_bernoulli_ for integers)", fn, dt_dtype_name(t));
}

/* fill t per op, then advance the mesh's offset (every rank, in or out of the mesh) */
/* dt_explain / DTENSOR_LOG=ops: which words the op took, to find ranks whose streams diverged */
static void dt__rng_explain(const char *fn, const dt_tensor *t, const dt_mesh *m, FILE *f) {
    char a[160], sh[160];
    fprintf(f, "%s: %s%s %s; rng seed %llu offset %llu -> %llu\n", fn, dt_dtype_name(t->desc.dtype),
            dt__shape_str(t->desc.shape, t->desc.ndim, sh, sizeof sh),
            dt__placements_str(t->desc.placements, m->ndim, t->desc.ndim, a, sizeof a), (unsigned long long)m->rng_seed,
            (unsigned long long)m->rng_offset, (unsigned long long)(m->rng_offset + dt__rng_words(&t->desc, dt__rng_w(t->desc.dtype))));
}

/* A cyclic part is several boxes: the kernel fills it one span of the last
   dim at a time (a contiguous piece of the local buffer and a box of
   global indices), so each element still gets the word of its global
   index. Allocation-free, like the box case: nothing can fail after the
   ranks have agreed. */
static void dt__rng_apply_spans(const dt_tensor *t, dt__rng_op *op, void *y) {
    dt__chain ch[DT_MAX_DIMS];
    int64_t pos[DT_MAX_DIMS], lo[DT_MAX_DIMS], ext[DT_MAX_DIMS];
    size_t ey = dt_dtype_size(t->desc.dtype), ex = dt_dtype_size(op->t);
    int nd = t->desc.ndim, last = nd - 1, d;
    memset(ch, 0, sizeof ch);
    memset(lo, 0, sizeof lo);
    if (nd < 1) return; /* (a cyclic tensor has a dim) */
    for (d = 0; d < nd; d++) {
        dt__chain_build(t->desc.shape[d], t->mesh->ndim, t->mesh->shape, t->mesh->coord, t->desc.placements, d, &ch[d]);
        pos[d] = 0;
        ext[d] = 1;
    }
    for (;;) {
        size_t base = 0;
        int64_t p = 0;
        for (d = 0; d < last; d++) {
            base = base * (size_t)ch[d].ext + (size_t)pos[d];
            lo[d] = dt__chain_up(&ch[d], pos[d]);
        }
        base *= (size_t)ch[last].ext;
        while (p < ch[last].ext) {
            dt__rng_op one = *op;
            size_t at = base + (size_t)p;
            ext[last] = dt__chain_span(&ch[last], p);
            lo[last] = dt__chain_up(&ch[last], p);
            if (op->x) one.x = (const char *)op->x + at * ex;
            if (op->mask) one.mask = (char *)op->mask + at;
            dt__rng_call(t->dev->kernels(), &one, nd, t->desc.shape, lo, ext, (char *)y + at * ey);
            p += ext[last];
        }
        for (d = last - 1; d >= 0; d--) {
            if (++pos[d] < ch[d].ext) break;
            pos[d] = 0;
        }
        if (d < 0) break;
    }
}

/* Strided storage (local_strides, local_ghost): y laid out by ys and op->x
   by xs (NULL: row-major over the local extents; the mask is row-major).
   The same walk as dt__rng_apply_spans -- each span of the last dim that is
   consecutive in global indices (the whole dim unless cyclic) is one
   kernel call, so every element gets the word of its global index and the
   values are bit-identical to a contiguous fill; the padding between
   elements is never written. A last dim that is not unit-stride goes
   through a small buffer on the stack, DT__RNG_SCH elements at a time:
   allocation-free, like the contiguous case. */
#define DT__RNG_SCH 32
static void dt__rng_apply_strided(const dt_tensor *t, dt__rng_op *op, void *y, const int64_t *ys, const int64_t *xs) {
    dt__chain ch[DT_MAX_DIMS];
    int64_t pos[DT_MAX_DIMS], lo[DT_MAX_DIMS], ext[DT_MAX_DIMS], yst[DT_MAX_DIMS], xst[DT_MAX_DIMS], s = 1;
    size_t ey = dt_dtype_size(t->desc.dtype), ex = dt_dtype_size(op->t);
    int nd = t->desc.ndim, last = nd - 1, d;
    const dt__kernels *k = t->dev->kernels();
    if (nd < 1) { dt__rng_call(k, op, 0, t->desc.shape, t->box.lo, t->box.ext, y); return; }
    memset(ch, 0, sizeof ch);
    memset(lo, 0, sizeof lo);
    for (d = last; d >= 0; d--) { /* row-major strides of the local extents where none were given */
        yst[d] = ys ? ys[d] : s;
        xst[d] = xs ? xs[d] : s;
        s *= t->box.ext[d];
    }
    for (d = 0; d < nd; d++) {
        dt__chain_build(t->desc.shape[d], t->mesh->ndim, t->mesh->shape, t->mesh->coord, t->desc.placements, d, &ch[d]);
        pos[d] = 0;
        ext[d] = 1;
    }
    for (;;) {
        int64_t p = 0, yb = 0, xb = 0, mb = 0;
        for (d = 0; d < last; d++) {
            yb += pos[d] * yst[d];
            xb += pos[d] * xst[d];
            mb = mb * ch[d].ext + pos[d];
            lo[d] = dt__chain_up(&ch[d], pos[d]);
        }
        mb *= ch[last].ext;
        while (p < ch[last].ext) {
            int64_t span = dt__chain_span(&ch[last], p), i = 0;
            char *yp = (char *)y + (size_t)(yb + p * yst[last]) * ey;
            const char *xp = op->x ? (const char *)op->x + (size_t)(xb + p * xst[last]) * ex : NULL;
            uint8_t *mp = op->mask ? (uint8_t *)op->mask + (mb + p) : NULL;
            lo[last] = dt__chain_up(&ch[last], p);
            if (yst[last] == 1 && (!xp || xst[last] == 1)) {
                dt__rng_op one = *op;
                one.x = xp;
                one.mask = mp;
                ext[last] = span;
                dt__rng_call(k, &one, nd, t->desc.shape, lo, ext, yp);
            } else {
                while (i < span) { /* through the stack: gather x, draw, scatter y */
                    /* cppcheck-suppress unassignedVariable ; xbuf is filled by the memcpy below */
                    double ybuf[2 * DT__RNG_SCH], xbuf[DT__RNG_SCH]; /* (16-byte y elements at most: C128) */
                    dt__rng_op one = *op;
                    int64_t n = span - i < DT__RNG_SCH ? span - i : DT__RNG_SCH, j, lo_last = lo[last];
                    if (xp)
                        for (j = 0; j < n; j++) memcpy((char *)xbuf + (size_t)j * ex, xp + (size_t)((i + j) * xst[last]) * ex, ex);
                    one.x = xp ? (const void *)xbuf : NULL;
                    one.mask = mp ? mp + i : NULL;
                    ext[last] = n;
                    lo[last] = lo_last + i;
                    dt__rng_call(k, &one, nd, t->desc.shape, lo, ext, ybuf);
                    lo[last] = lo_last;
                    for (j = 0; j < n; j++) memcpy(yp + (size_t)((i + j) * yst[last]) * ey, (char *)ybuf + (size_t)j * ey, ey);
                    i += n;
                }
            }
            p += span;
        }
        for (d = last - 1; d >= 0; d--) {
            if (++pos[d] < ch[d].ext) break;
            pos[d] = 0;
        }
        if (d < 0) break;
    }
}

/* fill y (laid out by ys: NULL row-major) from op->x (laid out by xs) */
static void dt__rng_apply_at(const char *fn, const dt_tensor *t, dt__rng_op *op, void *y, const int64_t *ys,
                             const int64_t *xs) {
    dt_mesh *m = t->mesh;
    if (m->explain) dt__rng_explain(fn, t, m, m->explain);
    if (m->rank == 0 && dt__log_on(DT__LOG_OPS)) dt__rng_explain(fn, t, m, stderr);
    op->seed = m->rng_seed;
    op->offset = m->rng_offset;
    if (t->numel && (ys || xs)) dt__rng_apply_strided(t, op, y, ys, xs);
    else if (t->numel && dt__pl_cyclic(t->desc.placements, m->ndim)) dt__rng_apply_spans(t, op, y);
    else if (t->numel) dt__rng_call(t->dev->kernels(), op, t->desc.ndim, t->desc.shape, t->box.lo, t->box.ext, y);
    m->rng_offset += dt__rng_words(&t->desc, op->w);
}

/* fill t's own storage (strided or not) */
static void dt__rng_apply(const char *fn, const dt_tensor *t, dt__rng_op *op, void *y) {
    dt__rng_apply_at(fn, t, op, y, t->strided ? t->stride : NULL, NULL);
}

/* checks shared by the in-place ops, t non-NULL: `st` (the op's own checks
   of its scalars, made first), not Partial, room in the stream; with
   consistency checks on, the ranks compare the tensor's spec, the stream
   state and the scalars (their bits: lo, hi, p, ...), so a scalar one rank
   refused or passed differently fails every rank before any draw */
/* A device tensor's strided storage is filled in place one row at a time,
   which needs a unit-stride last dim (the host goes through a stack buffer
   otherwise; a device has no such buffer): refused, nothing drawn */
static dt_status dt__rng_device_rows(const char *fn, const char *what, const dt_tensor *t) {
    char g[160];
    if (!t || dt__on_host(t->dev) || !t->strided || t->desc.ndim < 1 || t->stride[t->desc.ndim - 1] == 1)
        return DT_OK; /* (an empty shard's strides decide too: its rank refuses with the others) */
    return dt__fail(DT_ERR_UNSUPPORTED, "%s: %s is a %s tensor with strided storage whose last dim is not "
                    "unit-stride (strides %s): random fills of device tensors write rows in place; fill a "
                    "contiguous tensor and dt_tensor_redistribute it into this one", fn, what, t->dev->name,
                    dt__shape_str(t->stride, t->desc.ndim, g, sizeof g));
}

static dt_status dt__rng_target(const char *fn, const dt_tensor *t, int w, dt_status st, int nsc, double a, double b) {
    int64_t state[4];
    char args[96];
    double sc[2];
    int i;
    sc[0] = a;
    sc[1] = b;
    if (!st) st = dt__rng_device_rows(fn, "the tensor", t);
    if (!st) st = dt__rng_no_partial(fn, "the tensor", t->mesh, t->desc.placements);
    if (!st) st = dt__rng_room(fn, t->mesh, dt__rng_words(&t->desc, w));
    state[0] = (int64_t)t->mesh->rng_seed;
    state[1] = (int64_t)t->mesh->rng_offset;
    state[2] = state[3] = 0;
    args[0] = 0;
    for (i = 0; i < nsc && i < 2; i++) {
        size_t len = strlen(args);
        memcpy(&state[2 + i], &sc[i], sizeof sc[i]);
        if (dt__checks_on()) /* the text is for a mismatch message only */
            snprintf(args + len, sizeof args - len, "%s%.17g", i ? ", " : "args ", sc[i]);
    }
    return dt__consistent_spec(t->mesh, fn, st, &t->desc, NULL, state, 4, args[0] ? args : NULL);
}
#ifdef __clang_analyzer__ /* a local failure is returned (for the static analyzer) */
#define dt__rng_target(fn, t, w, st, nsc, a, b) \
    ((st) ? (dt__rng_target((fn), (t), (w), (st), (nsc), (a), (b)), (st)) : dt__rng_target((fn), (t), (w), (st), (nsc), (a), (b)))
#endif

static int dt__finite(double x) { return x - x == 0; } /* false for NaN and +-inf */

static dt_status dt__rng_bounds(const char *fn, const char *a_name, double a, const char *b_name, double b) {
    if (!dt__finite(a) || !dt__finite(b))
        return dt__fail(DT_ERR_ARG, "%s: %s = %g and %s = %g must be finite", fn, a_name, a, b_name, b);
    return DT_OK;
}

static dt_status dt__uniform_into(const char *fn, const dt_tensor *t, double lo, double hi) {
    dt__rng_op op;
    dt_status st;
    if (!t) return dt__fail(DT_ERR_ARG, "%s: tensor is NULL", fn);
    if ((st = dt__rng_float_only(fn, t->desc.dtype)) || (st = dt__rng_bounds(fn, "lo", lo, "hi", hi))) {
    } else if (!(lo < hi)) {
        st = dt__fail(DT_ERR_ARG, "%s: lo = %g must be less than hi = %g", fn, lo, hi);
    } else if (!dt__finite(hi - lo)) {
        st = dt__fail(DT_ERR_ARG, "%s: hi - lo overflows (lo = %g, hi = %g)", fn, lo, hi);
    }
    if ((st = dt__rng_target(fn, t, dt__rng_w(t->desc.dtype), st, 2, lo, hi))) return st;
    memset(&op, 0, sizeof op);
    op.kind = DT__RK_UNIFORM;
    op.t = t->desc.dtype;
    op.w = dt__rng_w(op.t);
    op.a = lo;
    op.b = hi;
    dt__rng_apply(fn, t, &op, t->data);
    return DT_OK;
}

static dt_status dt__normal_into(const char *fn, const dt_tensor *t, double mean, double sd) {
    dt__rng_op op;
    dt_status st;
    if (!t) return dt__fail(DT_ERR_ARG, "%s: tensor is NULL", fn);
    if ((st = dt__rng_float_only(fn, t->desc.dtype)) || (st = dt__rng_bounds(fn, "mean", mean, "std", sd))) {
    } else if (sd < 0) {
        st = dt__fail(DT_ERR_ARG, "%s: std = %g is negative", fn, sd);
    }
    if ((st = dt__rng_target(fn, t, dt__rng_w(t->desc.dtype), st, 2, mean, sd))) return st;
    memset(&op, 0, sizeof op);
    op.kind = DT__RK_NORMAL;
    op.t = t->desc.dtype;
    op.w = dt__rng_w(op.t);
    op.a = mean;
    op.b = dt__is_complex(op.t) ? sd * 0.70710678118654752440 : sd; /* each part's std: the API's spec */
    dt__rng_apply(fn, t, &op, t->data);
    return DT_OK;
}

/* a new tensor with d's spec, or *out when it has it */
static dt_status dt__rng_new(const char *fn, dt_mesh *m, const dt_tensor_desc *d, dt_tensor **out, dt_tensor **t) {
    dt_tensor_desc norm;
    dt_status st;
    int64_t state[2];
    if (!m) return out ? dt__check_desc(fn, m, d, &norm) : dt__fail(DT_ERR_ARG, "%s: out is NULL", fn);
    if (!out) st = dt__fail(DT_ERR_ARG, "%s: out is NULL", fn); /* agreed on below */
    else if (!(st = dt__check_desc(fn, m, d, &norm)) && !(st = dt__rng_float_only(fn, norm.dtype)) &&
        !(st = dt__rng_no_partial(fn, "desc->placements", m, norm.placements)) &&
        !(st = dt__rng_room(fn, m, dt__rng_words(&norm, dt__rng_w(norm.dtype)))) && *out)
        st = dt__check_out_spec(fn, *out, m, &norm); /* a strided *out is filled in place */
    if (!st && out && *out) st = dt__rng_device_rows(fn, "*out", *out);
    state[0] = (int64_t)m->rng_seed; /* consistency checks: the spec and the stream state */
    state[1] = (int64_t)m->rng_offset;
    if ((st = dt__consistent_spec(m, fn, st, &norm, NULL, state, 2, NULL))) return st;
    if (*out) {
        *t = *out;
        return DT_OK;
    }
    return dt__tensor_make(fn, m, &norm, NULL, 0, t);
}

static dt_status dt__tensor_rand_body(dt_mesh *m, const dt_tensor_desc *d, dt_tensor **out) {
    dt_tensor *t = NULL;
    dt_status st = dt__rng_new("dt_tensor_rand", m, d, out, &t);
    if (st) return st;
    dt__uniform_into("dt_tensor_rand", t, 0.0, 1.0);
    *out = t;
    return DT_OK;
}
DT_API dt_status dt_tensor_rand(dt_mesh *m, const dt_tensor_desc *d, dt_tensor **out) {
    DT__PUBLIC("dt_tensor_rand", dt__tensor_rand_body(m, d, out));
}

static dt_status dt__tensor_randn_body(dt_mesh *m, const dt_tensor_desc *d, dt_tensor **out) {
    dt_tensor *t = NULL;
    dt_status st = dt__rng_new("dt_tensor_randn", m, d, out, &t);
    if (st) return st;
    dt__normal_into("dt_tensor_randn", t, 0.0, 1.0);
    *out = t;
    return DT_OK;
}
DT_API dt_status dt_tensor_randn(dt_mesh *m, const dt_tensor_desc *d, dt_tensor **out) {
    DT__PUBLIC("dt_tensor_randn", dt__tensor_randn_body(m, d, out));
}

DT_API dt_status dt_uniform_(dt_tensor *t, double lo, double hi) {
    DT__PUBLIC("dt_uniform_", dt__uniform_into("dt_uniform_", t, lo, hi));
}
DT_API dt_status dt_normal_(dt_tensor *t, double mean, double sd) {
    DT__PUBLIC("dt_normal_", dt__normal_into("dt_normal_", t, mean, sd));
}

static dt_status dt__rng_prob(const char *fn, const char *name, double p) {
    if (p >= 0 && p <= 1) return DT_OK; /* false for NaN too */
    return dt__fail(DT_ERR_ARG, "%s: %s = %g is outside [0, 1]", fn, name, p);
}

/* u < p  <=>  (u24 integer) < ceil(p * 2^24) (u53: 2^53); exact: p * 2^k only shifts the exponent */
static uint64_t dt__rng_threshold(double p, int w) { return (uint64_t)ceil(p * (w == 1 ? 16777216.0 : 9007199254740992.0)); }

static dt_status dt__bernoulli__body(dt_tensor *t, double p) {
    const char *fn = "dt_bernoulli_";
    dt__rng_op op;
    dt_status st;
    if (!t) return dt__fail(DT_ERR_ARG, "%s: tensor is NULL", fn);
    if (!(st = dt__rng_not_complex(fn, t->desc.dtype))) st = dt__rng_prob(fn, "p", p);
    if ((st = dt__rng_target(fn, t, dt__rng_w(t->desc.dtype), st, 1, p, 0.0))) return st;
    memset(&op, 0, sizeof op);
    op.kind = DT__RK_BERNOULLI;
    op.t = t->desc.dtype;
    op.w = dt__rng_w(op.t);
    op.thr = dt__rng_threshold(p, op.w);
    dt__rng_apply(fn, t, &op, t->data);
    return DT_OK;
}
DT_API dt_status dt_bernoulli_(dt_tensor *t, double p) { DT__PUBLIC("dt_bernoulli_", dt__bernoulli__body(t, p)); }

/* the bound on |value| that t holds exactly (integers: its range) */
static dt_status dt__randint_range(const char *fn, dt_dtype t, int64_t lo, int64_t hi) {
    int64_t mn, mx; /* representable: [mn, mx]; hi is exclusive, so hi - 1 <= mx */
    switch (t) {
    case DT_F32: mn = -((int64_t)1 << 24); mx = (int64_t)1 << 24; break;
    case DT_F64: mn = -((int64_t)1 << 53); mx = (int64_t)1 << 53; break;
    case DT_F16: mn = -2048; mx = 2048; break;
    case DT_BF16: mn = -256; mx = 256; break;
    case DT_I32: mn = INT32_MIN; mx = INT32_MAX; break;
    case DT_U8: mn = 0; mx = 255; break;
    default: mn = INT64_MIN; mx = INT64_MAX; break;
    }
    if (!(lo < hi)) return dt__fail(DT_ERR_ARG, "%s: lo = %lld must be less than hi = %lld", fn, (long long)lo, (long long)hi);
    if (lo < mn || hi - 1 > mx)
        return dt__fail(DT_ERR_ARG, "%s: [%lld, %lld) does not fit %s exactly (its integers are %lld..%lld)", fn,
                        (long long)lo, (long long)hi, dt_dtype_name(t), (long long)mn, (long long)mx);
    return DT_OK;
}

static dt_status dt__randint__body(dt_tensor *t, int64_t lo, int64_t hi) {
    const char *fn = "dt_randint_";
    dt__rng_op op;
    dt_status st;
    if (!t) return dt__fail(DT_ERR_ARG, "%s: tensor is NULL", fn);
    if (!(st = dt__rng_not_complex(fn, t->desc.dtype))) st = dt__randint_range(fn, t->desc.dtype, lo, hi);
    /* (compared as doubles: bounds past 2^53 that differ by less than their ulp go unseen) */
    if ((st = dt__rng_target(fn, t, dt__rng_w(t->desc.dtype), st, 2, (double)lo, (double)hi))) return st;
    memset(&op, 0, sizeof op);
    op.kind = DT__RK_RANDINT;
    op.t = t->desc.dtype;
    op.w = dt__rng_w(op.t);
    op.lo = lo;
    op.range = (uint64_t)hi - (uint64_t)lo;
    dt__rng_apply(fn, t, &op, t->data);
    return DT_OK;
}
DT_API dt_status dt_randint_(dt_tensor *t, int64_t lo, int64_t hi) {
    DT__PUBLIC("dt_randint_", dt__randint__body(t, lo, hi));
}

static dt_status dt__dropout_body(const dt_tensor *x, double p, dt_tensor **out, dt_tensor **mask) {
    const char *fn = "dt_dropout";
    dt_tensor *o = NULL, *k = NULL;
    dt_tensor_desc md;
    dt__rng_op op;
    dt_status st;
    if (!x) return dt__fail(DT_ERR_ARG, "%s: tensor is NULL", fn);
    md = x->desc;
    md.dtype = DT_U8;
    if (!out) st = dt__fail(DT_ERR_ARG, "%s: out is NULL", fn);
    else if (!(st = dt__rng_float_only(fn, x->desc.dtype)) && !(st = dt__rng_not_complex(fn, x->desc.dtype)) &&
             !(st = dt__rng_prob(fn, "p", p)) && *out)
        st = dt__check_out_spec(fn, *out, x->mesh, &x->desc); /* a strided *out is written in place */
    if (!st && mask && *mask && !(st = dt__check_out(fn, *mask, x->mesh, &md)) && /* (a strided mask: refused) */
        (*mask == x || *mask == *out || ((*mask)->bytes && ((*mask)->data == x->data ||
                                                             (*out && (*mask)->data == (*out)->data)))))
        st = dt__fail(DT_ERR_ARG, "%s: *mask is the same tensor as x or *out", fn);
    if (!st && out && *out) st = dt__rng_device_rows(fn, "*out", *out);
    /* every argument is checked before the ranks compare them (and p) */
    if ((st = dt__rng_target(fn, x, dt__rng_w(x->desc.dtype), st, 1, p, 0.0))) return st;
    if (!*out && (st = dt__tensor_make(fn, x->mesh, &x->desc, NULL, 0, &o))) return st;
    if (mask && !*mask && (st = dt__tensor_make(fn, x->mesh, &md, NULL, 0, &k))) {
        dt_tensor_destroy(o);
        return st;
    }
    if (!o) o = *out;
    if (mask && !k) k = *mask;
    memset(&op, 0, sizeof op);
    op.kind = DT__RK_DROPOUT;
    op.t = x->desc.dtype;
    op.w = dt__rng_w(op.t);
    op.b = 1.0 - p;
    op.thr = dt__rng_threshold(op.b, op.w);
    op.x = x->data;
    op.mask = k ? k->data : NULL;
    /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): o is *out or the tensor just made */
    dt__rng_apply_at(fn, x, &op, o->data, o->strided ? o->stride : NULL, /* strided x, *out: in place */
                     x->strided ? x->stride : NULL);
    *out = o;
    if (mask) *mask = k;
    return DT_OK;
}
DT_API dt_status dt_dropout(const dt_tensor *x, double p, dt_tensor **out, dt_tensor **mask) {
    DT__PUBLIC("dt_dropout", dt__dropout_body(x, p, out, mask));
}

/* >>halo ------------------------------------------------------------------
   HOW A HALO EXCHANGE IS PLANNED. Every rank can compute every rank's box
   (>>layout), so the plan needs no communication: for each pair (sender S,
   receiver R) in a replica group, both ends enumerate the same "pieces" --
   the parts of R's ghost region that S's box holds -- in the same order:
   for each combination of segments along the dims that have ghosts (below
   the box, inside it, above it; faces only without corners), and for each
   periodic image of that region (shifted by -n, 0, +n), its intersection
   with S's box. S packs the pieces in that order into one message; R
   unpacks them at their shifted places. Pieces from R to itself (wraps
   along a dim held whole, periodic self-neighbours) are local copies.
   Ghost cells past a CONSTANT edge are filled from a pattern first.
   The ghosted block is an array in "unwrapped" global coordinates: its box
   is R's box widened by the widths, so a piece lands at its source
   coordinates plus the image shift. */

typedef struct dt__hpiece {
    dt__box src;                    /* in the sender's box (global coordinates) */
    int64_t shift[DT_MAX_DIMS];     /* where it lands: src + shift              */
    int direct;                     /* received straight into the ghosted block */
    int contig;                     /* a send that is one span of the ghosted block */
    size_t goff;                    /* ... at this byte offset                    */
} dt__hpiece;

typedef struct dt__hlink {          /* what moves between this rank and one peer, one way */
    int peer;                       /* mesh rank                                 */
    int first, count;               /* its pieces                                */
    size_t off, bytes;              /* in the message buffer                     */
} dt__hlink;

struct dt__halo {
    int ndim;
    int64_t wlo[DT_MAX_DIMS], whi[DT_MAX_DIMS];
    uint8_t bnd[DT_MAX_DIMS];
    int corners;
    dt_halo_desc desc;              /* as given (public halos)                   */
    dt__array g;                    /* the ghosted block                         */
    dt__box hbox;                   /* the box widened by the halo's widths: g's
                                       box, or inside it for a ghosted array
                                       whose ghost room is wider than the halo */
    int in_place;                   /* g.data is the tensor's own ghosted array
                                       (not owned, no interior copy)            */
    int per_piece;                  /* one message per piece (dt__halo_per_piece) */
    const dt__device *dev;          /* the tensor's memory: the ghosted block's  */
    const dt__device *eng;          /* the memory the backend's messages take    */
    int staged;                     /* eng != dev: pieces packed in dev's memory
                                       (pbuf), only they cross to eng's (buf)    */
    dt__hpiece *pieces;
    int npieces, cap;
    dt__hlink *links;               /* nsend sends, then nrecv receives          */
    int nsend, nrecv;
    int self_first, self_count;     /* pieces this rank copies to itself         */
    dt__box fills[2 * DT_MAX_DIMS]; /* ghost slabs past CONSTANT edges           */
    int nfills;
    double pattern[2];              /* the fill value in the dtype (C128: 16 B;
                                       doubles: aligned for every dtype)         */
    char *buf;                      /* message bytes: sends, then receives       */
    char *pbuf;                     /* staged: the same layout in dev's memory   */
    char *fillbuf;                  /* off the host: the fill pattern, as many
                                       elements as the largest fill slab         */
    void (*buf_free)(void *);       /* buf's allocator's free                    */
    size_t sbytes, rbytes;          /* their totals                              */
    dt_message *msgs;               /* the links, peers in carrier ranks         */
    int nmsgs;
    dt_comm *comm;                  /* the mesh comm                             */
    void *request;
    int begun;
#ifndef DTENSOR_NO_MPI
    /* MPI derived datatypes (dt__halo_types): each message posted straight
       from and into the arrays, MPI doing what dt__pack / dt__unpack do */
    int typed;                      /* the plan has them (else: packed messages) */
    int es16;                       /* mel is a type of our own                  */
    int nrq;                        /* requests posted by the exchange in flight */
    MPI_Datatype mel;               /* an element: an unsigned integer of its size,
                                       or (16 bytes) a pair of them (owned)      */
    char **mbase;                   /* per message: where its datatype starts    */
    int *mcount;                    /* ... how many of it (elements for mel)     */
    MPI_Datatype *mtype;            /* ... the datatype (mel: contiguous;
                                       MPI_DATATYPE_NULL: packed, a small face)  */
    char **mpack;                   /* ... its packed bytes in buf               */
    int *mpiece;                    /* ... its piece                             */
    char **cbase;                   /* this exchange's (base, count, type) per   */
    int *ccount;                    /* message: the datatype's, or the packed    */
    MPI_Datatype *ctype;            /* bytes' (as mel)                           */
    MPI_Request *mrq;
    MPI_Status *mst;
#endif
};

#ifndef DTENSOR_NO_MPI
static void dt__halo_types_free(dt__halo *h) {
    dt__mpi_types_free(h->mtype, h->mtype ? h->nmsgs : 0, &h->mel, h->es16);
    h->es16 = 0;
    DT_FREE(h->mbase);
    DT_FREE(h->mcount);
    DT_FREE(h->mtype);
    DT_FREE(h->mpack);
    DT_FREE(h->mpiece);
    DT_FREE(h->cbase);
    DT_FREE(h->ccount);
    DT_FREE(h->ctype);
    DT_FREE(h->mrq);
    DT_FREE(h->mst);
    h->typed = 0;
}
#endif

static void dt__halo_free(dt__halo *h) {
    if (!h) return;
#ifndef DTENSOR_NO_MPI
    dt__halo_types_free(h);
#endif
    if (!h->in_place && h->g.data) h->dev->free(h->g.data);
    if (h->fillbuf) h->dev->free(h->fillbuf);
    if (h->pbuf) h->dev->free(h->pbuf);
    if (h->buf) h->buf_free(h->buf);
    DT_FREE(h->pieces);
    DT_FREE(h->links);
    DT_FREE(h->msgs);
    DT_FREE(h);
}

/* the geometry every rank shares */
typedef struct dt__hgeom {
    int ndim, nact;
    int act[DT_MAX_DIMS];           /* dims with ghosts                          */
    const int64_t *n, *wlo, *whi;
    const uint8_t *bnd;
    int corners;
} dt__hgeom;

static dt_status dt__halo_add(dt__halo *h, const dt__hpiece *p) {
    if (h->npieces == h->cap) {
        int cap = h->cap ? 2 * h->cap : 16;
        dt__hpiece *np = NULL;
        dt_status st = dt__alloc("dt halo plan", (size_t)cap * sizeof *np, (void **)&np);
        if (st) return st;
        if (h->npieces) memcpy(np, h->pieces, (size_t)h->npieces * sizeof *np);
        DT_FREE(h->pieces);
        h->pieces = np;
        h->cap = cap;
    }
    h->pieces[h->npieces++] = *p;
    return DT_OK;
}

/* the range of R's ghosted region along dim d for segment s (0 below, 1 in, 2 above) */
static void dt__halo_seg(const dt__hgeom *g, const dt__box *r, int d, int s, int64_t *lo, int64_t *hi) {
    int64_t a = r->lo[d], b = r->lo[d] + r->ext[d];
    if (s == 0) { *lo = a - g->wlo[d]; *hi = a; }
    else if (s == 1) { *lo = a; *hi = b; }
    else { *lo = b; *hi = b + g->whi[d]; }
}

/* could S hold anything of R's ghosted region? (cheap test before enumerating) */
static int dt__halo_near(const dt__hgeom *g, const dt__box *r, const dt__box *s) {
    int d;
    for (d = 0; d < g->ndim; d++) {
        int64_t lo = r->lo[d] - g->wlo[d], hi = r->lo[d] + r->ext[d] + g->whi[d];
        int64_t slo = s->lo[d], shi = s->lo[d] + s->ext[d], n = g->n[d];
        int hit = lo < shi && slo < hi;
        if (g->bnd[d] == DT_BOUNDARY_PERIODIC)
            hit = hit || (lo < shi - n && slo - n < hi) || (lo < shi + n && slo + n < hi);
        if (slo >= shi || !hit) return 0;
    }
    return 1;
}

/* append the pieces of R's ghost region held by S, in the order both ends use */
static dt_status dt__halo_pieces(const dt__hgeom *g, const dt__box *r, const dt__box *s, dt__halo *h, int *count) {
    int na = g->nact, ncomb = 1, nimg = 1, c, i, k;
    dt_status st;
    *count = 0;
    if (!dt__halo_near(g, r, s)) return DT_OK;
    for (k = 0; k < na; k++) { ncomb *= 3; nimg *= 3; }
    for (c = 0; c < ncomb; c++) {
        int seg[DT_MAX_DIMS], ghosts = 0, rest = c;
        for (k = 0; k < na; k++) { seg[k] = rest % 3; rest /= 3; ghosts += seg[k] != 1; }
        if (!ghosts || (!g->corners && ghosts > 1)) continue;
        for (i = 0; i < nimg; i++) {
            dt__hpiece p;
            int img[DT_MAX_DIMS], ok = 1, d;
            rest = i;
            p.direct = p.contig = 0;
            p.goff = 0;
            for (k = 0; k < na; k++) { img[k] = rest % 3 - 1; rest /= 3; }
            for (d = 0; d < g->ndim; d++) { /* dims without ghosts: R's own range */
                p.src.lo[d] = r->lo[d];
                p.src.ext[d] = r->ext[d];
                p.shift[d] = 0;
            }
            for (k = 0; k < na && ok; k++) {
                int64_t lo, hi, n = g->n[g->act[k]];
                d = g->act[k];
                if (img[k] && g->bnd[d] != DT_BOUNDARY_PERIODIC) { ok = 0; break; }
                dt__halo_seg(g, r, d, seg[k], &lo, &hi);
                if (lo < img[k] * n) lo = img[k] * n; /* this image's part, as global indices */
                if (hi > (img[k] + 1) * n) hi = (img[k] + 1) * n;
                p.src.lo[d] = lo - img[k] * n;
                p.src.ext[d] = hi > lo ? hi - lo : 0;
                p.shift[d] = img[k] * n;
            }
            if (!ok || !dt__box_intersect(g->ndim, &p.src, s, &p.src)) continue;
            if ((st = dt__halo_add(h, &p))) return st;
            ++*count;
        }
    }
    return DT_OK;
}

static size_t dt__halo_pieces_bytes(const dt__halo *h, int first, int count) {
    size_t b = 0;
    int i;
    for (i = first; i < first + count; i++) b += dt__box_numel(h->ndim, &h->pieces[i].src) * h->g.es;
    return b;
}

static void dt__halo_link(dt__halo *h, int peer, int first, int count) {
    dt__hlink *l = &h->links[h->nsend + h->nrecv];
    l->peer = peer;
    l->first = first;
    l->count = count;
    l->bytes = dt__halo_pieces_bytes(h, first, count);
    l->off = 0;
}

/* Is mesh rank r in my replica group (the ranks with my coordinates on the
   mesh dims that do not shard the tensor)? Then *box is its box. */
static int dt__halo_peer_box(const dt_mesh *m, const dt_tensor_desc *d, int r, dt__box *box) {
    int coord[DT_MAX_MESH_DIMS], i;
    dt__mesh_coord_of(m, r, coord);
    for (i = 0; i < m->ndim; i++)
        if (d->placements[i].kind != DT_SHARD && coord[i] != m->coord[i]) return 0;
    dt__tensor_box(m, d, coord, box);
    return 1;
}

/* the ghost slabs past CONSTANT edges, in global coordinates: parts of
   hbox only (ghost room past the halo is the caller's) */
static void dt__halo_plan_fills(dt__halo *h, const int64_t *n) {
    int d;
    h->nfills = 0;
    for (d = 0; d < h->ndim; d++) {
        int64_t glo = h->hbox.lo[d], ghi = glo + h->hbox.ext[d];
        if (h->bnd[d] != DT_BOUNDARY_CONSTANT) continue;
        if (glo < 0) {
            dt__box *b = &h->fills[h->nfills++];
            *b = h->hbox;
            b->ext[d] = (ghi < 0 ? ghi : 0) - glo;
        }
        if (ghi > n[d]) {
            dt__box *b = &h->fills[h->nfills++];
            *b = h->hbox;
            b->lo[d] = glo > n[d] ? glo : n[d];
            b->ext[d] = ghi - b->lo[d];
        }
    }
}

static void dt__shift_box(int nd, const dt__box *b, const int64_t *shift, dt__box *out);

/* the messages of one link: the whole packed span, or one per piece. A
   piece received alone that is one contiguous span of the ghosted block (a
   row face) lands there directly, with no unpack: the block's ghost cells
   are not to be touched between _begin and _end anyway. (Sends are packed
   always, so the interior may change after _begin.) */
static void dt__halo_link_msgs(dt__halo *h, const dt__hlink *l, int send, int peer, int per_piece) {
    size_t off = l->off;
    int j;
    for (j = l->first; j < l->first + l->count; j++) {
        dt__hpiece *pc = &h->pieces[j];
        size_t b = per_piece ? dt__box_numel(h->ndim, &pc->src) * h->g.es : l->bytes, goff = 0;
        if (b) {
            dt_message *msg = &h->msgs[h->nmsgs++];
            dt__box at;
            dt__shift_box(h->ndim, &pc->src, pc->shift, &at);
            pc->direct = per_piece && !send && !h->staged && h->g.data && dt__piece_contiguous(&h->g, &at, &goff);
            /* an in-place send from the caller's array: one span of it? (sent from there when
               the exchange ends before anyone can write the interior: dt__halo_begin) */
            pc->contig = per_piece && send && h->in_place && !h->staged && h->g.data &&
                         dt__piece_contiguous(&h->g, &pc->src, &pc->goff);
            msg->buf = pc->direct ? h->g.data + goff : h->buf + off;
            msg->bytes = b;
            msg->peer = peer;
            msg->send = send;
        }
        off += b;
        if (!per_piece) break;
    }
}

/* The message buffer in the memory the backend takes and, staged, its twin
   in the tensor's: a device tensor over plain MPI packs its pieces on the
   device and only they cross through pinned host memory; a host tensor over
   a backend that takes device memory crosses the other way. */
static dt_status dt__halo_alloc_bufs(const char *fn, dt__halo *h, size_t bytes) {
    dt_status st;
    if (!bytes) return DT_OK;
    if (!h->staged) {
        h->buf_free = h->dev->free;
        return h->dev->alloc(fn, bytes, (void **)&h->buf);
    }
    if ((st = h->dev->alloc(fn, bytes, (void **)&h->pbuf))) return st;
    if (dt__on_host(h->eng)) {
        h->buf_free = h->dev->free_host;
        return h->dev->alloc_host(fn, bytes, (void **)&h->buf);
    }
    h->buf_free = h->eng->free;
    return h->eng->alloc(fn, bytes, (void **)&h->buf);
}

/* Off the host the CONSTANT-edge fills are copies from a buffer of the
   pattern (a device has box copies, not fills): as long as the largest
   slab, written once here. */
static dt_status dt__halo_fill_buffer(const char *fn, dt__halo *h) {
    size_t n = 0, i, es = h->g.es;
    char *tmp = NULL;
    dt_status st;
    int k;
    if (dt__on_host(h->dev)) return DT_OK;
    for (k = 0; k < h->nfills; k++)
        if (dt__box_numel(h->ndim, &h->fills[k]) > n) n = dt__box_numel(h->ndim, &h->fills[k]);
    if (!n) return DT_OK;
    if ((st = dt__alloc(fn, n * es, (void **)&tmp))) return st; /* (n * es: inside the checked ghosted block) */
    for (i = 0; i < n; i++) memcpy(tmp + i * es, h->pattern, es);
    st = h->dev->alloc(fn, n * es, (void **)&h->fillbuf);
    if (!st) st = h->dev->copy(fn, h->fillbuf, tmp, n * es);
    DT_FREE(tmp);
    return st;
}

/* Build the plan of t's layout with widths wlo/whi. Local (no communication). */
static dt_status dt__halo_build(const char *fn, const dt_tensor *t, const int64_t *wlo, const int64_t *whi,
                                const uint8_t *bnd, int corners, double fill, dt__halo **out) {
    const dt_mesh *m = t->mesh;
    dt__halo *h = NULL;
    dt__hgeom g;
    int nd = t->desc.ndim, d, r, i, dir;
    size_t gn = 1, off;
    dt_status st;
    if ((st = dt__alloc(fn, sizeof *h, (void **)&h))) return st;
    memset(h, 0, sizeof *h);
    h->dev = t->dev;
    h->eng = dt__engine(t);
    h->ndim = nd;
    h->corners = corners;
    if (!h->eng) {
        st = dt__fail(DT_ERR_DEVICE, "%s: the mesh's backend takes device %d's memory, which is not in this build", fn,
                      m->comm->root->be.device);
        goto done;
    }
    h->staged = h->eng != h->dev;
    memcpy(h->wlo, wlo, (size_t)nd * sizeof *wlo);
    memcpy(h->whi, whi, (size_t)nd * sizeof *whi);
    memcpy(h->bnd, bnd, (size_t)nd);
    dt__scalar_of(t->desc.dtype, fill, h->pattern);
    h->g.ndim = nd;
    h->g.es = dt_dtype_size(t->desc.dtype);
    for (d = 0; d < nd; d++) {
        h->hbox.lo[d] = t->box.lo[d] - wlo[d];
        h->hbox.ext[d] = t->box.ext[d] + wlo[d] + whi[d];
        gn *= (size_t)h->hbox.ext[d]; /* checked for overflow by the caller */
    }
    if (t->ghosted) { /* the halo lives in the tensor's own array (widths <= its ghost room, checked) */
        h->in_place = 1;
        h->g.data = t->storage;
        h->g.stride = t->stride;
        dt__ghost_box(nd, &t->box, t->ghost, &h->g.box);
    } else {
        h->g.box = h->hbox;
        if (gn && (st = h->dev->alloc(fn, gn * h->g.es, (void **)&h->g.data))) goto done;
        if (gn && (st = h->dev->zero(fn, h->g.data, gn * h->g.es))) goto done;
    }
    dt__halo_plan_fills(h, t->desc.shape);
    if ((st = dt__halo_fill_buffer(fn, h))) goto done;

    g.ndim = nd;
    g.nact = 0;
    for (d = 0; d < nd; d++)
        if (wlo[d] || whi[d]) g.act[g.nact++] = d;
    g.n = t->desc.shape;
    g.wlo = h->wlo;
    g.whi = h->whi;
    g.bnd = h->bnd;
    g.corners = corners;

    DT_ASSERT(m->size >= 1); /* (said for the static analyzer: a mesh has a rank) */
    if ((st = dt__alloc(fn, 2 * (size_t)m->size * sizeof *h->links, (void **)&h->links))) goto done;
    for (dir = 0; dir < 2; dir++) /* what I send to each peer, then what I receive */
        for (r = 0; r < m->size; r++) {
            dt__box pb;
            int first = h->npieces, cnt;
            if (!dt__halo_peer_box(m, &t->desc, r, &pb) || (dir && r == m->rank)) continue;
            st = dir ? dt__halo_pieces(&g, &t->box, &pb, h, &cnt) : dt__halo_pieces(&g, &pb, &t->box, h, &cnt);
            if (st) goto done;
            if (r == m->rank) {
                h->self_first = first;
                h->self_count = cnt;
            } else if (cnt) {
                dt__halo_link(h, r, first, cnt);
                if (dir) h->nrecv++;
                else h->nsend++;
            }
        }
    off = 0;
    for (i = 0; i < h->nsend + h->nrecv; i++) {
        h->links[i].off = off;
        off += h->links[i].bytes;
        if (i < h->nsend) h->sbytes += h->links[i].bytes;
        else h->rbytes += h->links[i].bytes;
    }
    if ((st = dt__halo_alloc_bufs(fn, h, off))) goto done;
    h->comm = m->comm;
    if (h->nsend + h->nrecv) {
        /* Where the backend keeps several messages to one peer in order,
           each piece (a face) travels as its own message, as a hand-written
           exchange sends them: two faces to one neighbour (two ranks,
           periodic) stay two messages of the face's size instead of one of
           twice that, which can cross an MPI eager/rendezvous limit (Open
           MPI's shared-memory 4 KiB) and cost a handshake. */
        int per_piece = h->per_piece = dt__comm_ordered_messages(m->comm);
        size_t cap = (size_t)(per_piece ? h->npieces : h->nsend + h->nrecv);
        if ((st = dt__alloc(fn, (cap ? cap : 1) * sizeof *h->msgs, (void **)&h->msgs))) goto done;
        for (i = 0; i < h->nsend + h->nrecv; i++)
            dt__halo_link_msgs(h, &h->links[i], i < h->nsend, dt__comm_carrier_rank(m->comm, h->links[i].peer),
                               per_piece);
    }
    *out = h;
    return DT_OK;
done:
    dt__halo_free(h);
    return st;
}

#ifndef DTENSOR_NO_MPI
/* From how many bytes a halo message over the built-in MPI backend moves
   as an MPI derived datatype (straight from the interior, straight into
   the ghost cells) instead of packed; 0: never. DTENSOR_HALO_TYPES=N,
   read at each plan (dt_tensor_set_halo); unset, the measured default
   (bench/stencil.c, bench/README.md): Open MPI from 4 KiB -- above its
   shared-memory eager limit a packed face pays the rendezvous, a datatype
   streams through the pipelined convertor; below it pack + eager send is
   faster than the convertor -- MPICH never (its datatype engine was
   slower than our pack at every size). Contiguous faces (rows) go
   straight from and into the arrays either way. */
static size_t dt__halo_types_min(void) {
    const char *e = getenv("DTENSOR_HALO_TYPES");
    if (e && *e) return (size_t)strtoull(e, NULL, 10);
#ifdef OPEN_MPI
    return 4096;
#else
    return 0;
#endif
}

/* The plan's messages as (base, count, datatype), made once per plan and
   freed with it. Only for one message per piece on the built-in MPI
   backend (where both ends agree on the message boundaries); the message
   sizes are those of the packed plan, so ranks may differ in the choice.
   On any failure the plan stays packed. */
static void dt__halo_types(dt__halo *h) {
    size_t n = (size_t)h->nmsgs, tmin = dt__halo_types_min();
    int i, j, mi = 0, ok = 1;
    if (!h->per_piece || !h->nmsgs || !tmin || !dt__on_host(h->dev) || h->staged) return; /* host memory only */
    /* (not dt__alloc: out of memory here is no error, the plan stays packed) */
    h->mbase = (char **)DT_MALLOC(n * sizeof *h->mbase);
    h->mcount = (int *)DT_MALLOC(n * sizeof *h->mcount);
    h->mtype = (MPI_Datatype *)DT_MALLOC(n * sizeof *h->mtype);
    h->mpack = (char **)DT_MALLOC(n * sizeof *h->mpack);
    h->mpiece = (int *)DT_MALLOC(n * sizeof *h->mpiece);
    h->cbase = (char **)DT_MALLOC(n * sizeof *h->cbase);
    h->ccount = (int *)DT_MALLOC(n * sizeof *h->ccount);
    h->ctype = (MPI_Datatype *)DT_MALLOC(n * sizeof *h->ctype);
    h->mrq = (MPI_Request *)DT_MALLOC(n * sizeof *h->mrq);
    h->mst = (MPI_Status *)DT_MALLOC(n * sizeof *h->mst);
    if (!h->mbase || !h->mcount || !h->mtype || !h->mpack || !h->mpiece || !h->cbase || !h->ccount || !h->ctype ||
        !h->mrq || !h->mst) {
        DT_FREE(h->mtype); /* (before the free below reads it) */
        h->mtype = NULL;
        dt__halo_types_free(h);
        return;
    }
    for (i = 0; i < h->nmsgs; i++) h->mtype[i] = MPI_DATATYPE_NULL;
    ok = dt__mpi_elem_type(h->g.es, &h->mel, &h->es16);
    if (!ok) { dt__halo_types_free(h); return; }
    for (i = 0; i < h->nsend + h->nrecv && ok; i++) {
        const dt__hlink *l = &h->links[i];
        char *pk = h->buf + l->off;
        for (j = l->first; j < l->first + l->count && ok; j++) {
            const dt__hpiece *pc = &h->pieces[j];
            size_t b = dt__box_numel(h->ndim, &pc->src) * h->g.es;
            dt__box at;
            if (!b) continue;
            if (mi >= h->nmsgs) { ok = 0; break; }
            dt__shift_box(h->ndim, &pc->src, pc->shift, &at); /* a receive lands shifted */
            h->mpack[mi] = pk;
            h->mpiece[mi] = j;
            ok = dt__mpi_box_type(&h->g, i < h->nsend ? &pc->src : &at, h->mel, 0, &h->mbase[mi], &h->mcount[mi],
                                  &h->mtype[mi]);
            if (ok && h->mtype[mi] != h->mel && b < tmin) { /* a small strided face: packed */
                dt__mpi_types_free(&h->mtype[mi], 1, &h->mel, 0);
            } else if (!ok && b / h->g.es <= (size_t)INT_MAX) {
                /* no datatype for this face (past the count limit, or MPI refused): this message packed,
                   still as elements of mel, so the peer's typed or packed end matches it; a failure that
                   dropped the whole plan to bytes on one rank only would post MPI_BYTE against its peers'
                   typed messages */
                h->mtype[mi] = MPI_DATATYPE_NULL;
                ok = 1;
            }
            pk += b;
            mi++;
        }
    }
    if (!ok || mi != h->nmsgs) { dt__halo_types_free(h); return; }
    h->typed = 1;
}

/* post the messages of a typed plan: receives into the ghost cells (small
   strided ones into buf), sends from the interior of the ghosted block
   (send_typed) or packed from `in` */
static dt_status dt__halo_post_typed(dt__halo *h, const dt__array *in, int send_typed) {
    int i, nrq = 0;
    dt_status st;
    for (i = 0; i < h->nmsgs; i++) {
        const dt_message *m = &h->msgs[i];
        if (h->mtype[i] != MPI_DATATYPE_NULL && (!m->send || send_typed)) {
            h->cbase[i] = h->mbase[i];
            h->ccount[i] = h->mcount[i];
            h->ctype[i] = h->mtype[i];
        } else {
            if (m->send) dt__pack(in, &h->pieces[h->mpiece[i]].src, h->mpack[i]);
            h->cbase[i] = h->mpack[i];
            h->ccount[i] = (int)(m->bytes / h->g.es);
            h->ctype[i] = h->mel;
        }
    }
    st = dt__comm_start_typed(h->comm, DT__TAG_HALO, h->nmsgs, h->msgs, h->cbase, h->ccount, h->ctype, h->mrq,
                              h->mst, &nrq, h->sbytes, h->rbytes);
    if (st) return st;
    h->nrq = nrq;
    if (nrq) h->request = h->mrq; /* in flight */
    return DT_OK;
}

/* complete a typed plan's exchange; unpack the small strided faces */
static dt_status dt__halo_wait_typed(const char *fn, dt__halo *h) {
    dt_status st = dt__comm_wait_typed(h->request ? h->nrq : 0, h->mrq, h->mst);
    int i;
    h->request = NULL;
    if (st) return dt__within(fn, st);
    for (i = 0; i < h->nmsgs; i++)
        if (!h->msgs[i].send && h->mtype[i] == MPI_DATATYPE_NULL) {
            const dt__hpiece *pc = &h->pieces[h->mpiece[i]];
            dt__box at;
            dt__shift_box(h->ndim, &pc->src, pc->shift, &at);
            dt__unpack(h->mpack[i], &at, &h->g);
        }
    return DT_OK;
}
#endif

/* fill `b` (inside a) with copies of the es-byte pattern */
static void dt__fill_box(const dt__array *a, const dt__box *b, const unsigned char *pattern) {
    size_t stride[DT_MAX_DIMS] = {0}, off, span = (size_t)(a->ndim ? b->ext[a->ndim - 1] : 1), j;
    int64_t idx[DT_MAX_DIMS];
    int nd = a->ndim, k;
    if (!dt__box_numel(nd, b)) return;
    dt__array_strides(a, stride);
    off = dt__array_offset(a, stride, b);
    for (k = 0; k < nd; k++) idx[k] = 0;
    for (;;) {
        for (j = 0; j < span; j++) memcpy(a->data + off + j * (nd ? stride[nd - 1] : a->es), pattern, a->es);
        for (k = nd - 2; k >= 0; k--) {
            off += stride[k];
            if (++idx[k] < b->ext[k]) break;
            off -= (size_t)b->ext[k] * stride[k];
            idx[k] = 0;
        }
        if (k < 0) break;
    }
}

static void dt__shift_box(int nd, const dt__box *b, const int64_t *shift, dt__box *out) {
    int d;
    *out = *b;
    for (d = 0; d < nd; d++) out->lo[d] += shift[d];
}

/* piece p of array a to (pack) or from a packed buffer in the same memory, dev's */
static dt_status dt__halo_move(const char *fn, const dt__device *dev, dt__array *a, const dt__box *p, char *buf,
                               int pack) {
    dt__array b = *a;
    b.data = buf;
    b.box = *p;
    b.stride = NULL;
    return pack ? dev->copy_box(fn, a, &b, p) : dev->copy_box(fn, &b, a, p);
}

/* staged: bytes between the tensor's memory and the backend's (the device
   that is not the host copies) */
static dt_status dt__halo_cross(const char *fn, const dt__halo *h, void *dst, const void *src, size_t bytes) {
    return (dt__on_host(h->eng) ? h->dev : h->eng)->copy(fn, dst, src, bytes);
}

/* The send messages' buffers: packed, or (in place, one message per
   piece, `from_array`) a face that is one span of the caller's array is sent
   from the array itself. Only where the exchange ends before the caller
   can write the interior (dt_halo_exchange, dt_stencil_apply): after the
   public _begin the interior may change, so there every send is packed.
   Staged, the packed sends then cross to the backend's memory in one copy. */
static dt_status dt__halo_pack_sends(const char *fn, dt__halo *h, dt__array *in, int from_array) {
    char *pk = h->staged ? h->pbuf : h->buf;
    int i, j, mi = 0;
    dt_status st;
    for (i = 0; i < h->nsend; i++) {
        size_t off = h->links[i].off;
        for (j = h->links[i].first; j < h->links[i].first + h->links[i].count; j++) {
            const dt__hpiece *pc = &h->pieces[j];
            size_t nb = dt__box_numel(h->ndim, &pc->src) * h->g.es;
            int direct = from_array && pc->contig;
            if (h->per_piece && nb) h->msgs[mi++].buf = direct ? h->g.data + pc->goff : h->buf + off;
            if (!direct && (st = dt__halo_move(fn, h->dev, in, &pc->src, pk + off, 1))) return st;
            off += nb;
        }
    }
    return h->staged && h->sbytes ? dt__halo_cross(fn, h, h->buf, h->pbuf, h->sbytes) : DT_OK;
}

/* the ghost cells past CONSTANT edges */
static dt_status dt__halo_fill(const char *fn, dt__halo *h) {
    dt__array f;
    dt_status st;
    int i;
    for (i = 0; i < h->nfills; i++) {
        if (dt__on_host(h->dev)) {
            dt__fill_box(&h->g, &h->fills[i], (const unsigned char *)h->pattern);
            continue;
        }
        f = h->g;
        f.data = h->fillbuf;
        f.box = h->fills[i];
        f.stride = NULL;
        if ((st = h->dev->copy_box(fn, &f, &h->g, &h->fills[i]))) return st;
    }
    return DT_OK;
}

static dt_status dt__halo_end(const char *fn, dt__halo *h);

/* interior -> ghosted block, edge fills, self copies, pack, post; every
   copy in the tensor's memory, by its device */
static dt_status dt__halo_begin(const char *fn, dt__halo *h, dt__array *in, int from_array) {
    int i;
    dt_status st = DT_OK;
    if (h->begun) return dt__fail(DT_ERR_ARG, "%s: an exchange is already begun on this tensor (call _end)", fn);
    /* in place: the interior is already there */
    if (!h->in_place && (st = h->dev->copy_box(fn, in, &h->g, &in->box))) return st;
    if ((st = dt__halo_fill(fn, h))) return st;
#ifndef DTENSOR_NO_MPI
    if (h->typed) {
        /* sends from the interior unless the caller may write it before _end (the public _begin on
           its own array); not in place, the interior is the ghosted block's, copied above */
        if ((st = dt__halo_post_typed(h, in, from_array || !h->in_place))) return dt__within(fn, st);
    } else
#endif
    {
        if ((st = dt__halo_pack_sends(fn, h, in, from_array))) return st;
        if ((st = dt__comm_start(h->comm, DT__TAG_HALO, h->nmsgs, h->msgs, h->sbytes, h->rbytes, &h->request)))
            return dt__within(fn, st);
    }
    /* the wraps of a dim this rank holds whole, while the messages fly: their
       ghost cells are not the ones the messages fill, their sources interior */
    for (i = h->self_first; i < h->self_first + h->self_count; i++) {
        dt__array view = *in;
        dt__box p;
        dt__shift_box(h->ndim, &in->box, h->pieces[i].shift, &view.box);
        dt__shift_box(h->ndim, &h->pieces[i].src, h->pieces[i].shift, &p);
        if ((st = h->dev->copy_box(fn, &view, &h->g, &p))) break;
    }
    h->begun = 1;
    if (st) (void)dt__halo_end(fn, h); /* a failed self copy: complete the messages posted */
    return st;
}

static dt_status dt__halo_end(const char *fn, dt__halo *h) {
    int i, j;
    /* cppcheck-suppress unreadVariable ; kept as the default status */
    dt_status st = DT_OK;
    if (!h->begun) return dt__fail(DT_ERR_ARG, "%s: no exchange was begun on this tensor", fn);
    h->begun = 0;
#ifndef DTENSOR_NO_MPI
    if (h->typed) return dt__halo_wait_typed(fn, h);
#endif
    if (h->request) {
        void *rq = h->request;
        h->request = NULL;
        if ((st = dt__comm_wait(h->comm, rq))) return dt__within(fn, st);
    }
    if (h->staged && h->rbytes && (st = dt__halo_cross(fn, h, h->pbuf + h->sbytes, h->buf + h->sbytes, h->rbytes)))
        return st;
    for (i = h->nsend; i < h->nsend + h->nrecv; i++) {
        char *b = (h->staged ? h->pbuf : h->buf) + h->links[i].off;
        for (j = h->links[i].first; j < h->links[i].first + h->links[i].count; j++) {
            dt__box p;
            dt__shift_box(h->ndim, &h->pieces[j].src, h->pieces[j].shift, &p);
            if (!h->pieces[j].direct && (st = dt__halo_move(fn, h->dev, &h->g, &p, b, 0))) return st;
            b += dt__box_numel(h->ndim, &p) * h->g.es;
        }
    }
    return DT_OK;
}


/* ---- the public halo calls ---- */

static dt_status dt__check_halo_desc(const char *fn, const dt_tensor *t, const dt_halo_desc *d) {
    int nd = t->desc.ndim, i;
    size_t n = dt_dtype_size(t->desc.dtype);
    char b[48];
    for (i = 0; i < t->mesh->ndim; i++) {
        if (t->desc.placements[i].kind == DT_PARTIAL)
            return dt__fail(DT_ERR_PLACEMENT, "%s: the tensor is %s on mesh dim %d; a halo needs values, not partial "
                            "sums (redistribute to Replicate first)", fn,
                            dt__placement_str(t->desc.placements[i], t->desc.ndim, b, sizeof b), i);
        if (t->desc.placements[i].kind == DT_SHARD && t->desc.placements[i].split == DT_SPLIT_CYCLIC)
            return dt__fail(DT_ERR_PLACEMENT, "%s: the tensor is %s on mesh dim %d; a block-cyclic part is many "
                            "blocks, each with its neighbours on other ranks, so it has no halo (redistribute to a "
                            "one-box rule: dt_shard, dt_shard_balanced or dt_shard_sizes)", fn,
                            dt__placement_str(t->desc.placements[i], t->desc.ndim, b, sizeof b), i);
    }
    for (i = 0; i < DT_MAX_DIMS; i++) {
        if (i >= nd) {
            if (d->width[i] || d->boundary[i])
                return dt__fail(DT_ERR_ARG, "%s: desc->width[%d] = %lld / boundary[%d] = %d but the tensor has %d dims",
                                fn, i, (long long)d->width[i], i, (int)d->boundary[i], nd);
            continue;
        }
        if (d->width[i] < 0)
            return dt__fail(DT_ERR_ARG, "%s: desc->width[%d] = %lld is negative", fn, dt__tdim(i, nd),
                            (long long)d->width[i]);
        if (t->ghosted && d->width[i] > t->ghost[i])
            return dt__fail(DT_ERR_ARG, "%s: halo width[%d] = %lld is wider than the tensor's ghost room %lld "
                            "(desc->local_ghost[%d] of dt_tensor_from_local)", fn, dt__tdim(i, nd), (long long)d->width[i],
                            (long long)t->ghost[i], dt__tdim(i, nd));
        if (d->boundary[i] > DT_BOUNDARY_NONE)
            return dt__fail(DT_ERR_ARG, "%s: desc->boundary[%d] = %d (0 CONSTANT, 1 PERIODIC, 2 NONE)", fn, dt__tdim(i, nd),
                            (int)d->boundary[i]);
        if (d->boundary[i] == DT_BOUNDARY_PERIODIC && d->width[i] > t->desc.shape[i])
            return dt__fail(DT_ERR_ARG, "%s: desc->width[%d] = %lld is wider than the periodic dim (%lld)", fn, dt__tdim(i, nd),
                            (long long)d->width[i], (long long)t->desc.shape[i]);
        if (d->width[i] > (INT64_MAX - t->box.ext[i]) / 2 ||
            !dt__mul_ok(n, (size_t)(t->box.ext[i] + 2 * d->width[i]), &n) || n > (size_t)INT64_MAX)
            return dt__fail(DT_ERR_SHAPE, "%s: the ghosted block (width[%d] = %lld) overflows size_t", fn, dt__tdim(i, nd),
                            (long long)d->width[i]);
    }
    if (d->corners != 0 && d->corners != 1)
        return dt__fail(DT_ERR_ARG, "%s: desc->corners = %d (0 or 1)", fn, d->corners);
    return DT_OK;
}

static uint64_t dt__halo_desc_hash(const dt_halo_desc *d) {
    uint64_t h = 14695981039346656037ull;
    unsigned char c[sizeof(int32_t)];
    int32_t corners = d->corners;
    memcpy(c, &corners, sizeof c);
    h = dt__hash(h, d->width, sizeof d->width);
    h = dt__hash(h, d->boundary, sizeof d->boundary);
    h = dt__hash(h, &d->fill, sizeof d->fill);
    return dt__hash(h, c, sizeof c);
}

static dt_status dt__tensor_set_halo_body(dt_tensor *t, const dt_halo_desc *desc) {
    const char *fn = "dt_tensor_set_halo";
    dt_halo_desc none;
    dt__halo *h = NULL;
    dt_status st;
    int d;
    if (!t) return dt__fail(DT_ERR_ARG, "%s: tensor is NULL", fn);
    if (t->halo && t->halo->begun)
        return dt__fail(DT_ERR_ARG, "%s: an exchange is in flight on this tensor (call dt_halo_exchange_end)", fn);
    if (t->mesh->rank < 0) return DT_OK;
    memset(&none, 0, sizeof none);
    st = desc ? dt__check_halo_desc(fn, t, desc) : DT_OK;
    if ((st = dt__agree(t->mesh->comm, fn, st, dt__halo_desc_hash(desc ? desc : &none)))) return st;
    if (desc) {
        int64_t w[DT_MAX_DIMS];
        for (d = 0; d < t->desc.ndim; d++) w[d] = desc->width[d];
        st = dt__halo_build(fn, t, w, w, desc->boundary, desc->corners, desc->fill, &h);
#ifndef DTENSOR_NO_MPI
        if (!st) dt__halo_types(h);
#endif
        /* all or none: a rank that could not allocate must not leave the others planning messages to it */
        if ((st = dt__agree(t->mesh->comm, fn, st, 0))) { dt__halo_free(h); return st; }
        h->desc = *desc;
    }
    dt__tensor_set_halo(t, h, dt__halo_free);
    return DT_OK;
}
DT_API dt_status dt_tensor_set_halo(dt_tensor *t, const dt_halo_desc *desc) {
    DT__PUBLIC("dt_tensor_set_halo", dt__tensor_set_halo_body(t, desc));
}

DT_API void *dt_tensor_ghosted_data(const dt_tensor *t, int64_t *ghosted_shape) {
    if (!t || !t->halo) return NULL;
    if (ghosted_shape) memcpy(ghosted_shape, t->halo->g.box.ext, (size_t)t->desc.ndim * sizeof(int64_t));
    return t->halo->g.data;
}

static dt_status dt__halo_check_tensor(const char *fn, const dt_tensor *t) {
    if (!t) return dt__fail(DT_ERR_ARG, "%s: tensor is NULL", fn);
    if (!t->halo && t->mesh->rank >= 0)
        return dt__fail(DT_ERR_ARG, "%s: the tensor has no halo (give it one with dt_tensor_set_halo)", fn);
    return DT_OK;
}

/* consistency checks: the tensor's spec and its halo */
static dt_status dt__halo_consistent(const char *fn, const dt_tensor *t, dt_status st) {
    int64_t h;
    if (!t || !dt__checks_on()) return st;
    h = t->halo ? (int64_t)dt__halo_desc_hash(&t->halo->desc) : 0;
    return dt__consistent_spec(t->mesh, fn, st, &t->desc, NULL, &h, 1, NULL);
}
#ifdef __clang_analyzer__ /* a local failure is returned (for the static analyzer) */
#define dt__halo_consistent(fn, t, st) \
    ((st) ? (dt__halo_consistent((fn), (t), (st)), (st)) : dt__halo_consistent((fn), (t), (st)))
#endif

static dt_status dt__halo_exchange_begin_body(dt_tensor *t) {
    const char *fn = "dt_halo_exchange_begin";
    dt__array in;
    dt_status st;
    st = dt__halo_check_tensor(fn, t);
    if ((st = dt__halo_consistent(fn, t, st)) || !t->halo) return st;
    dt__tensor_array(t, &in);
    return dt__halo_begin(fn, t->halo, &in, 0);
}
DT_API dt_status dt_halo_exchange_begin(dt_tensor *t) {
    DT__PUBLIC("dt_halo_exchange_begin", dt__halo_exchange_begin_body(t));
}

static dt_status dt__halo_exchange_end_body(dt_tensor *t) {
    const char *fn = "dt_halo_exchange_end";
    dt_status st;
    if ((st = dt__halo_check_tensor(fn, t)) || !t->halo) return st;
    return dt__halo_end(fn, t->halo);
}
DT_API dt_status dt_halo_exchange_end(dt_tensor *t) {
    DT__PUBLIC("dt_halo_exchange_end", dt__halo_exchange_end_body(t));
}

static dt_status dt__halo_exchange_body(dt_tensor *t) {
    const char *fn = "dt_halo_exchange";
    dt__array in;
    dt_status st;
    st = dt__halo_check_tensor(fn, t);
    if ((st = dt__halo_consistent(fn, t, st)) || !t->halo) return st;
    dt__tensor_array(t, &in);
    if ((st = dt__halo_begin(fn, t->halo, &in, 1))) return st;
    return dt__halo_end(fn, t->halo);
}
DT_API dt_status dt_halo_exchange(dt_tensor *t) { DT__PUBLIC("dt_halo_exchange", dt__halo_exchange_body(t)); }

/* ---- stencils ---- */

static void dt__stencil_call(dt_stencil_fn fn, void *user, dt_stencil_block *b, const int64_t *lo,
                             const int64_t *hi) {
    int d;
    for (d = 0; d < b->ndim; d++) {
        /* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult): lo[0..ndim) and hi[0..ndim) are set by the caller for every dim */
        if (hi[d] <= lo[d]) return;
        b->lo[d] = lo[d];
        b->ext[d] = hi[d] - lo[d];
    }
    fn(b, user);
}

/* The interior as the inner box (cells more than width from every face)
   plus the rim, in disjoint slabs: for dim d, the cells inside the inner
   range along dims < d, outside it along d, anywhere along dims > d. */
static void dt__stencil_run(dt_stencil_fn fn, void *user, dt_stencil_block *b, int rim) {
    int64_t a[DT_MAX_DIMS], z[DT_MAX_DIMS], lo[DT_MAX_DIMS], hi[DT_MAX_DIMS];
    int nd = b->ndim, d, e;
    for (d = 0; d < nd; d++) {
        int64_t n = b->local_shape[d], w = b->width[d];
        a[d] = w < n ? w : n;
        z[d] = n - w > a[d] ? n - w : a[d];
    }
    if (!rim) { dt__stencil_call(fn, user, b, a, z); return; }
    for (d = 0; d < nd; d++) {
        for (e = 0; e < nd; e++) {
            lo[e] = e < d ? a[e] : 0;
            hi[e] = e < d ? z[e] : b->local_shape[e];
        }
        hi[d] = a[d];
        dt__stencil_call(fn, user, b, lo, hi);
        lo[d] = z[d];
        hi[d] = b->local_shape[d];
        dt__stencil_call(fn, user, b, lo, hi);
    }
}

static dt_status dt__stencil_check(const char *fn_name, const dt_tensor *x, dt_stencil_fn fn, dt_tensor **out) {
    dt_status st;
    if ((st = dt__halo_check_tensor(fn_name, x))) return st;
    if (!fn) return dt__fail(DT_ERR_ARG, "%s: fn is NULL", fn_name);
    if (!out) return dt__fail(DT_ERR_ARG, "%s: out is NULL", fn_name);
    if (*out == x) return dt__fail(DT_ERR_ARG, "%s: *out is x; a stencil cannot run in place", fn_name);
    if (*out && (st = dt__check_out(fn_name, *out, x->mesh, &x->desc))) return st;
    if (x->halo && x->halo->begun)
        return dt__fail(DT_ERR_ARG, "%s: an exchange is in flight on x (call dt_halo_exchange_end)", fn_name);
    return DT_OK;
}

/* the stencil's `in`: where the halo's box starts inside the ghosted block
   (its first element, except in a ghosted array wider than the halo), so
   that interior cell i sits at i + width as the callback expects */
static const void *dt__stencil_in(const dt__halo *h) {
    size_t stride[DT_MAX_DIMS] = {0};
    if (!h->g.data) return NULL;
    dt__array_strides(&h->g, stride);
    return h->g.data + dt__array_offset(&h->g, stride, &h->hbox);
}

static dt_status dt__stencil_apply_body(dt_tensor *x, dt_stencil_fn fn, void *user, dt_tensor **out) {
    const char *fn_name = "dt_stencil_apply";
    dt_stencil_block b;
    dt__array in;
    dt_tensor *o = NULL;
    dt_status st;
    int d;
    if (!x) return dt__halo_check_tensor(fn_name, x); /* no mesh to tell the others on */
    /* the argument errors take part in the consistency check (no rank left waiting) */
    st = dt__stencil_check(fn_name, x, fn, out);
    if ((st = dt__halo_consistent(fn_name, x, st))) return st;
    if (!*out && (st = dt__tensor_make(fn_name, x->mesh, &x->desc, NULL, 0, &o))) return st;
    if (!o) o = *out;
    if (x->mesh->rank >= 0) {
        memset(&b, 0, sizeof b);
        b.dtype = x->desc.dtype;
        b.ndim = x->desc.ndim;
        b.in = dt__stencil_in(x->halo);
        /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): o is *out or the tensor just made */
        b.out = o->data;
        b.global_shape = x->desc.shape;
        for (d = b.ndim - 1; d >= 0; d--) {
            b.in_stride[d] = x->halo->g.stride ? x->halo->g.stride[d] /* the caller's strided ghosted array */
                             : d == b.ndim - 1 ? 1 : b.in_stride[d + 1] * x->halo->g.box.ext[d + 1];
            b.out_stride[d] = d == b.ndim - 1 ? 1 : b.out_stride[d + 1] * x->box.ext[d + 1];
            b.width[d] = x->halo->wlo[d];
            b.local_shape[d] = x->box.ext[d];
            b.offset[d] = x->box.lo[d];
        }
        dt__tensor_array(x, &in);
        if ((st = dt__halo_begin(fn_name, x->halo, &in, 1))) goto done;
        if (b.ndim == 0) { /* a 0-d tensor has one cell and no ghosts */
            if ((st = dt__halo_end(fn_name, x->halo))) goto done;
            fn(&b, user);
        } else {
            dt__stencil_run(fn, user, &b, 0);
            if ((st = dt__halo_end(fn_name, x->halo))) goto done;
            dt__stencil_run(fn, user, &b, 1);
        }
    }
    *out = o;
    return DT_OK;
done:
    if (o != *out) dt_tensor_destroy(o);
    return st;
}
DT_API dt_status dt_stencil_apply(dt_tensor *x, dt_stencil_fn fn, void *user, dt_tensor **out) {
    DT__PUBLIC("dt_stencil_apply", dt__stencil_apply_body(x, fn, user, out));
}

/* ---- convolution ---- */

typedef struct dt__conv {
    int nsp;                            /* spatial dims                        */
    int64_t pad[3], dil[3], k[3];       /* per spatial dim                     */
    int64_t ktot;                       /* taps                                */
} dt__conv;

/* x, w, bias and desc checked; the output desc (before placements) */
static dt_status dt__conv_check(const char *fn, int nsp, const dt_tensor *x, const dt_tensor *w,
                                const dt_tensor *bias, const dt_conv_desc *desc, dt__conv *cv, dt_tensor_desc *od) {
    char a[160], b[160];
    int i;
    if (!x || !w) return dt__fail(DT_ERR_ARG, "%s: %s is NULL", fn, x ? "w" : "x");
    if (w->desc.device != x->desc.device || (bias && bias->desc.device != x->desc.device))
        return dt__fail(DT_ERR_DEVICE, "%s: %s is on device %d and x on device %d; a convolution's tensors share one "
                        "device", fn, w->desc.device != x->desc.device ? "w" : "bias",
                        w->desc.device != x->desc.device ? w->desc.device : bias->desc.device, x->desc.device);
    if (dt__no_strided(fn, "x", x) || dt__no_strided(fn, "w", w) || dt__no_strided(fn, "bias", bias))
        return DT_ERR_UNSUPPORTED;
    if (w->mesh != x->mesh || (bias && bias->mesh != x->mesh))
        return dt__fail(DT_ERR_MESH, "%s: %s lives on another mesh than x", fn, w->mesh != x->mesh ? "w" : "bias");
    if (x->desc.dtype != DT_F32 && x->desc.dtype != DT_F64)
        return dt__fail(DT_ERR_DTYPE, "%s: x is %s; convolution takes f32 or f64", fn, dt_dtype_name(x->desc.dtype));
    if (w->desc.dtype != x->desc.dtype || (bias && bias->desc.dtype != x->desc.dtype))
        return dt__fail(DT_ERR_DTYPE, "%s: x is %s but %s is %s", fn, dt_dtype_name(x->desc.dtype),
                        w->desc.dtype != x->desc.dtype ? "w" : "bias",
                        dt_dtype_name(w->desc.dtype != x->desc.dtype ? w->desc.dtype : bias->desc.dtype));
    if (x->desc.ndim != nsp + 2 || w->desc.ndim != nsp + 2)
        return dt__fail(DT_ERR_SHAPE, "%s: x %s and w %s must both have %d dims ([N, C, %d spatial])", fn,
                        dt__shape_str(x->desc.shape, x->desc.ndim, a, sizeof a),
                        dt__shape_str(w->desc.shape, w->desc.ndim, b, sizeof b), nsp + 2, nsp);
    if (w->desc.shape[1] != x->desc.shape[1])
        return dt__fail(DT_ERR_SHAPE, "%s: w %s has %lld input channels, x %s has %lld", fn,
                        dt__shape_str(w->desc.shape, w->desc.ndim, a, sizeof a), (long long)w->desc.shape[1],
                        dt__shape_str(x->desc.shape, x->desc.ndim, b, sizeof b), (long long)x->desc.shape[1]);
    if (bias && (bias->desc.ndim != 1 || bias->desc.shape[0] != w->desc.shape[0]))
        return dt__fail(DT_ERR_SHAPE, "%s: bias %s must be [%lld] (w's output channels)", fn,
                        dt__shape_str(bias->desc.shape, bias->desc.ndim, a, sizeof a), (long long)w->desc.shape[0]);
    memset(cv, 0, sizeof *cv);
    cv->nsp = nsp;
    cv->ktot = 1;
    *od = x->desc;
    od->shape[1] = w->desc.shape[0];
    for (i = 0; i < 3; i++) {
        int64_t p = desc ? desc->padding[i] : 0, d = desc && desc->dilation[i] ? desc->dilation[i] : 1;
        if (i >= nsp) {
            if (desc && (desc->padding[i] || desc->dilation[i]))
                return dt__fail(DT_ERR_ARG, "%s: desc->padding[%d] / dilation[%d] set but there are %d spatial dims",
                                fn, i, i, nsp);
            continue;
        }
        if (p < 0 || d < 0 || p > ((int64_t)1 << 40) || d > ((int64_t)1 << 20) ||
            w->desc.shape[2 + i] > ((int64_t)1 << 20))
            return dt__fail(DT_ERR_ARG, "%s: padding[%d] = %lld, dilation[%d] = %lld, kernel size %lld: out of range",
                            fn, i, (long long)p, i, (long long)d, (long long)w->desc.shape[2 + i]);
        cv->pad[i] = p;
        cv->dil[i] = d;
        cv->k[i] = w->desc.shape[2 + i];
        cv->ktot *= cv->k[i];
        od->shape[2 + i] = x->desc.shape[2 + i] + 2 * p - d * (cv->k[i] - 1);
        if (cv->k[i] < 1 || od->shape[2 + i] < 1)
            return dt__fail(DT_ERR_SHAPE, "%s: spatial dim %d: input %lld + 2*padding %lld - dilation %lld * "
                            "(kernel %lld - 1) = %lld output cells (needs >= 1)", fn, i,
                            (long long)x->desc.shape[2 + i], (long long)p, (long long)d, (long long)cv->k[i],
                            (long long)od->shape[2 + i]);
    }
    return dt__shape_fits(fn, "the result", od->dtype, od->ndim, od->shape);
}

/* the ghost widths every rank's output box needs, maximised over ranks */
static void dt__conv_widths(const dt_mesh *m, const dt_tensor_desc *xd, const dt_tensor_desc *od, const dt__conv *cv,
                            int64_t *wlo, int64_t *whi) {
    int coord[DT_MAX_MESH_DIMS], r, i;
    for (i = 0; i < xd->ndim; i++) wlo[i] = whi[i] = 0;
    for (r = 0; r < m->size; r++) {
        dt__box ib, ob;
        dt__mesh_coord_of(m, r, coord);
        dt__tensor_box(m, xd, coord, &ib);
        dt__tensor_box(m, od, coord, &ob);
        for (i = 0; i < cv->nsp; i++) {
            int s = 2 + i;
            int64_t first = ob.lo[s] - cv->pad[i], last = ob.lo[s] + ob.ext[s] - 1 - cv->pad[i] + cv->dil[i] * (cv->k[i] - 1);
            if (!ob.ext[s]) continue;
            /* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult): wlo[0..ndim) is initialised before the loop */
            if (ib.lo[s] - first > wlo[s]) wlo[s] = ib.lo[s] - first;
            if (last - (ib.lo[s] + ib.ext[s] - 1) > whi[s]) whi[s] = last - (ib.lo[s] + ib.ext[s] - 1);
        }
    }
}

/* out (this rank's box) = bias + sum over taps of W_tap[Co, Ci] @ rows of the ghosted input */
/* the output before the taps accumulate into it: the bias (or zero) of each
   output channel (dim 1) everywhere; on a device zero, then + bias
   broadcast (0 + b is b exactly) by the device's kernel */
static dt_status dt__conv_init(dt_tensor *o, const dt_tensor *bias) {
    size_t es = dt_dtype_size(o->desc.dtype), plane = 1, j;
    int64_t n, i, sb[DT_MAX_DIMS] = {0}, so[DT_MAX_DIMS];
    int d, nd = o->desc.ndim;
    dt_status st;
    for (d = 2; d < nd; d++) plane *= (size_t)o->box.ext[d];
    if (!dt__on_host(o->dev)) {
        if ((st = o->dev->zero("dt_conv", o->data, o->bytes)) || !bias) return st;
        for (d = nd - 1; d >= 0; d--) so[d] = d == nd - 1 ? 1 : so[d + 1] * o->box.ext[d + 1];
        sb[1] = 1;
        o->dev->kernels()->binary(DT__B_ADD, o->desc.dtype, nd, o->box.ext, o->data, so, bias->data, sb, o->data, 1.0);
        return DT_OK;
    }
    for (n = 0; n < o->box.ext[0]; n++)
        for (i = 0; i < o->box.ext[1]; i++) {
            unsigned char v[16] = {0};
            char *dst = (char *)o->data + (size_t)(n * o->box.ext[1] + i) * plane * es;
            if (bias) memcpy(v, (const char *)bias->data + (size_t)i * es, es);
            for (j = 0; j < plane; j++) memcpy(dst + j * es, v, es);
        }
    return DT_OK;
}

static dt_status dt__conv_local(const dt__conv *cv, const dt__halo *h, const dt_tensor *w, const dt_tensor *bias,
                                dt_tensor *o) {
    dt_dtype t = o->desc.dtype;
    size_t es = dt_dtype_size(t);
    int nd = o->desc.ndim, ls = nd - 1, i;
    int64_t gs[DT_MAX_DIMS], os[DT_MAX_DIMS], base[3], co = o->desc.shape[1], ci = w->desc.shape[1];
    int64_t n, tap, rows = 1, row;
    dt_status st;
    DT_ASSERT(h && nd >= 3 && cv->nsp == nd - 2); /* (said for the static analyzer: dt__conv_check's shapes) */
    if (!o->numel) return DT_OK;
    for (i = nd - 1; i >= 0; i--) {
        /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): h is non-NULL once dt__halo_build and the agreement succeeded */
        gs[i] = i == nd - 1 ? 1 : gs[i + 1] * h->g.box.ext[i + 1];
        os[i] = i == nd - 1 ? 1 : os[i + 1] * o->box.ext[i + 1];
    }
    /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): h is non-NULL once dt__halo_build and the agreement succeeded */
    for (i = 0; i < cv->nsp; i++) base[i] = o->box.lo[2 + i] - cv->pad[i] - h->g.box.lo[2 + i];
    for (i = 0; i < cv->nsp - 1; i++) rows *= o->box.ext[2 + i];
    if ((st = dt__conv_init(o, bias))) return st;
    for (n = 0; n < o->box.ext[0]; n++)
        for (tap = 0; tap < cv->ktot; tap++) {
            int64_t kj[3], rest = tap, goff0 = n * gs[0];
            for (i = cv->nsp - 1; i >= 0; i--) { kj[i] = rest % cv->k[i]; rest /= cv->k[i]; }
            goff0 += (base[cv->nsp - 1] + kj[cv->nsp - 1] * cv->dil[cv->nsp - 1]) * gs[ls];
            for (row = 0; row < rows; row++) {
                int64_t goff = goff0, ooff = n * os[0], r = row;
                for (i = cv->nsp - 2; i >= 0; i--) {
                    int64_t ol = r % o->box.ext[2 + i];
                    r /= o->box.ext[2 + i];
                    goff += (ol + base[i] + kj[i] * cv->dil[i]) * gs[2 + i];
                    ooff += ol * os[2 + i];
                }
                st = o->dev->kernels()->gemm(t, co, o->box.ext[ls], ci, 1.0, (const char *)w->data + (size_t)tap * es,
                                ci * cv->ktot, cv->ktot, h->g.data + (size_t)goff * es, gs[1], gs[ls], 1.0,
                                (char *)o->data + (size_t)ooff * es, os[1], os[ls]);
                if (st) return st;
            }
        }
    return DT_OK;
}

/* what the ranks of a convolution must agree on: the inputs' specs, padding, dilation */
static uint64_t dt__conv_hash(const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias, const dt__conv *cv) {
    uint64_t h[4];
    h[0] = dt__desc_hash(&x->desc);
    h[1] = dt__desc_hash(&w->desc);
    h[2] = bias ? dt__desc_hash(&bias->desc) : 0;
    h[3] = dt__hash(dt__hash(14695981039346656037ull, cv->pad, sizeof cv->pad), cv->dil, sizeof cv->dil);
    return dt__hash(14695981039346656037ull, h, sizeof h);
}

/* the ranks agree on the arguments (checks on or off): x's spec, then w,
   bias, padding and dilation as args */
static dt_status dt__conv_consistent(const char *fn, const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias,
                                     const dt__conv *cv, dt_status st) {
    int64_t h;
    char args[DT__DESC_CHARS];
    if (x->mesh->rank < 0 || x->mesh->size == 1) return st;
    h = st ? 0 : (int64_t)dt__conv_hash(x, w, bias, cv);
    if (!dt__checks_on()) /* made all the same: a convolution is costly, the agreement is not */
        return dt__agree(x->mesh->comm, fn, st, (uint64_t)h);
    if (!st)
        snprintf(args, sizeof args, "w [%lld, %lld, ...]%s, padding %lld %lld %lld, dilation %lld %lld %lld",
                 (long long)w->desc.shape[0], (long long)w->desc.shape[1], bias ? ", bias" : "",
                 (long long)cv->pad[0], (long long)cv->pad[1], (long long)cv->pad[2], (long long)cv->dil[0],
                 (long long)cv->dil[1], (long long)cv->dil[2]);
    return dt__consistent_spec(x->mesh, fn, st, &x->desc, NULL, &h, 1, st ? NULL : args);
}
#ifdef __clang_analyzer__ /* a local failure is returned (for the static analyzer) */
#define dt__conv_consistent(fn, x, w, bias, cv, st) \
    ((st) ? (dt__conv_consistent((fn), (x), (w), (bias), (cv), (st)), (st)) \
          : dt__conv_consistent((fn), (x), (w), (bias), (cv), (st)))
#endif

/* a copy of t with `want` placements, or t itself when it has them */
static dt_status dt__conv_bring(const dt_tensor *t, const dt_placement *want, const dt_tensor **out, dt_tensor **tmp) {
    dt_status st;
    *tmp = NULL;
    *out = t;
    if (!t || dt__placements_eq(t->desc.placements, want, t->mesh->ndim)) return DT_OK;
    if (!(st = dt_tensor_redistribute(t, want, tmp))) *out = *tmp;
    return st;
}

static dt_status dt__conv_op(const char *fn, int nsp, const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias,
                          const dt_conv_desc *desc, dt_tensor **out) {
    dt__conv cv;
    dt_tensor_desc od;
    dt_placement xp[DT_MAX_MESH_DIMS], rep[DT_MAX_MESH_DIMS];
    const dt_tensor *xr, *wr, *br;
    dt_tensor *xt = NULL, *wt = NULL, *bt = NULL, *o = NULL;
    dt__halo *h = NULL;
    int64_t wlo[DT_MAX_DIMS], whi[DT_MAX_DIMS];
    uint8_t bnd[DT_MAX_DIMS];
    dt_mesh *m;
    dt_status st;
    int i;
    if (!x) return dt__conv_check(fn, nsp, x, w, bias, desc, &cv, &od); /* no mesh to tell the others on */
    m = x->mesh;
    /* every argument error takes part in the consistency check (no rank left waiting) */
    st = out ? dt__conv_check(fn, nsp, x, w, bias, desc, &cv, &od) : dt__fail(DT_ERR_ARG, "%s: out is NULL", fn);
    memset(rep, 0, sizeof rep);
    memcpy(xp, x->desc.placements, sizeof xp);
    for (i = 0; i < m->ndim; i++) { /* channels and partial sums: whole on every rank */
        if (xp[i].kind == DT_PARTIAL || (xp[i].kind == DT_SHARD && xp[i].dim == 1)) xp[i] = dt_replicate();
        if (xp[i].kind == DT_SHARD && xp[i].split) xp[i] = dt_shard(xp[i].dim); /* the output's extents differ: chunk */
    }
    if (!st) memcpy(od.placements, xp, sizeof xp);
    if (!st && *out && (*out == x || *out == w || *out == bias))
        st = dt__fail(DT_ERR_ARG, "%s: *out aliases an input", fn);
    if (!st && *out) st = dt__check_out(fn, *out, m, &od);
    if ((st = dt__conv_consistent(fn, x, w, bias, &cv, st))) return st;
    if ((st = dt__conv_bring(x, xp, &xr, &xt)) || (st = dt__conv_bring(w, rep, &wr, &wt)) ||
        (st = dt__conv_bring(bias, rep, &br, &bt)))
        goto done;
    if (m->rank >= 0) {
        dt__conv_widths(m, &xr->desc, &od, &cv, wlo, whi);
        memset(bnd, DT_BOUNDARY_CONSTANT, sizeof bnd);
        st = dt__halo_build(fn, xr, wlo, whi, bnd, 1, 0.0, &h);
        /* always made: ranks that passed another padding or kernel (checks off) fail here, before halo
           messages of different sizes meet (which MPICH would abort on: "Message truncated") */
        if ((st = dt__agree(m->comm, fn, st, st ? 0 : dt__conv_hash(x, w, bias, &cv)))) goto done;
        {
            dt__array in;
            dt__tensor_array(xr, &in);
            if ((st = dt__halo_begin(fn, h, &in, 0)) || (st = dt__halo_end(fn, h))) goto done;
        }
    }
    o = *out;
    if (!o && (st = dt__tensor_make(fn, m, &od, NULL, 0, &o))) goto done;
    if (m->rank >= 0 && (st = dt__conv_local(&cv, h, wr, br, o))) goto done;
    *out = o;
    o = NULL;
done:
    if (o && o != *out) dt_tensor_destroy(o);
    dt__halo_free(h);
    dt_tensor_destroy(xt);
    dt_tensor_destroy(wt);
    dt_tensor_destroy(bt);
    return st;
}

DT_API dt_status dt_conv1d(const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias, const dt_conv_desc *desc,
                           dt_tensor **out) {
    DT__PUBLIC("dt_conv1d", dt__conv_op("dt_conv1d", 1, x, w, bias, desc, out));
}
DT_API dt_status dt_conv2d(const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias, const dt_conv_desc *desc,
                           dt_tensor **out) {
    DT__PUBLIC("dt_conv2d", dt__conv_op("dt_conv2d", 2, x, w, bias, desc, out));
}
DT_API dt_status dt_conv3d(const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias, const dt_conv_desc *desc,
                           dt_tensor **out) {
    DT__PUBLIC("dt_conv3d", dt__conv_op("dt_conv3d", 3, x, w, bias, desc, out));
}

/* >>io --------------------------------------------------------------------
   Checkpoints as numpy .npy files. Layout of a file: the magic "\x93NUMPY",
   the version (major, minor), the header length (2 bytes little-endian in
   1.0, 4 bytes in 2.0/3.0), the header -- a Python dict literal
   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with
   spaces and ended by '\n' so that the data starts at a multiple of 64 --
   then the data, C order. dt__npy_parse_header is pure (bytes in, fields
   out) so that a fuzzer can drive it.

   Saving: reduce Partial mesh dims (dt_tensor_redistribute to Replicate),
   write "<path>.tmp.<token>", agree on the outcome, rename. Each element is
   written by exactly one rank: the holder with coordinate 0 on every
   Replicate mesh dim. MPI-IO: each writer writes its box as contiguous spans
   (the innermost whole dims folded, as dt__copy_box does) with
   MPI_File_write_at; a subarray file view with write_at_all would batch
   the spans of a column-sharded tensor and is the obvious next step.
   Loading: mesh rank 0 reads and parses the header, broadcasts the verdict
   (status and message) and the fields; each rank then reads its box the
   same way (MPI-IO) or rank 0 reads everything and scatters it. */

#define DT__NPY_MAX_HEADER ((size_t)1 << 24) /* a header longer than this is refused as corrupt */

typedef struct dt__npy_info {
    dt_dtype dtype;
    int ndim;
    int64_t shape[DT_MAX_DIMS];
    size_t data_offset; /* magic + version + length field + header */
    size_t data_bytes;  /* numel * itemsize                        */
} dt__npy_info;

/* the descr of each dtype; NULL: none (BF16) */
static const char *dt__npy_descr(dt_dtype t) {
    static const char *const d[DT_NUM_DTYPES] = {"<f4", "<f8", "<f2", NULL, "<i4", "<i8", "|u1", "<c8", "<c16"};
    return dt__dtype_valid(t) ? d[t] : NULL;
}

static size_t dt__npy_ws(const char *s, size_t n, size_t i) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    return i;
}

/* a quoted Python string (no escapes) at s[*i] into out; 0 if there is none */
static int dt__npy_str(const char *s, size_t n, size_t *i, char *out, size_t cap) {
    size_t k = 0;
    char q;
    if (*i >= n || (s[*i] != '\'' && s[*i] != '"')) return 0;
    q = s[(*i)++];
    while (*i < n && s[*i] != q) {
        if (s[*i] == '\\' || k + 1 >= cap) return 0;
        out[k++] = s[(*i)++];
    }
    if (*i >= n) return 0;
    (*i)++;
    out[k] = 0;
    return 1;
}

/* the identifier-like word `w` at s[i], not followed by another name char */
static int dt__npy_word(const char *s, size_t n, size_t i, const char *w) {
    size_t l = strlen(w);
    if (n - i < l || memcmp(s + i, w, l) != 0) return 0;
    i += l;
    return i >= n || !(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
                       (s[i] >= 'A' && s[i] <= 'Z'));
}

/* Parse the first `len` bytes of a .npy file (they must hold the magic,
   version, length field and the whole header; the data may follow).
   Pure: no I/O. DT_ERR_IO (message: "dt_tensor_load_npy: <why>") for
   anything that is not a C-order .npy file of a supported dtype with at
   most DT_MAX_DIMS dims whose byte size fits size_t and int64. */
static dt_status dt__npy_parse_header(const char *buf, size_t len, dt__npy_info *info) {
    const char *fn = "dt_tensor_load_npy";
    const unsigned char *u = (const unsigned char *)buf;
    const char *s;
    size_t hlen, pre, i, n, bytes;
    int seen[3] = {0, 0, 0}, fortran = 0, d;
    dt__npy_info r;
    if (!buf || !info) return dt__fail(DT_ERR_ARG, "%s: internal: header buffer or info is NULL", fn);
    memset(&r, 0, sizeof r);
    if (len < 8 || memcmp(buf, "\x93NUMPY", 6) != 0)
        return dt__fail(DT_ERR_IO, "%s: not a .npy file (%zu bytes; the magic \\x93NUMPY is missing)", fn, len);
    if ((u[6] != 1 && u[6] != 2 && u[6] != 3) || u[7] != 0)
        return dt__fail(DT_ERR_IO, "%s: .npy format version %d.%d (1.0, 2.0 and 3.0 are read)", fn, u[6], u[7]);
    pre = u[6] == 1 ? 10 : 12;
    if (len < pre) return dt__fail(DT_ERR_IO, "%s: truncated .npy preamble (%zu of %zu bytes)", fn, len, pre);
    hlen = (size_t)u[8] | (size_t)u[9] << 8;
    if (pre == 12) hlen |= (size_t)u[10] << 16 | (size_t)u[11] << 24;
    if (hlen > DT__NPY_MAX_HEADER)
        return dt__fail(DT_ERR_IO, "%s: header length %zu is implausible (more than %zu bytes)", fn, hlen,
                        DT__NPY_MAX_HEADER);
    if (hlen > len - pre)
        return dt__fail(DT_ERR_IO, "%s: truncated header: %zu bytes announced, %zu present", fn, hlen, len - pre);
    s = buf + pre;
    n = hlen;
    i = dt__npy_ws(s, n, 0);
    if (i >= n || s[i] != '{') return dt__fail(DT_ERR_IO, "%s: the header is not a dict (no '{')", fn);
    i = dt__npy_ws(s, n, i + 1);
    while (i < n && s[i] != '}') {
        char key[32], val[32];
        int k;
        if (!dt__npy_str(s, n, &i, key, sizeof key))
            return dt__fail(DT_ERR_IO, "%s: malformed header dict: a quoted key expected at byte %zu", fn, pre + i);
        k = strcmp(key, "descr") == 0 ? 0 : strcmp(key, "fortran_order") == 0 ? 1 : strcmp(key, "shape") == 0 ? 2 : -1;
        if (k < 0) return dt__fail(DT_ERR_IO, "%s: header key '%s' (only descr, fortran_order, shape)", fn, key);
        if (seen[k]++) return dt__fail(DT_ERR_IO, "%s: header key '%s' appears twice", fn, key);
        i = dt__npy_ws(s, n, i);
        if (i >= n || s[i] != ':') return dt__fail(DT_ERR_IO, "%s: malformed header dict: ':' expected after '%s'", fn, key);
        i = dt__npy_ws(s, n, i + 1);
        if (k == 0) {
            int t, found = -1;
            if (!dt__npy_str(s, n, &i, val, sizeof val))
                return dt__fail(DT_ERR_IO, "%s: descr is not a simple dtype string (structured dtypes are not read)",
                                fn);
            for (t = 0; t < DT_NUM_DTYPES; t++)
                if (dt__npy_descr((dt_dtype)t) && strcmp(val, dt__npy_descr((dt_dtype)t)) == 0) found = t;
            if (found < 0 && strcmp(val, "<u1") == 0) found = DT_U8; /* numpy itself writes '|u1' */
            if (found < 0)
                return dt__fail(DT_ERR_IO, "%s: descr '%s' is not supported (little-endian '<f4' '<f8' '<f2' '<i4' "
                                "'<i8' '|u1' '<c8' '<c16' are)", fn, val);
            r.dtype = (dt_dtype)found;
        } else if (k == 1) {
            if (dt__npy_word(s, n, i, "False")) { fortran = 0; i += 5; }
            else if (dt__npy_word(s, n, i, "True")) { fortran = 1; i += 4; }
            else return dt__fail(DT_ERR_IO, "%s: fortran_order is neither True nor False", fn);
        } else {
            int commas = 0;
            if (i >= n || s[i] != '(') return dt__fail(DT_ERR_IO, "%s: shape is not a tuple", fn);
            i = dt__npy_ws(s, n, i + 1);
            while (i < n && s[i] != ')') {
                int64_t v = 0;
                if (r.ndim >= DT_MAX_DIMS)
                    return dt__fail(DT_ERR_IO, "%s: shape has more than DT_MAX_DIMS = %d dims", fn, DT_MAX_DIMS);
                if (s[i] < '0' || s[i] > '9')
                    return dt__fail(DT_ERR_IO, "%s: shape[%d] is not a non-negative integer", fn, r.ndim);
                while (i < n && s[i] >= '0' && s[i] <= '9') {
                    int dg = s[i++] - '0';
                    if (v > (INT64_MAX - dg) / 10)
                        return dt__fail(DT_ERR_IO, "%s: shape[%d] overflows int64", fn, r.ndim);
                    v = v * 10 + dg;
                }
                if (i < n && (s[i] == 'L' || s[i] == 'l')) i++; /* Python 2 longs */
                r.shape[r.ndim++] = v;
                i = dt__npy_ws(s, n, i);
                if (i < n && s[i] == ',') { commas++; i = dt__npy_ws(s, n, i + 1); }
                else if (i < n && s[i] != ')') return dt__fail(DT_ERR_IO, "%s: malformed shape tuple", fn);
            }
            if (i >= n) return dt__fail(DT_ERR_IO, "%s: shape tuple not closed", fn);
            if (r.ndim == 1 && commas == 0) return dt__fail(DT_ERR_IO, "%s: shape (%lld) is not a tuple", fn,
                                                            (long long)r.shape[0]);
            i++;
        }
        i = dt__npy_ws(s, n, i);
        if (i < n && s[i] == ',') i = dt__npy_ws(s, n, i + 1);
        else if (i < n && s[i] != '}') return dt__fail(DT_ERR_IO, "%s: malformed header dict after '%s'", fn, key);
    }
    if (i >= n) return dt__fail(DT_ERR_IO, "%s: header dict not closed ('}' missing)", fn);
    i = dt__npy_ws(s, n, i + 1);
    if (i < n) return dt__fail(DT_ERR_IO, "%s: garbage after the header dict at byte %zu", fn, pre + i);
    for (d = 0; d < 3; d++)
        if (!seen[d])
            return dt__fail(DT_ERR_IO, "%s: header has no '%s' key", fn, d == 0 ? "descr" : d == 1 ? "fortran_order"
                                                                                        : "shape");
    if (fortran)
        return dt__fail(DT_ERR_IO, "%s: fortran_order is True; only C-order files are read (numpy: save "
                        "np.ascontiguousarray(a))", fn);
    /* the tensors' size rule (dt__shape_fits: a 0 counted as 1), so that a
       file the parser accepts is one dt_tensor_load_npy can make */
    bytes = dt_dtype_size(r.dtype);
    for (d = 0; d < r.ndim; d++)
        if ((uint64_t)r.shape[d] > (uint64_t)SIZE_MAX ||
            !dt__mul_ok(bytes, r.shape[d] ? (size_t)r.shape[d] : 1u, &bytes) || bytes > (size_t)INT64_MAX)
            return dt__fail(DT_ERR_IO, "%s: shape[0..%d] (0 counted as 1) times %zu-byte %s overflows", fn, d,
                            dt_dtype_size(r.dtype), dt_dtype_name(r.dtype));
    for (d = 0; d < r.ndim; d++) bytes = r.shape[d] ? bytes : 0;
    r.data_offset = pre + hlen;
    r.data_bytes = bytes;
    *info = r;
    return DT_OK;
}

/* the header of (t, ndim, shape): a new buffer of *len bytes, a multiple of 64 */
static dt_status dt__npy_header(const char *fn, dt_dtype t, int ndim, const int64_t *shape, char **out,
                                size_t *len) {
    size_t cap = 128 + (size_t)ndim * 24, k, total, pre = 10, hl;
    char *b = NULL, *dict;
    int d;
    dt_status st;
    if ((st = dt__alloc(fn, cap + 64, (void **)&b))) return st;
    dict = b + 12;
    k = (size_t)snprintf(dict, cap - 12, "{'descr': '%s', 'fortran_order': False, 'shape': (", dt__npy_descr(t));
    for (d = 0; d < ndim; d++)
        k += (size_t)snprintf(dict + k, cap - 12 - k, "%s%lld", d ? ", " : "", (long long)shape[d]);
    k += (size_t)snprintf(dict + k, cap - 12 - k, "%s), }", ndim == 1 ? "," : "");
    total = (pre + k + 1 + 63) / 64 * 64;
    if (total - pre > 65535) { pre = 12; total = (pre + k + 1 + 63) / 64 * 64; }
    hl = total - pre;
    if (pre == 10) memmove(b + 10, dict, k); /* the dict right after the preamble */
    memset(b + pre + k, ' ', hl - k - 1);
    b[total - 1] = '\n';
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (char)(pre == 10 ? 1 : 2);
    b[7] = 0;
    b[8] = (char)(hl & 0xff);
    b[9] = (char)((hl >> 8) & 0xff);
    if (pre == 12) { b[10] = (char)((hl >> 16) & 0xff); b[11] = (char)((hl >> 24) & 0xff); }
    *out = b;
    *len = total;
    return DT_OK;
}

/* All members of c learn the outcome: the status of the lowest failing rank
   and its message, the same on every rank. Allocates nothing (a max
   reduction finds that rank, which broadcasts its status and message), so a
   rank whose allocation failed reports it here like any other failure. */
static dt_status dt__io_agree(dt_comm *c, const char *fn, dt_status local) {
    int64_t first = local != DT_OK ? c->size - c->rank : 0; /* the max is the lowest failing rank */
    char msg[8 + sizeof dt__errbuf];
    int64_t code = local;
    dt_status st;
    if (c->size == 1) return dt__within(fn, local);
    if ((st = dt__comm_allmax_ctl(c, &first, 1))) return dt__within(fn, st);
    if (!first) return DT_OK;
    memcpy(msg, &code, 8);
    memcpy(msg + 8, dt__errbuf, sizeof dt__errbuf);
    st = dt__comm_broadcast_ctl(c, msg, sizeof msg, c->size - (int)first);
    if (st) return dt__within(fn, st);
    memcpy(&code, msg, 8);
    msg[sizeof msg - 1] = 0;
    memcpy(dt__errbuf, msg + 8, sizeof dt__errbuf);
    return dt__within(fn, (dt_status)code); /* (an inner call's failure names the public call too) */
}
#ifdef __clang_analyzer__ /* a local failure is returned (for the static analyzer) */
#define dt__io_agree(c, fn, local) ((local) ? (dt__io_agree((c), (fn), (local)), (local)) : dt__io_agree((c), (fn), (local)))
#endif

/* the temporary's suffix: differs between calls and processes, drawn on one rank */
static uint64_t dt__io_token(void) {
    static unsigned long calls = 0;
    uint64_t h = 14695981039346656037ull;
    time_t now = time(NULL);
    clock_t ck = clock();
    void *where = (void *)&h;
    calls++;
    h = dt__hash(h, &now, sizeof now);
    h = dt__hash(h, &ck, sizeof ck);
    h = dt__hash(h, &where, sizeof where);
    return dt__hash(h, &calls, sizeof calls);
}

/* is mesh coordinate `coord` the one writer of its box? (coordinate 0 on
   every Replicate mesh dim) */
static int dt__io_writer(const dt_mesh *m, const dt_placement *pl, const int *coord) {
    int i;
    for (i = 0; i < m->ndim; i++)
        if (pl[i].kind == DT_REPLICATE && coord[i] != 0) return 0;
    return 1;
}

#ifndef DTENSOR_NO_MPI
/* Each contiguous span of the box `b` of a C-order global array (shape gs,
   element size es, starting at file byte `base`) against the row-major local
   buffer `data`: read (rd) or written with MPI_File_*_at, in pieces of at
   most 1 GiB (MPI counts are ints). */
static dt_status dt__io_mpi_spans(const char *fn, MPI_File fh, int rd, int ndim, const int64_t *gs, const dt__box *b,
                                 size_t es, char *data, uint64_t base) {
    int64_t idx[DT_MAX_DIMS], one = 1;
    uint64_t gstr[DT_MAX_DIMS], off;
    dt__box b0;
    size_t span;
    int k, j;
    if (dt__box_numel(ndim, b) == 0) return DT_OK;
    if (ndim == 0) { /* a 0-d tensor: one element, as a [1] box of a [1] array */
        b0.lo[0] = 0;
        b0.ext[0] = 1;
        b = &b0;
        gs = &one;
        ndim = 1;
    }
    k = ndim - 1;
    gstr[ndim - 1] = es;
    for (j = ndim - 2; j >= 0; j--) gstr[j] = gstr[j + 1] * (uint64_t)gs[j + 1];
    span = (size_t)b->ext[k];
    /* cppcheck-suppress objectIndex ; gs = &one only with ndim = 1, and then k = 0 */
    while (k > 0 && b->ext[k] == gs[k]) { k--; span *= (size_t)b->ext[k]; }
    span *= es;
    for (j = 0; j < ndim; j++) idx[j] = 0;
    for (;;) {
        size_t done = 0;
        off = base;
        for (j = 0; j < ndim; j++) off += (uint64_t)(b->lo[j] + (j < k ? idx[j] : 0)) * gstr[j];
        while (done < span) {
            size_t piece = span - done < ((size_t)1 << 30) ? span - done : ((size_t)1 << 30);
            MPI_Status status;
            int rc, got = 0;
            rc = rd ? MPI_File_read_at(fh, (MPI_Offset)(off + done), data + done, (int)piece, MPI_BYTE, &status)
                    : MPI_File_write_at(fh, (MPI_Offset)(off + done), data + done, (int)piece, MPI_BYTE, &status);
            if (rc == MPI_SUCCESS) MPI_Get_count(&status, MPI_BYTE, &got);
            if (rc != MPI_SUCCESS || got != (int)piece) {
                char msg[MPI_MAX_ERROR_STRING];
                int ml = 0;
                msg[0] = 0;
                if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &ml);
                return dt__fail(DT_ERR_IO, "%s: MPI_File_%s_at(offset %llu, %zu bytes) %s %s", fn,
                                rd ? "read" : "write", (unsigned long long)(off + done), piece,
                                rc != MPI_SUCCESS ? "failed:" : "moved fewer bytes", msg);
            }
            done += piece;
        }
        data += span;
        for (j = k - 1; j >= 0; j--) {
            if (++idx[j] < b->ext[j]) break;
            idx[j] = 0;
        }
        if (j < 0) return DT_OK;
    }
}

/* The bound on the host memory a device shard's I/O stages through:
   DTENSOR_IO_CHUNK bytes (default 8 MiB; at least 16, one element) */
static size_t dt__io_chunk(void) {
    size_t c = dt__env_bytes("DTENSOR_IO_CHUNK", (size_t)8 << 20);
    return c < 16 ? 16 : c;
}

/* dt__io_mpi_spans for a box held in device memory (`a`, laid out by its
   strides, in dev's memory): moved piece by piece through one pinned host
   buffer of at most dt__io_chunk() bytes (dev->alloc_host) and one device
   buffer of the same size (the piece made contiguous by the device's box
   copy), so that a shard larger than free host memory is read or written
   whole. A piece is a slab of the outermost dim whose inner rows fit the
   chunk (one row cut in runs when a row does not). */
static dt_status dt__io_dev_spans(const char *fn, MPI_File fh, int rd, const dt__device *dev, const int64_t *gs,
                                  const dt__array *a, const dt__box *b, uint64_t base) {
    int nd = a->ndim, k, j;
    size_t chunk = dt__io_chunk(), es = a->es, total = dt__box_numel(nd, b) * es, cap, inner = es;
    int64_t per, idx[DT_MAX_DIMS];
    void *host = NULL, *dbuf = NULL;
    dt__array c;
    dt__box q;
    dt_status st;
    if (!total) return DT_OK;
    memset(&q, 0, sizeof q); /* (the dims past nd: clang's -Wconditional-uninitialized) */
    cap = total < chunk ? total : chunk;
    if ((st = dev->alloc_host(fn, cap, &host))) return st;
    if ((st = dev->alloc(fn, cap, &dbuf))) { dev->free_host(host); return st; }
    if (nd == 0) { /* one element */
        st = rd ? dt__io_mpi_spans(fn, fh, 1, 0, gs, b, es, (char *)host, base) : dev->copy(fn, host, a->data, es);
        if (!st) st = rd ? dev->copy(fn, a->data, host, es) : dt__io_mpi_spans(fn, fh, 0, 0, gs, b, es, (char *)host, base);
        goto done;
    }
    for (k = nd - 1; k > 0 && inner * (size_t)b->ext[k] <= cap; k--) inner *= (size_t)b->ext[k];
    per = (int64_t)(cap / inner); /* >= 1: dims k+1.. of one index of dim k fit */
    if (per > b->ext[k]) per = b->ext[k];
    for (j = 0; j < nd; j++) idx[j] = 0;
    c.data = (char *)dbuf; c.ndim = nd; c.es = es; c.stride = NULL;
    for (;;) {
        size_t n;
        for (j = 0; j < nd; j++) {
            q.lo[j] = b->lo[j] + (j <= k ? idx[j] : 0);
            q.ext[j] = j < k ? 1 : j == k ? (b->ext[k] - idx[k] < per ? b->ext[k] - idx[k] : per) : b->ext[j];
        }
        n = dt__box_numel(nd, &q) * es;
        c.box = q;
        if (rd) {
            if ((st = dt__io_mpi_spans(fn, fh, 1, nd, gs, &q, es, (char *)host, base)) ||
                (st = dev->copy(fn, dbuf, host, n)) || (st = dev->copy_box(fn, &c, a, &q)))
                break;
        } else if ((st = dev->copy_box(fn, a, &c, &q)) || (st = dev->copy(fn, host, dbuf, n)) ||
                   (st = dt__io_mpi_spans(fn, fh, 0, nd, gs, &q, es, (char *)host, base))) {
            break;
        }
        idx[k] += q.ext[k];
        for (j = k; j >= 0; j--) { /* the odometer over dims 0..k (dim k by slabs) */
            if (idx[j] < b->ext[j]) break;
            idx[j] = 0;
            if (j > 0) idx[j - 1]++;
        }
        if (j < 0) break;
    }
    if (!st && rd) st = dev->sync(fn); /* (the last piece's box copy has run before the caller agrees) */
done:
    dev->free(dbuf);
    dev->free_host(host);
    return st;
}

static dt_status dt__io_mpi_fail(const char *fn, int rc, const char *what, const char *path) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    msg[0] = 0;
    MPI_Error_string(rc, msg, &len);
    return dt__fail(DT_ERR_IO, "%s: %s('%s') failed: %s", fn, what, path, msg);
}

/* ROMIO (MPICH and its derivatives) reads the text before a ':' in a file
   name as a file-system driver ("lustre:/scratch/x"), so a plain name such
   as "ckpt_10:00:00.npy" is refused as an unknown file system. A name with a
   ':' goes to ROMIO behind the explicit "ufs:" prefix (plain POSIX I/O, right
   on every file system; ROMIO strips the prefix). A name too long for the
   buffer is passed as it is (longer than PATH_MAX, it fails anyway). */
#if defined(MPICH) || defined(MPICH_VERSION) || defined(ROMIO_VERSION)
#define DT__ROMIO 1
#else
#define DT__ROMIO 0
#endif
#define DT__IO_NAME_MAX 4104

static const char *dt__io_mpi_name(const char *path, char *buf, size_t cap) {
    size_t n = strlen(path);
    if (!DT__ROMIO || !strchr(path, ':') || n + 5 > cap) return path;
    snprintf(buf, cap, "ufs:%s", path);
    return buf;
}

static int dt__io_mpi_open(MPI_Comm mc, const char *path, int amode, MPI_File *fh) {
    char name[DT__IO_NAME_MAX];
    return MPI_File_open(mc, dt__io_mpi_name(path, name, sizeof name), amode, MPI_INFO_NULL, fh);
}

/* collective over mc: write header (mesh rank 0) and this rank's box (if it
   is a writer: b non-NULL) into a file of `total` bytes at `tmp` */
static dt_status dt__io_mpi_write(const char *fn, MPI_Comm mc, const char *tmp, int root, const char *hdr,
                                  size_t hlen, uint64_t total, int ndim, const int64_t *gs, const dt__box *b,
                                  size_t es, char *data, const dt__device *dev, const dt__array *darr) {
    MPI_File fh;
    dt_status st = DT_OK;
    int rc = dt__io_mpi_open(mc, tmp, MPI_MODE_CREATE | MPI_MODE_WRONLY, &fh);
    if (rc != MPI_SUCCESS) return dt__io_mpi_fail(fn, rc, "MPI_File_open", tmp);
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    if ((rc = MPI_File_set_size(fh, (MPI_Offset)total)) != MPI_SUCCESS)
        st = dt__io_mpi_fail(fn, rc, "MPI_File_set_size", tmp);
    if (!st && root) {
        dt__box hb;
        int64_t one = (int64_t)hlen;
        hb.lo[0] = 0;
        hb.ext[0] = one;
        st = dt__io_mpi_spans(fn, fh, 0, 1, &one, &hb, 1, (char *)hdr, 0);
    }
    if (!st && b && dev) st = dt__io_dev_spans(fn, fh, 0, dev, gs, darr, b, hlen); /* a device shard */
    else if (!st && b) st = dt__io_mpi_spans(fn, fh, 0, ndim, gs, b, es, data, hlen);
    if ((rc = MPI_File_close(&fh)) != MPI_SUCCESS && !st) st = dt__io_mpi_fail(fn, rc, "MPI_File_close", tmp);
    return st;
}
#endif

/* stdio: write header + the full data to `path` */
static dt_status dt__io_stdio_write(const char *fn, const char *path, const char *hdr, size_t hlen, const void *data,
                                    size_t bytes) {
    FILE *f = fopen(path, "wb");
    int ok;
    if (!f) return dt__fail(DT_ERR_IO, "%s: cannot create '%s': %s", fn, path, strerror(errno));
    ok = fwrite(hdr, 1, hlen, f) == hlen && (bytes == 0 || fwrite(data, 1, bytes, f) == bytes);
    ok = fflush(f) == 0 && ok;
    ok = fclose(f) == 0 && ok;
    if (!ok) return dt__fail(DT_ERR_IO, "%s: writing %zu bytes to '%s' failed: %s", fn, hlen + bytes, path,
                             strerror(errno));
    return DT_OK;
}

static dt_status dt__save_npy(const dt_tensor *t, const char *path);
static dt_status dt__save_npy_host(const dt_tensor *t, const char *path);
/* the inner steps (exchange, backend, allocations) name only themselves */
DT_API dt_status dt_tensor_save_npy(const dt_tensor *t, const char *path) {
    DT__PUBLIC("dt_tensor_save_npy", dt__within("dt_tensor_save_npy", dt__save_npy(t, path)));
}

static dt_status dt__save_npy(const dt_tensor *t, const char *path) {
    const char *fn = "dt_tensor_save_npy";
    dt_mesh *m;
    dt_tensor *red = NULL;
    const dt_tensor *src;
    dt_placement pl[DT_MAX_MESH_DIMS];
    char *hdr = NULL, *tmp = NULL, *full = NULL;
    dt_tensor contig;
    void *sbuf = NULL;
    size_t hlen = 0, es, total_data = 1;
    uint64_t tok = 0;
    int i, partial = 0, writer;
    dt_status st = DT_OK, st2;
#ifndef DTENSOR_NO_MPI
    MPI_Comm mc;
#endif
    if ((st = dt__check_tensor(fn, t))) return st; /* no mesh to tell the others on */
    m = t->mesh;
    if (m->rank < 0) return DT_OK;
    /* every argument error below is agreed on, so every rank returns it */
    if (!path || !path[0]) {
        st = dt__fail(DT_ERR_ARG, "%s: path is %s", fn, path ? "empty" : "NULL");
    } else if (!dt__npy_descr(t->desc.dtype)) {
        st = dt__fail(DT_ERR_UNSUPPORTED, "%s: %s has no numpy dtype; dt_cast it (e.g. to f32, exact) before saving",
                      fn, dt_dtype_name(t->desc.dtype));
    }
    if ((st = dt__agree(m->comm, fn, st, st ? 0 : dt__hash(dt__desc_hash(&t->desc), path, strlen(path))))) return st;
#ifndef DTENSOR_NO_MPI
    if (!dt__on_host(t->dev) && !dt__comm_mpi_handle(m->comm, &mc)) return dt__save_npy_host(t, path);
#else
    if (!dt__on_host(t->dev)) return dt__save_npy_host(t, path);
#endif
    es = dt_dtype_size(t->desc.dtype);
    for (i = 0; i < t->desc.ndim; i++) total_data *= (size_t)t->desc.shape[i];
    total_data *= es;
    memset(pl, 0, sizeof pl);
    dt__boxed(t->desc.placements, m->ndim, pl); /* a cyclic part is written as its boxed twin's */
    partial = dt__pl_cyclic(t->desc.placements, m->ndim);
    for (i = 0; i < m->ndim; i++)
        if (pl[i].kind == DT_PARTIAL) { pl[i] = dt_replicate(); partial = 1; }
    src = t;
    if (partial) { /* the global value: reduce the Partial mesh dims (and box the cyclic ones) */
        st = dt_tensor_redistribute(t, pl, &red);
        if ((st = dt__io_agree(m->comm, fn, st))) { dt_tensor_destroy(red); return st; }
        src = red;
    }
    writer = dt__io_writer(m, pl, m->coord);
    st = dt__npy_header(fn, t->desc.dtype, t->desc.ndim, t->desc.shape, &hdr, &hlen);
    /* strided host storage: a writer's shard through one contiguous copy (the others send nothing); a
       device shard goes through the strides piece by piece (dt__io_dev_spans) */
    if (!st && src->strided && writer && dt__on_host(src->dev) && !(st = dt__contig_copy(fn, src, 1, &contig, &sbuf)))
        src = &contig;
    if (!st) st = dt__alloc(fn, strlen(path) + 32, (void **)&tmp);
    if ((st = dt__io_agree(m->comm, fn, st))) goto done;
    if (m->rank == 0) tok = dt__io_token();
    st = dt__comm_broadcast_ctl(m->comm, &tok, sizeof tok, 0);
    if (st) goto done;
    sprintf(tmp, "%s.tmp.%016llx", path, (unsigned long long)tok);
#ifndef DTENSOR_NO_MPI
    if (dt__comm_mpi_handle(m->comm, &mc)) {
        dt__array da;
        dt__tensor_array_of_data(src, src->data, &da);
        st = dt__io_mpi_write(fn, mc, tmp, m->rank == 0, hdr, hlen, (uint64_t)hlen + total_data, t->desc.ndim,
                              t->desc.shape, writer ? &src->box : NULL, es, (char *)src->data,
                              dt__on_host(src->dev) ? NULL : src->dev, &da);
    } else
#endif
    {
        /* gather the writers' boxes to mesh rank 0, which writes with stdio */
        dt__ctx x;
        dt__array in, outa;
        dt__box *send = NULL, *recv = NULL;
        int j, c[DT_MAX_MESH_DIMS];
        if (m->rank == 0) st = dt__alloc(fn, total_data, (void **)&full);
        if (!st) st = dt__boxes(m->size, &send, &recv);
        if ((st = dt__io_agree(m->comm, fn, st))) { DT_FREE(send); goto done; }
        dt__ctx_of(src, &x);
        in.data = (char *)src->data;
        in.ndim = x.ndim;
        in.es = es;
        in.stride = NULL;
        in.box = src->box;
        outa.data = full;
        outa.ndim = x.ndim;
        outa.es = es;
        outa.stride = NULL;
        for (i = 0; i < x.ndim; i++) { outa.box.lo[i] = 0; outa.box.ext[i] = t->desc.shape[i]; }
        for (j = 0; j < m->size; j++) {
            dt__mesh_coord_of(m, j, c);
            /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): send is allocated by dt__boxes whenever this branch runs */
            if (j == 0 && writer) send[j] = src->box;
            else dt__box_empty(x.ndim, &send[j]);
            if (m->rank == 0 && dt__io_writer(m, pl, c)) dt__box_at(&x, pl, c, &recv[j]);
            else dt__box_empty(x.ndim, &recv[j]);
        }
        st = dt__exchange(m, &dt__host_device, m->comm, &in, &outa, send, recv, 0, total_data);
        DT_FREE(send);
        if (!st && m->rank == 0) st = dt__io_stdio_write(fn, tmp, hdr, hlen, full, total_data);
    }
    st = dt__io_agree(m->comm, fn, st);
    if (!st && m->rank == 0 && rename(tmp, path) != 0)
        st = dt__fail(DT_ERR_IO, "%s: renaming '%s' to '%s' failed: %s", fn, tmp, path, strerror(errno));
    st2 = dt__io_agree(m->comm, fn, st);
    if (st2 && m->rank == 0) remove(tmp); /* failed: no temporary left behind */
    st = st2;
done:
    dt__contig_free(src, sbuf);
    DT_FREE(full);
    DT_FREE(tmp);
    DT_FREE(hdr);
    dt_tensor_destroy(red);
    return st;
}

/* A device tensor over a backend without MPI-IO: its shard copied to a host
   tensor of the same spec, which is saved as host tensors are (mesh rank 0
   then gathers the whole array in host memory anyway) */
static dt_status dt__save_npy_host(const dt_tensor *t, const char *path) {
    const char *fn = "dt_tensor_save_npy";
    dt_tensor_desc hd = t->desc;
    dt_tensor *h = NULL;
    dt_tensor v;
    void *buf = NULL;
    dt_status st;
    hd.device = DT_HOST;
    hd.local_strides = NULL;
    hd.local_ghost = NULL;
    st = dt__tensor_make(fn, t->mesh, &hd, NULL, 0, &h);
    if (!st) st = dt__contig_copy(fn, t, 1, &v, &buf);
    if (!st && h->bytes) st = t->dev->copy(fn, h->data, v.data, h->bytes);
    dt__contig_free(t, buf);
    if (!(st = dt__io_agree(t->mesh->comm, fn, st))) st = dt__save_npy(h, path);
    dt_tensor_destroy(h);
    return st;
}

/* stdio: open `path`, parse its header, check its size. With data != NULL
   (info known), read the data into it instead. */
static dt_status dt__io_read_header(const char *fn, const char *path, dt__npy_info *info) {
    FILE *f = fopen(path, "rb");
    unsigned char pre[12];
    char *buf = NULL;
    size_t got, need = 0;
    long size;
    dt_status st;
    if (!f) return dt__fail(DT_ERR_IO, "%s: cannot open '%s': %s", fn, path, strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return dt__fail(DT_ERR_IO, "%s: cannot seek in '%s': %s", fn, path, strerror(errno));
    }
    got = fread(pre, 1, sizeof pre, f);
    if (got >= 10 && memcmp(pre, "\x93NUMPY", 6) == 0) {
        size_t hl = (size_t)pre[8] | (size_t)pre[9] << 8;
        if (pre[6] == 1) need = 10 + hl;
        else if (got >= 12) need = 12 + (hl | (size_t)pre[10] << 16 | (size_t)pre[11] << 24);
    }
    if (need > (size_t)size) need = (size_t)size; /* the parser reports the truncation */
    if (need > DT__NPY_MAX_HEADER + 12) need = DT__NPY_MAX_HEADER + 12;
    if (need <= got) {
        st = dt__npy_parse_header((const char *)pre, got, info);
    } else if (!(st = dt__alloc(fn, need, (void **)&buf))) {
        memcpy(buf, pre, got);
        if (fread(buf + got, 1, need - got, f) != need - got)
            st = dt__fail(DT_ERR_IO, "%s: reading the header of '%s' failed", fn, path);
        else
            st = dt__npy_parse_header(buf, need, info);
        DT_FREE(buf);
    }
    fclose(f);
    if (st) { /* name the file */
        char why[sizeof dt__errbuf];
        size_t k = strlen(fn) + 2;
        memcpy(why, dt__errbuf, sizeof why);
        return dt__fail(st, "%s: '%s': %s", fn, path, strncmp(why, fn, k - 2) == 0 ? why + k : why);
    }
    if ((uint64_t)size != (uint64_t)info->data_offset + info->data_bytes)
        return dt__fail(DT_ERR_IO, "%s: '%s' is %lld bytes, but its header (%s, %d dims) needs %zu + %zu = %llu "
                        "(truncated or trailing bytes)", fn, path, (long long)size, dt_dtype_name(info->dtype),
                        info->ndim, info->data_offset, info->data_bytes,
                        (unsigned long long)((uint64_t)info->data_offset + info->data_bytes));
    return DT_OK;
}

/* stdio: the data of an already checked file */
static dt_status dt__io_read_data(const char *fn, const char *path, const dt__npy_info *info, void *data) {
    FILE *f = fopen(path, "rb");
    int ok;
    if (!f) return dt__fail(DT_ERR_IO, "%s: cannot open '%s': %s", fn, path, strerror(errno));
    ok = info->data_offset <= (size_t)LONG_MAX && fseek(f, (long)info->data_offset, SEEK_SET) == 0 &&
         (info->data_bytes == 0 || fread(data, 1, info->data_bytes, f) == info->data_bytes);
    fclose(f);
    if (!ok) return dt__fail(DT_ERR_IO, "%s: reading %zu data bytes of '%s' failed", fn, info->data_bytes, path);
    return DT_OK;
}

static dt_status dt__load_npy(dt_mesh *m, const char *path, const dt_placement *placements, dt_tensor **out);
/* the inner steps (exchange, backend, allocations) name only themselves */
DT_API dt_status dt_tensor_load_npy(dt_mesh *m, const char *path, const dt_placement *placements, dt_tensor **out) {
    DT__PUBLIC("dt_tensor_load_npy", dt__within("dt_tensor_load_npy", dt__load_npy(m, path, placements, out)));
}

/* a cyclic layout is read as its boxed twin, then redistributed */
static dt_status dt__load_cyclic(dt_mesh *m, const char *path, const dt_tensor_desc *norm, dt_tensor **out) {
    dt_placement boxed[DT_MAX_MESH_DIMS];
    dt_tensor *b = NULL, *t = NULL;
    dt_status st;
    memset(boxed, 0, sizeof boxed);
    dt__boxed(norm->placements, m->ndim, boxed);
    if (norm->device != DT_HOST) { /* a device *out: the boxed twin read into device memory too */
        dt_tensor_desc bd = *norm;
        memcpy(bd.placements, boxed, sizeof boxed);
        st = dt__tensor_make("dt_tensor_load_npy", m, &bd, NULL, 0, &b);
        if ((st = dt__io_agree(m->comm, "dt_tensor_load_npy", st))) { dt_tensor_destroy(b); return st; }
    }
    if ((st = dt__load_npy(m, path, boxed, &b))) { dt_tensor_destroy(b); return st; }
    if (!*out) st = dt__tensor_make("dt_tensor_load_npy", m, norm, NULL, 0, &t);
    st = dt__io_agree(m->comm, "dt_tensor_load_npy", st);
    if (!st && t) st = dt__redistribute_into(b, norm->placements, t->data);
    else if (!st && *out) st = dt__redistribute_into_strided(b, norm->placements, (*out)->data, /* a strided *out in place */
                                                             (*out)->strided ? (*out)->stride : NULL);
    dt_tensor_destroy(b);
    if (st) { dt_tensor_destroy(t); return st; }
    if (t) *out = t;
    return DT_OK;
}

static dt_status dt__load_npy(dt_mesh *m, const char *path, const dt_placement *placements, dt_tensor **out) {
    const char *fn = "dt_tensor_load_npy";
    dt__npy_info info;
    dt_tensor_desc d, norm;
    dt_tensor *t = NULL;
    dt_status st = DT_OK;
    int i;
#ifndef DTENSOR_NO_MPI
    MPI_Comm mc;
#endif
    if (!m) return dt__fail(DT_ERR_ARG, "%s: mesh is NULL", fn);
    /* the argument errors are agreed on (with the path: one file for all) before rank 0 reads */
    if (!path || !path[0]) st = dt__fail(DT_ERR_ARG, "%s: path is %s", fn, path ? "empty" : "NULL");
    else if (!placements) st = dt__fail(DT_ERR_ARG, "%s: placements is NULL", fn);
    else if (!out) st = dt__fail(DT_ERR_ARG, "%s: out is NULL", fn);
    if (m->rank >= 0 && (st = dt__agree(m->comm, fn, st, st ? 0 : dt__hash(0, path, strlen(path))))) return st;
    if (st) return st;
    memset(&info, 0, sizeof info);
    if (m->rank <= 0) st = dt__io_read_header(fn, path, &info);
    if (m->rank >= 0 && m->comm->size > 1) { /* rank 0's verdict, fields and message to all */
        int64_t v[4 + DT_MAX_DIMS];
        char msg[sizeof dt__errbuf];
        dt_status bs;
        v[0] = st;
        v[1] = info.dtype;
        v[2] = info.ndim;
        v[3] = (int64_t)info.data_offset;
        for (i = 0; i < DT_MAX_DIMS; i++) v[4 + i] = info.shape[i];
        memcpy(msg, dt__errbuf, sizeof msg);
        bs = dt__comm_broadcast_ctl(m->comm, v, sizeof v, 0);
        if (!bs) bs = dt__comm_broadcast_ctl(m->comm, msg, sizeof msg, 0);
        if (bs) return bs;
        st = (dt_status)v[0];
        msg[sizeof msg - 1] = 0;
        if (st) { memcpy(dt__errbuf, msg, sizeof msg); return st; }
        info.dtype = (dt_dtype)v[1];
        info.ndim = (int)v[2];
        info.data_offset = (size_t)v[3];
        for (i = 0; i < DT_MAX_DIMS; i++) info.shape[i] = v[4 + i];
        info.data_bytes = dt_dtype_size(info.dtype);
        for (i = 0; i < info.ndim; i++) info.data_bytes *= (size_t)info.shape[i];
    }
    if (st) return st;
    memset(&d, 0, sizeof d);
    d.dtype = info.dtype;
    d.ndim = info.ndim;
    d.device = *out ? (*out)->desc.device : DT_HOST; /* an existing *out's memory: a device tensor is read into */
    memcpy(d.shape, info.shape, sizeof d.shape);
    for (i = 0; i < m->ndim; i++) d.placements[i] = placements[i];
    st = dt__check_desc(fn, m, &d, &norm);
    if (!st && *out) st = dt__check_out_spec(fn, *out, m, &norm);
    if (m->rank < 0) { /* outside the mesh: an empty tensor, no I/O */
        if (st || *out) return st;
        if ((st = dt__tensor_make(fn, m, &norm, NULL, 0, &t))) return st;
        *out = t;
        return DT_OK;
    }
    /* the placements (normalised: Shard(-1) and Shard(ndim-1) are one) too */
    if ((st = dt__agree(m->comm, fn, st, st ? 0 : dt__desc_hash(&norm)))) return st;
    if (dt__pl_cyclic(norm.placements, m->ndim)) return dt__load_cyclic(m, path, &norm, out);
#ifndef DTENSOR_NO_MPI
    if (dt__comm_mpi_handle(m->comm, &mc)) { /* each rank reads its own box */
        MPI_File fh;
        int rc;
        dt__box box;
        size_t bytes;
        void *dst = NULL;
        const dt__device *dev = dt__device_of(norm.device);
        dt__array da;
        dt__tensor_box(m, &norm, m->coord, &box); /* Partial does not change the box */
        bytes = dt__box_numel(norm.ndim, &box) * dt_dtype_size(norm.dtype);
        /* an existing *out is written once every rank has read its part (in its memory: a device
           *out through a device buffer, the host side bounded by dt__io_dev_spans) */
        if (*out) st = dt__scratch_on(m, dev, DT__SCRATCH_TMP, bytes, &dst);
        else if (!(st = dt__tensor_make(fn, m, &norm, NULL, 0, &t))) dst = t->data;
        da.data = (char *)dst; da.ndim = norm.ndim; da.es = dt_dtype_size(norm.dtype); da.box = box; da.stride = NULL;
        if ((st = dt__io_agree(m->comm, fn, st))) { dt_tensor_destroy(t); return st; } /* another rank's failure */
        rc = dt__io_mpi_open(mc, path, MPI_MODE_RDONLY, &fh);
        if (rc != MPI_SUCCESS) {
            st = dt__io_mpi_fail(fn, rc, "MPI_File_open", path);
        } else {
            MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
            if (dt__on_host(dev))
                st = dt__io_mpi_spans(fn, fh, 1, norm.ndim, norm.shape, &box, dt_dtype_size(norm.dtype), (char *)dst,
                                     info.data_offset);
            else
                st = dt__io_dev_spans(fn, fh, 1, dev, norm.shape, &da, &box, info.data_offset);
            if ((rc = MPI_File_close(&fh)) != MPI_SUCCESS && !st) st = dt__io_mpi_fail(fn, rc, "MPI_File_close", path);
        }
        if ((st = dt__io_agree(m->comm, fn, st))) { dt_tensor_destroy(t); return st; }
        for (i = 0; i < m->ndim && !st; i++) st = dt__to_partial(m, dev, i, norm.placements[i], dst, bytes);
        if (!st && *out) st = dt__contig_write_back(fn, *out, dst);
        if (st) { dt_tensor_destroy(t); return st; } /* (a device copy failing) */
        if (!*out) *out = t;
        return DT_OK;
    }
#endif
    { /* mesh rank 0 reads it all and scatters it */
        char *full = NULL;
        if (m->rank == 0 && !(st = dt__alloc(fn, info.data_bytes, (void **)&full)))
            st = dt__io_read_data(fn, path, &info, full);
        if ((st = dt__io_agree(m->comm, fn, st))) { DT_FREE(full); return st; }
        st = dt_tensor_distribute(m, &norm, full, 0, &t);
        DT_FREE(full);
        if ((st = dt__io_agree(m->comm, fn, st))) { dt_tensor_destroy(t); return st; }
        if (*out) {
            st = dt__contig_write_back(fn, *out, t->data);
            dt_tensor_destroy(t);
            return st;
        }
        *out = t;
        return DT_OK;
    }
}

/* RNG state files (dt_rng_save_state / dt_rng_load_state): one JSON object
   on one line, written by mesh rank 0 through the same temporary + rename
   as the .npy saves; loads are read by mesh rank 0 and the verdict and
   state broadcast as dt_tensor_load_npy broadcasts its header. */

#define DT__RNG_FILE_MAX 4096 /* a longer file is not an RNG state file */

/* Parse an RNG state file's bytes (pure: no I/O). DT_ERR_IO with the
   reason as message ("<why>", no function name) for anything else. */
static dt_status dt__rng_parse_state(const char *s, size_t n, uint64_t *seed, uint64_t *offset) {
    size_t i;
    int seen[3] = {0, 0, 0};
    uint64_t v[2] = {0, 0};
    i = dt__npy_ws(s, n, 0);
    if (i >= n || s[i] != '{') return dt__fail(DT_ERR_IO, "not a JSON object (no '{')");
    i = dt__npy_ws(s, n, i + 1);
    while (i < n && s[i] != '}') {
        char key[32], val[32];
        int k;
        if (s[i] != '"' || !dt__npy_str(s, n, &i, key, sizeof key))
            return dt__fail(DT_ERR_IO, "a double-quoted key expected at byte %zu", i);
        k = strcmp(key, "seed") == 0 ? 0 : strcmp(key, "offset") == 0 ? 1 : strcmp(key, "generator") == 0 ? 2 : -1;
        if (k < 0) return dt__fail(DT_ERR_IO, "key \"%s\" (only \"seed\", \"offset\", \"generator\")", key);
        if (seen[k]++) return dt__fail(DT_ERR_IO, "key \"%s\" appears twice", key);
        i = dt__npy_ws(s, n, i);
        if (i >= n || s[i] != ':') return dt__fail(DT_ERR_IO, "':' expected after \"%s\"", key);
        i = dt__npy_ws(s, n, i + 1);
        if (k == 2) {
            if (i >= n || s[i] != '"' || !dt__npy_str(s, n, &i, val, sizeof val) || strcmp(val, "philox4x32-10") != 0)
                return dt__fail(DT_ERR_IO, "\"generator\" is not \"philox4x32-10\"");
        } else {
            size_t d0 = i;
            uint64_t x = 0;
            while (i < n && s[i] >= '0' && s[i] <= '9') {
                unsigned dg = (unsigned)(s[i++] - '0');
                if (x > (UINT64_MAX - dg) / 10) return dt__fail(DT_ERR_IO, "\"%s\" overflows 64 bits", key);
                x = x * 10 + dg;
            }
            if (i == d0 || (i < n && (s[i] == '.' || s[i] == 'e' || s[i] == 'E')))
                return dt__fail(DT_ERR_IO, "\"%s\" is not a non-negative integer", key);
            if (i - d0 > 1 && s[d0] == '0') return dt__fail(DT_ERR_IO, "\"%s\" has a leading zero", key);
            v[k] = x;
        }
        i = dt__npy_ws(s, n, i);
        if (i < n && s[i] == ',') {
            i = dt__npy_ws(s, n, i + 1);
            if (i < n && s[i] == '}') return dt__fail(DT_ERR_IO, "trailing ',' before '}'");
        } else if (i < n && s[i] != '}') {
            return dt__fail(DT_ERR_IO, "',' or '}' expected after \"%s\" at byte %zu", key, i);
        }
    }
    if (i >= n) return dt__fail(DT_ERR_IO, "truncated: the object is not closed ('}' missing)");
    i = dt__npy_ws(s, n, i + 1);
    if (i < n) return dt__fail(DT_ERR_IO, "garbage after the object at byte %zu", i);
    if (!seen[0] || !seen[1]) return dt__fail(DT_ERR_IO, "no \"%s\" key", seen[0] ? "offset" : "seed");
    *seed = v[0];
    *offset = v[1];
    return DT_OK;
}

/* mesh rank 0's stdio read of `path` into (seed, offset); the message names fn and path */
static dt_status dt__rng_read_state(const char *fn, const char *path, uint64_t *seed, uint64_t *offset) {
    char buf[DT__RNG_FILE_MAX + 1];
    size_t got;
    int err;
    dt_status st;
    FILE *f = fopen(path, "rb");
    if (!f) return dt__fail(DT_ERR_IO, "%s: cannot open '%s': %s", fn, path, strerror(errno));
    got = fread(buf, 1, sizeof buf, f);
    err = ferror(f);
    fclose(f);
    if (err) return dt__fail(DT_ERR_IO, "%s: reading '%s' failed", fn, path);
    if (got > DT__RNG_FILE_MAX)
        return dt__fail(DT_ERR_IO, "%s: '%s' is longer than %d bytes: not an RNG state file", fn, path,
                        DT__RNG_FILE_MAX);
    if (got == 0) return dt__fail(DT_ERR_IO, "%s: '%s' is empty", fn, path);
    if ((st = dt__rng_parse_state(buf, got, seed, offset))) {
        char why[sizeof dt__errbuf];
        memcpy(why, dt__errbuf, sizeof why);
        why[sizeof why - 1] = 0;
        return dt__fail(st, "%s: '%s' is not an RNG state file: %s", fn, path, why);
    }
    return DT_OK;
}

static dt_status dt__rng_save_state(const dt_mesh *m, const char *path);
/* the inner steps (exchange, backend, allocations) name only themselves */
DT_API dt_status dt_rng_save_state(const dt_mesh *m, const char *path) {
    DT__PUBLIC("dt_rng_save_state", dt__within("dt_rng_save_state", dt__rng_save_state(m, path)));
}

static dt_status dt__rng_save_state(const dt_mesh *m, const char *path) {
    const char *fn = "dt_rng_save_state";
    char *tmp = NULL;
    dt_status st, st2;
    if (!m) return dt__fail(DT_ERR_ARG, "%s: mesh is NULL", fn);
    if (m->rank < 0) return DT_OK;
    st = !path || !path[0] ? dt__fail(DT_ERR_ARG, "%s: path is %s", fn, path ? "empty" : "NULL") : DT_OK;
    /* the ranks agree on the path and hold the same state (as they must) */
    if ((st = dt__agree(m->comm, fn, st, st ? 0 : dt__hash(dt__hash(dt__hash(0, &m->rng_seed, sizeof m->rng_seed),
                                                                    &m->rng_offset, sizeof m->rng_offset),
                                                           path, strlen(path)))))
        return st;
    /* only mesh rank 0 writes; its allocation's outcome is agreed on with the write's */
    if (m->rank == 0 && !(st = dt__alloc(fn, strlen(path) + 32, (void **)&tmp))) {
        FILE *f;
        sprintf(tmp, "%s.tmp.%016llx", path, (unsigned long long)dt__io_token());
        f = fopen(tmp, "wb");
        if (!f) {
            st = dt__fail(DT_ERR_IO, "%s: cannot create '%s': %s", fn, tmp, strerror(errno));
        } else {
            int ok = fprintf(f, "{\"generator\": \"philox4x32-10\", \"seed\": %llu, \"offset\": %llu}\n",
                             (unsigned long long)m->rng_seed, (unsigned long long)m->rng_offset) > 0;
            ok = fflush(f) == 0 && ok;
            ok = fclose(f) == 0 && ok;
            if (!ok) st = dt__fail(DT_ERR_IO, "%s: writing '%s' failed: %s", fn, tmp, strerror(errno));
        }
        if (!st && rename(tmp, path) != 0)
            st = dt__fail(DT_ERR_IO, "%s: renaming '%s' to '%s' failed: %s", fn, tmp, path, strerror(errno));
        if (st) remove(tmp); /* failed: no temporary left behind */
    }
    st2 = dt__io_agree(m->comm, fn, st);
    DT_FREE(tmp);
    return st2;
}

static dt_status dt__rng_load_state(dt_mesh *m, const char *path);
/* the inner steps (exchange, backend, allocations) name only themselves */
DT_API dt_status dt_rng_load_state(dt_mesh *m, const char *path) {
    DT__PUBLIC("dt_rng_load_state", dt__within("dt_rng_load_state", dt__rng_load_state(m, path)));
}

static dt_status dt__rng_load_state(dt_mesh *m, const char *path) {
    const char *fn = "dt_rng_load_state";
    uint64_t seed = 0, offset = 0;
    dt_status st = DT_OK;
    if (!m) return dt__fail(DT_ERR_ARG, "%s: mesh is NULL", fn);
    if (m->rank < 0) return DT_OK;
    st = !path || !path[0] ? dt__fail(DT_ERR_ARG, "%s: path is %s", fn, path ? "empty" : "NULL") : DT_OK;
    if ((st = dt__agree(m->comm, fn, st, st ? 0 : dt__hash(0, path, strlen(path))))) return st;
    if (m->rank == 0) st = dt__rng_read_state(fn, path, &seed, &offset);
    if (m->comm->size > 1) { /* rank 0's verdict, state and message to all */
        uint64_t v[3];
        char msg[sizeof dt__errbuf];
        dt_status bs;
        v[0] = (uint64_t)st;
        v[1] = seed;
        v[2] = offset;
        memcpy(msg, dt__errbuf, sizeof msg);
        bs = dt__comm_broadcast_ctl(m->comm, v, sizeof v, 0);
        if (!bs) bs = dt__comm_broadcast_ctl(m->comm, msg, sizeof msg, 0);
        if (bs) return bs;
        st = (dt_status)v[0];
        seed = v[1];
        offset = v[2];
        msg[sizeof msg - 1] = 0;
        if (st) memcpy(dt__errbuf, msg, sizeof msg);
    }
    if (st) return st;
    return dt__rng_set(fn, m, seed, offset);
}

/* ScaLAPACK interop (dt_tensor_scalapack_desc): pure, from the tensor's desc,
   mesh and local shape. */

/* ScaLAPACK's block size for the split of extent n over k coordinates by
   placement p if that split is block-cyclic (coordinate c holds blocks c,
   c + k, ... of b elements, the last one short), else 0 */
static int64_t dt__scalapack_block(const dt_placement *p, int64_t n, int k) {
    int64_t b, rem, s;
    int c;
    if (p->split == DT_SPLIT_CYCLIC) { /* a block past the extent is the extent */
        if (p->block <= 0) return 0;
        return p->block < n ? p->block : (n > 0 ? n : 1);
    }
    if (k == 1) return n > 0 ? n : 1;
    if (p->split == DT_SPLIT_CHUNK) return n > 0 ? (n + k - 1) / k : 1; /* always cyclic, one block each */
    if (p->split != DT_SPLIT_BALANCED && (p->split != DT_SPLIT_SIZES || !p->sizes)) return 0;
    /* balanced or sizes: one block per coordinate in order, all full but the last non-empty one */
    b = p->split == DT_SPLIT_BALANCED ? n / k + (n % k > 0) : p->sizes[0];
    if (b <= 0) b = 1;
    for (c = 0, rem = n; c < k; c++) {
        s = p->split == DT_SPLIT_BALANCED ? n / k + (c < n % k) : p->sizes[c];
        if (s != (rem < b ? rem : b)) return 0;
        rem -= s;
    }
    return b;
}

static const char *dt__scalapack_rule(const dt_placement *p, char *buf, size_t n) {
    static const char *const names[4] = {"chunk", "balanced", "sizes", "cyclic"};
    if (p->kind != DT_SHARD) return dt__placement_str(*p, -1, buf, n);
    if (p->split == DT_SPLIT_CYCLIC && p->src)
        snprintf(buf, n, "S(%d) cyclic block %lld src %d", (int)p->dim, (long long)p->block, (int)p->src);
    else if (p->split == DT_SPLIT_CYCLIC) snprintf(buf, n, "S(%d) cyclic block %lld", (int)p->dim, (long long)p->block);
    else snprintf(buf, n, "S(%d) %s", (int)p->dim, p->split < 4 ? names[p->split] : "?");
    return buf;
}

static dt_status dt__tensor_scalapack_desc_body(const dt_tensor *t, int ictxt, int desc[9], dt_scalapack_grid *grid) {
    const char *fn = "dt_tensor_scalapack_desc";
    const char *accepted = "accepted: [Shard(0), Shard(1)] or [Shard(1), Shard(0)], each dt_shard_cyclic or a "
                           "chunk/balanced/sizes split that is block-cyclic";
    const dt_tensor_desc *d;
    const dt_mesh *m;
    int64_t block[2], sh[2];
    int i, k[2], coord[2] = {0, 0}, in, src[2] = {0, 0};
    dt_scalapack_grid g;
    char b0[48], b1[48];
    if (!t) return dt__fail(DT_ERR_ARG, "%s: tensor is NULL", fn);
    if (!desc && !grid) return dt__fail(DT_ERR_ARG, "%s: desc and grid are both NULL (pass one or both)", fn);
    /* strided storage is ScaLAPACK's when it is a padded leading dimension (strides {LLD_, 1}, no ghosts) */
    if (t->strided && (t->ghosted || t->desc.ndim != 2 || (t->box.ext[1] > 1 && t->stride[1] != 1) ||
                       t->stride[0] > INT_MAX))
        return dt__no_strided(fn, "t", t);
    d = &t->desc;
    m = t->mesh;
    if (d->ndim != 2)
        return dt__fail(DT_ERR_SHAPE, "%s: the tensor has %d dim%s; ScaLAPACK takes a matrix (2 dims)", fn, d->ndim,
                        d->ndim == 1 ? "" : "s");
    if (m->ndim != 2)
        return dt__fail(DT_ERR_MESH, "%s: the mesh has %d dim%s; a BLACS grid is a 2-D mesh", fn, m->ndim,
                        m->ndim == 1 ? "" : "s");
    if (d->dtype != DT_F32 && d->dtype != DT_F64)
        return dt__fail(DT_ERR_DTYPE, "%s: dtype %s; ScaLAPACK's s and d routines take f32 and f64", fn,
                        dt_dtype_name(d->dtype));
    if (d->device != DT_HOST)
        return dt__fail(DT_ERR_UNSUPPORTED, "%s: the tensor is in device memory (device %d); ScaLAPACK reads host "
                        "memory", fn, d->device);
    for (i = 0; i < 2; i++)
        if (d->placements[i].kind != DT_SHARD || (i == 1 && d->placements[1].dim == d->placements[0].dim))
            return dt__fail(DT_ERR_PLACEMENT, "%s: placements [%s, %s]; %s", fn,
                            dt__scalapack_rule(&d->placements[0], b0, sizeof b0),
                            dt__scalapack_rule(&d->placements[1], b1, sizeof b1), accepted);
    for (i = 0; i < 2; i++) { /* block[tensor dim] */
        int td = d->placements[i].dim;
        k[i] = dt_mesh_dim_size(m, i);
        block[td] = dt__scalapack_block(&d->placements[i], d->shape[td], k[i]);
        src[td] = d->placements[i].src; /* RSRC / CSRC: 0 but for dt_shard_cyclic_src */
        if (!block[td])
            return dt__fail(DT_ERR_PLACEMENT, "%s: placements[%d] = %s splits dim %d (%lld) over %d ranks in parts "
                            "that are not block-cyclic (equal blocks in coordinate order, the last one short); %s",
                            fn, i, dt__scalapack_rule(&d->placements[i], b0, sizeof b0), td,
                            (long long)d->shape[td], k[i], accepted);
    }
    for (i = 0; i < 2; i++) /* blocks are at most the extent (a longer cyclic block is the extent) */
        if (d->shape[i] > INT_MAX)
            return dt__fail(DT_ERR_SHAPE, "%s: dim %d is %lld, above INT_MAX (ScaLAPACK's descriptor is int)", fn, i,
                            (long long)d->shape[i]);
    in = dt_mesh_coordinate(m, coord);
    if (d->placements[0].dim == 0) { /* mesh dim 0 (P) splits T's rows = A's columns */
        g.nprow = k[1];  g.npcol = k[0];  g.myrow = coord[1];  g.mycol = coord[0];
        g.order[0] = 'C';
    } else {
        g.nprow = k[0];  g.npcol = k[1];  g.myrow = coord[0];  g.mycol = coord[1];
        g.order[0] = 'R';
    }
    g.order[1] = 0;
    if (!in) g.myrow = g.mycol = -1;
    if (grid) *grid = g;
    if (desc) {
        dt_tensor_local_shape(t, sh);
        desc[0] = 1; /* dense */
        desc[1] = ictxt;
        desc[2] = (int)d->shape[1];
        desc[3] = (int)d->shape[0];
        desc[4] = (int)block[1];
        desc[5] = (int)block[0];
        desc[6] = src[1];
        desc[7] = src[0];
        desc[8] = in && sh[1] > 1 ? (int)sh[1] : 1;
        if (in && t->strided && sh[0] > 0 && t->stride[0] > desc[8]) desc[8] = (int)t->stride[0]; /* padded LLD */
    }
    return DT_OK;
}
DT_API dt_status dt_tensor_scalapack_desc(const dt_tensor *t, int ictxt, int desc[9], dt_scalapack_grid *grid) {
    DT__PUBLIC("dt_tensor_scalapack_desc", dt__tensor_scalapack_desc_body(t, ictxt, desc, grid));
}

/* a BLACS grid as dt_tensor_desc_from_scalapack takes it */
static dt_status dt__check_blacs_grid(const char *fn, const dt_scalapack_grid *g) {
    int in = g->myrow != -1 || g->mycol != -1; /* (-1, -1) alone is "outside"; (-2, -2) is a bad position */
    if (g->nprow <= 0 || g->npcol <= 0)
        return dt__fail(DT_ERR_ARG, "%s: grid %d x %d: nprow and npcol must be > 0", fn, g->nprow, g->npcol);
    if ((g->order[0] != 'R' && g->order[0] != 'C' && g->order[0] != 'r' && g->order[0] != 'c') || g->order[1])
        return dt__fail(DT_ERR_ARG, "%s: grid->order = \"%.2s\": \"R\" (row-major) or \"C\" (column-major), as "
                        "Cblacs_gridinit took it", fn, g->order);
    if (in && (g->myrow < 0 || g->myrow >= g->nprow || g->mycol < 0 || g->mycol >= g->npcol))
        return dt__fail(DT_ERR_ARG, "%s: grid->myrow, mycol = %d, %d outside the %d x %d grid (both -1: a process "
                        "outside it)", fn, g->myrow, g->mycol, g->nprow, g->npcol);
    return DT_OK;
}

static dt_status dt__tensor_desc_from_scalapack_body(const int desc[9], const dt_scalapack_grid *grid, dt_dtype dtype,
                                                     dt_tensor_desc *out, int64_t *local_shape, int64_t *local_strides) {
    const char *fn = "dt_tensor_desc_from_scalapack";
    int m_, n_, mb, nb, rsrc, csrc, lld, in;
    int64_t locr = 0, locc = 0;
    dt_placement rows, cols;
    dt_tensor_desc d;
    dt_status st;
    if (!desc) return dt__fail(DT_ERR_ARG, "%s: desc is NULL", fn);
    if (!grid) return dt__fail(DT_ERR_ARG, "%s: grid is NULL (nprow, npcol, order, myrow, mycol of the context)", fn);
    if (!out) return dt__fail(DT_ERR_ARG, "%s: out is NULL", fn);
    if (dtype != DT_F32 && dtype != DT_F64)
        return dt__fail(DT_ERR_DTYPE, "%s: dtype %s; ScaLAPACK's s and d routines take f32 and f64", fn,
                        dt_dtype_name(dtype));
    m_ = desc[2]; n_ = desc[3]; mb = desc[4]; nb = desc[5]; rsrc = desc[6]; csrc = desc[7]; lld = desc[8];
    if (desc[0] != 1)
        return dt__fail(DT_ERR_ARG, "%s: desc[0] (DTYPE_) = %d: a dense block-cyclic matrix's descriptor has "
                        "DTYPE_ = 1", fn, desc[0]);
    if (m_ < 0 || n_ < 0)
        return dt__fail(DT_ERR_ARG, "%s: desc[2], desc[3] (M_, N_) = %d, %d: sizes must be >= 0", fn, m_, n_);
    if (mb <= 0 || nb <= 0)
        return dt__fail(DT_ERR_ARG, "%s: desc[4], desc[5] (MB_, NB_) = %d, %d: blocks must be > 0", fn, mb, nb);
    if ((st = dt__check_blacs_grid(fn, grid))) return st;
    if (rsrc < 0 || rsrc >= grid->nprow)
        return dt__fail(DT_ERR_ARG, "%s: desc[6] (RSRC_) = %d: the process row of the first block must be 0..%d "
                        "(nprow = %d)", fn, rsrc, grid->nprow - 1, grid->nprow);
    if (csrc < 0 || csrc >= grid->npcol)
        return dt__fail(DT_ERR_ARG, "%s: desc[7] (CSRC_) = %d: the process column of the first block must be 0..%d "
                        "(npcol = %d)", fn, csrc, grid->npcol - 1, grid->npcol);
    in = grid->myrow >= 0;
    if (in) { /* NUMROC with the sources */
        locr = dt__numroc(m_, mb, grid->nprow, dt__cyclic_pos(grid->myrow, rsrc, grid->nprow));
        locc = dt__numroc(n_, nb, grid->npcol, dt__cyclic_pos(grid->mycol, csrc, grid->npcol));
    }
    if (lld < 1 || lld < locr)
        return dt__fail(DT_ERR_ARG, "%s: desc[8] (LLD_) = %d: the local leading dimension must be >= max(1, LOCr) "
                        "= %lld (process row %d holds %lld of the %d rows in blocks of %d from row %d)", fn, lld,
                        (long long)(locr > 1 ? locr : 1), grid->myrow, (long long)locr, m_, mb, rsrc);
    memset(&d, 0, sizeof d);
    d.dtype = dtype;
    d.ndim = 2;
    d.shape[0] = n_; /* T = A^T: A's columns are T's rows */
    d.shape[1] = m_;
    if ((st = dt__shape_fits(fn, "the matrix", dtype, 2, d.shape))) return st;
    if (in && locr > 0 && locc > 0 && lld > locr && lld > INT64_MAX / locc / (int64_t)dt_dtype_size(dtype))
        return dt__fail(DT_ERR_SHAPE, "%s: the local array, LLD_ %d x LOCc %lld elements of %zu bytes, overflows "
                        "int64", fn, lld, (long long)locc, dt_dtype_size(dtype));
    rows = dt_shard_cyclic_src(1, mb, rsrc); /* A's rows: T's dim 1, over the process rows */
    cols = dt_shard_cyclic_src(0, nb, csrc);
    if (grid->order[0] == 'C' || grid->order[0] == 'c') { d.placements[0] = cols; d.placements[1] = rows; }
    else { d.placements[0] = rows; d.placements[1] = cols; }
    if (local_shape) {
        local_shape[0] = locc;
        local_shape[1] = locr;
        d.local_shape = local_shape;
    }
    if (local_strides) {
        local_strides[0] = lld;
        local_strides[1] = 1;
        if (in && locr > 0 && locc > 0 && lld > locr) { /* padded columns; an empty part needs no strides */
            d.local_strides = local_strides;
            d.local_alloc_bytes = (int64_t)lld * locc * (int64_t)dt_dtype_size(dtype);
        }
    }
    *out = d;
    return DT_OK;
}
DT_API dt_status dt_tensor_desc_from_scalapack(const int desc[9], const dt_scalapack_grid *grid, dt_dtype dtype,
                                               dt_tensor_desc *out, int64_t *local_shape, int64_t *local_strides) {
    DT__PUBLIC("dt_tensor_desc_from_scalapack",
               dt__tensor_desc_from_scalapack_body(desc, grid, dtype, out, local_shape, local_strides));
}

/* >>debug -----------------------------------------------------------------
   visualize_sharding's counterpart: one line per mesh coordinate with the
   rank there and the global index ranges it holds, computed from the layout
   alone (no communication), so any one rank can print it. */

static dt_status dt__tensor_print_sharding_body(const dt_tensor *t, FILE *f) {
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
    fprintf(f, ") placements %s\n", dt__placements_str(t->desc.placements, m->ndim, t->desc.ndim, a, sizeof a));
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
        for (i = 0; i < t->desc.ndim && len < sizeof rg; i++) {
            dt__chain ch;
            int64_t runs, first;
            dt__chain_build(t->desc.shape[i], m->ndim, m->shape, c, t->desc.placements, i, &ch);
            runs = ch.cyclic ? dt__chain_spans(&ch, NULL) : 1;
            first = runs > 1 ? dt__chain_span(&ch, 0) : b.ext[i];
            len += (size_t)snprintf(rg + len, sizeof rg - len, "%s%lld:%lld", i ? ", " : "", (long long)b.lo[i],
                                    (long long)(b.lo[i] + first));
            if (runs > 1 && len < sizeof rg) /* block-cyclic: the first block, then how many more */
                len += (size_t)snprintf(rg + len, sizeof rg - len, " +%lld blocks", (long long)(runs - 1));
        }
        if (len < sizeof rg) snprintf(rg + len, sizeof rg - len, "]");
        fprintf(f, "  %-14s %-5d %-28s %s\n", co, m->ranks[r], rg, dt__shape_str(b.ext, t->desc.ndim, sh, sizeof sh));
    }
    return DT_OK;
}
DT_API dt_status dt_tensor_print_sharding(const dt_tensor *t, FILE *f) {
    DT__PUBLIC("dt_tensor_print_sharding", dt__tensor_print_sharding_body(t, f));
}

/* >>fortran ---------------------------------------------------------------
   The entry points dtensor.f90 binds to (the >>api Fortran subsection): a
   Fortran array of shape (n1, ..., nk) is the row-major tensor
   [nk, ..., n1] in the same memory, so each call reverses what is indexed
   by tensor dim and forwards to the public call. Nothing is copied but the
   small per-dim arrays. */

/* a Fortran-order desc converted: the C desc and the reversed arrays its
   pointers point at */
typedef struct dt__fdesc {
    dt_tensor_desc d;
    int64_t local_shape[DT_MAX_DIMS], local_ghost[DT_MAX_DIMS], local_strides[DT_MAX_DIMS];
} dt__fdesc;

static void dt__f_reverse(const int64_t *in, int n, int64_t *out) {
    int i;
    for (i = 0; i < n; i++) out[i] = in[n - 1 - i];
}

/* Fortran dim fd (1..ndim, or -ndim..-1 from the end) -> C dim ndim - fd;
   -1 when out of range */
static int dt__f_dim(int fd, int ndim) {
    if (fd < 0) fd += ndim + 1;
    return fd >= 1 && fd <= ndim ? ndim - fd : -1;
}

/* placements whose Shard dims are Fortran dims -> C dims: the first n
   entries of f are read (a desc's DT_MAX_MESH_DIMS, a placements argument's
   mesh dims), c's others zeroed (Replicate) */
static dt_status dt__f_placements(const char *fn, const dt_placement *f, int n, int ndim, dt_placement *c) {
    int i;
    if (!f) return dt__fail(DT_ERR_ARG, "%s: placements is NULL", fn);
    memset(c, 0, DT_MAX_MESH_DIMS * sizeof *c);
    for (i = 0; i < n && i < DT_MAX_MESH_DIMS; i++) {
        c[i] = f[i];
        if (f[i].kind != DT_SHARD) continue;
        c[i].dim = (int8_t)dt__f_dim(f[i].dim, ndim);
        if (c[i].dim < 0)
            return dt__fail(DT_ERR_PLACEMENT, "%s: placements(%d) is Shard(%d): a Fortran dim of a rank-%d tensor "
                            "is 1..%d (or -%d..-1 from the end)", fn, i + 1, f[i].dim, ndim, ndim, ndim);
    }
    return DT_OK;
}

static dt_status dt__f_desc(const char *fn, const dt_tensor_desc *f, dt__fdesc *c) {
    int n;
    memset(c, 0, sizeof *c); /* defined bytes even on failure: the consistency checks hash descs */
    if (!f) return dt__fail(DT_ERR_ARG, "%s: desc is NULL", fn);
    n = f->ndim;
    if (n < 0 || n > DT_MAX_DIMS)
        return dt__fail(DT_ERR_SHAPE, "%s: desc%%ndim = %d, must be 0..%d (DT_MAX_DIMS)", fn, n, DT_MAX_DIMS);
    c->d = *f;
    dt__f_reverse(f->shape, n, c->d.shape);
    if (f->local_shape) { dt__f_reverse(f->local_shape, n, c->local_shape); c->d.local_shape = c->local_shape; }
    if (f->local_ghost) { dt__f_reverse(f->local_ghost, n, c->local_ghost); c->d.local_ghost = c->local_ghost; }
    if (f->local_strides) {
        dt__f_reverse(f->local_strides, n, c->local_strides);
        c->d.local_strides = c->local_strides;
    }
    return dt__f_placements(fn, f->placements, DT_MAX_MESH_DIMS, n, c->d.placements);
}

/* The calls these wrappers forward to go through DT__F_CALL. clang's static
   analyzer (make lint) follows a call from here into the op machinery and
   reports the words dt__call_hash reads as undefined, which it does not from
   the ops' own entry points (a false report: dt__call_init sets them). In
   analysis builds only, the wrappers reach the public calls through
   pointers it does not follow; the calls are analysed from their own
   entries. */
#ifdef __clang_analyzer__
#define DT__F_CALL(fn) dt__f_ptr_##fn
#define DT__F_PTR(fn) static __typeof__(&fn) volatile dt__f_ptr_##fn = &fn
DT__F_PTR(dt_sum);
DT__F_PTR(dt_mean);
DT__F_PTR(dt_max);
DT__F_PTR(dt_min);
DT__F_PTR(dt_matmul);
DT__F_PTR(dt_tensor_empty);
DT__F_PTR(dt_tensor_zeros);
DT__F_PTR(dt_tensor_from_local);
DT__F_PTR(dt_tensor_distribute);
DT__F_PTR(dt_tensor_redistribute);
DT__F_PTR(dt_tensor_redistribute_begin);
DT__F_PTR(dt_tensor_redistribute_reduce_begin);
DT__F_PTR(dt_tensor_set_halo);
DT__F_PTR(dt_tensor_load_npy);
DT__F_PTR(dt_layout);
DT__F_PTR(dt_tensor_gather);
DT__F_PTR(dt_transpose);
DT__F_PTR(dt_permute);
DT__F_PTR(dt_reshape);
DT__F_PTR(dt_squeeze);
DT__F_PTR(dt_unsqueeze);
DT__F_PTR(dt_narrow);
DT__F_PTR(dt_cat);
DT__F_PTR(dt_stack);
DT__F_PTR(dt_split);
DT__F_PTR(dt_softmax);
DT__F_PTR(dt_log_softmax);
DT__F_PTR(dt_norm2);
DT__F_PTR(dt_argmax);
DT__F_PTR(dt_mm);
DT__F_PTR(dt_bmm);
DT__F_PTR(dt_addmm);
DT__F_PTR(dt_tensor_redistribute_reduce);
DT__F_PTR(dt_tensor_rand);
DT__F_PTR(dt_tensor_randn);
DT__F_PTR(dt_tensor_local_indices);
DT__F_PTR(dt_layout_indices);
DT__F_PTR(dt_stencil_apply);
DT__F_PTR(dt_conv1d);
DT__F_PTR(dt_conv2d);
DT__F_PTR(dt_conv3d);
DT__F_PTR(dt_tensor_desc_from_scalapack);
DT__F_PTR(dt_tensor_redistribute_end);
DT__F_PTR(dt_tensor_redistribute_test);
DT__F_PTR(dt_neg);
DT__F_PTR(dt_abs);
DT__F_PTR(dt_exp);
DT__F_PTR(dt_log);
DT__F_PTR(dt_sqrt);
DT__F_PTR(dt_rsqrt);
DT__F_PTR(dt_sin);
DT__F_PTR(dt_cos);
DT__F_PTR(dt_tanh);
DT__F_PTR(dt_sigmoid);
DT__F_PTR(dt_relu);
DT__F_PTR(dt_gelu);
DT__F_PTR(dt_silu);
DT__F_PTR(dt_copy);
DT__F_PTR(dt_cast);
DT__F_PTR(dt_scale);
DT__F_PTR(dt_shift);
DT__F_PTR(dt_pow);
DT__F_PTR(dt_fill);
DT__F_PTR(dt_add);
DT__F_PTR(dt_sub);
DT__F_PTR(dt_mul);
DT__F_PTR(dt_div);
DT__F_PTR(dt_maximum);
DT__F_PTR(dt_minimum);
DT__F_PTR(dt_dot);
DT__F_PTR(dt_axpy);
DT__F_PTR(dt_linear);
DT__F_PTR(dt_layer_norm);
DT__F_PTR(dt_rms_norm);
DT__F_PTR(dt_embedding);
DT__F_PTR(dt_cross_entropy);
DT__F_PTR(dt_dropout);
DT__F_PTR(dt_halo_exchange);
DT__F_PTR(dt_halo_exchange_begin);
DT__F_PTR(dt_halo_exchange_end);
DT__F_PTR(dt_tensor_save_npy);
DT__F_PTR(dt_tensor_zero_local);
DT__F_PTR(dt_uniform_);
DT__F_PTR(dt_normal_);
DT__F_PTR(dt_bernoulli_);
DT__F_PTR(dt_randint_);
DT__F_PTR(dt_tensor_scalapack_desc);
#else
#define DT__F_CALL(fn) fn
#endif

/* the module's sizes past the sixth (dt_f_module_size): written by a
   successful check, at start-up (dt_init, dt_comm_mpi) */
#define DT__F_MORE_SIZES 8
static int64_t dt__f_more_sizes[DT__F_MORE_SIZES];

static dt_status dt__f_check_sizes_body(const int64_t *sizes, int n) {
    static const char *const what[6] = {"sizeof dt_placement", "sizeof dt_mesh_desc", "sizeof dt_tensor_desc",
                                        "sizeof dt_halo_desc", "DT_MAX_DIMS", "DT_MAX_MESH_DIMS"};
    const int64_t mine[6] = {(int64_t)sizeof(dt_placement), (int64_t)sizeof(dt_mesh_desc),
                             (int64_t)sizeof(dt_tensor_desc), (int64_t)sizeof(dt_halo_desc), DT_MAX_DIMS,
                             DT_MAX_MESH_DIMS};
    int i;
    if (!sizes || n < 6 || n > 6 + DT__F_MORE_SIZES)
        return dt__fail(DT_ERR_ARG, "dt_f_check_sizes: sizes %s, n = %d; expected 6 to %d values (dtensor.f90 of "
                        "another version?)", sizes ? "given" : "NULL", n, 6 + DT__F_MORE_SIZES);
    for (i = 0; i < 6; i++)
        if (sizes[i] != mine[i])
            return dt__fail(DT_ERR_ARG, "dt_f_check_sizes: the Fortran module's %s is %lld, the C library's %lld: "
                            "dtensor.f90 does not match this build of dtensor.h, which has DT_MAX_DIMS = %d and "
                            "DT_MAX_MESH_DIMS = %d (build both with the same values and version)", what[i], (long long)sizes[i],
                            (long long)mine[i], DT_MAX_DIMS, DT_MAX_MESH_DIMS);
    for (i = 0; i < DT__F_MORE_SIZES; i++) dt__f_more_sizes[i] = 6 + i < n ? sizes[6 + i] : 0;
    return DT_OK;
}
DT_API dt_status dt_f_check_sizes(const int64_t *sizes, int n) {
    DT__F_PUBLIC("dt_check_sizes", dt__f_check_sizes_body(sizes, n));
}
DT_API int64_t dt_f_module_size(int i) { return i >= 0 && i < DT__F_MORE_SIZES ? dt__f_more_sizes[i] : 0; }

#ifndef DTENSOR_NO_MPI
static dt_status dt__f_comm_mpi_body(MPI_Fint comm, const int64_t *sizes, int n, dt_comm **out) {
    dt_status st = dt_f_check_sizes(sizes, n);
    if (st) return st;
    return dt_comm_mpi(dt__mpi_comm_f2c(comm), out);
}
DT_API dt_status dt_f_comm_mpi(MPI_Fint comm, const int64_t *sizes, int n, dt_comm **out) {
    DT__F_PUBLIC("dt_comm_mpi", dt__f_comm_mpi_body(comm, sizes, n, out));
}
#endif

static dt_status dt__f_tensor_empty_body(dt_mesh *m, const dt_tensor_desc *fd, dt_tensor **out) {
    dt__fdesc c;
    dt_status st = dt__f_desc("dt_tensor_empty", fd, &c);
    return st ? st : DT__F_CALL(dt_tensor_empty)(m, &c.d, out);
}
DT_API dt_status dt_f_tensor_empty(dt_mesh *m, const dt_tensor_desc *fd, dt_tensor **out) {
    DT__F_PUBLIC("dt_tensor_empty", dt__f_tensor_empty_body(m, fd, out));
}

static dt_status dt__f_tensor_zeros_body(dt_mesh *m, const dt_tensor_desc *fd, dt_tensor **out) {
    dt__fdesc c;
    dt_status st = dt__f_desc("dt_tensor_zeros", fd, &c);
    return st ? st : DT__F_CALL(dt_tensor_zeros)(m, &c.d, out);
}
DT_API dt_status dt_f_tensor_zeros(dt_mesh *m, const dt_tensor_desc *fd, dt_tensor **out) {
    DT__F_PUBLIC("dt_tensor_zeros", dt__f_tensor_zeros_body(m, fd, out));
}

static dt_status dt__f_tensor_from_local_body(dt_mesh *m, const dt_tensor_desc *fd, void *local, unsigned flags,
                                              dt_tensor **out) {
    dt__fdesc c;
    dt_status st = dt__f_desc("dt_tensor_from_local", fd, &c);
    return st ? st : DT__F_CALL(dt_tensor_from_local)(m, &c.d, local, flags, out);
}
DT_API dt_status dt_f_tensor_from_local(dt_mesh *m, const dt_tensor_desc *fd, void *local, unsigned flags,
                                        dt_tensor **out) {
    DT__F_PUBLIC("dt_tensor_from_local", dt__f_tensor_from_local_body(m, fd, local, flags, out));
}

static dt_status dt__f_tensor_distribute_body(dt_mesh *m, const dt_tensor_desc *fd, const void *full, int src_rank,
                                              dt_tensor **out) {
    dt__fdesc c;
    dt_status st = dt__f_desc("dt_tensor_distribute", fd, &c);
    return st ? st : DT__F_CALL(dt_tensor_distribute)(m, &c.d, full, src_rank, out);
}
DT_API dt_status dt_f_tensor_distribute(dt_mesh *m, const dt_tensor_desc *fd, const void *full, int src_rank,
                                        dt_tensor **out) {
    DT__F_PUBLIC("dt_tensor_distribute", dt__f_tensor_distribute_body(m, fd, full, src_rank, out));
}

static dt_status dt__f_tensor_redistribute_body(const dt_tensor *t, const dt_placement *fplacements, dt_tensor **out) {
    dt_placement c[DT_MAX_MESH_DIMS];
    dt_status st = dt__check_tensor("dt_tensor_redistribute", t);
    if (!st) st = dt__f_placements("dt_tensor_redistribute", fplacements, dt_mesh_ndim(t->mesh), t->desc.ndim, c);
    return st ? st : DT__F_CALL(dt_tensor_redistribute)(t, c, out);
}
DT_API dt_status dt_f_tensor_redistribute(const dt_tensor *t, const dt_placement *fplacements, dt_tensor **out) {
    DT__F_PUBLIC("dt_tensor_redistribute", dt__f_tensor_redistribute_body(t, fplacements, out));
}

static dt_status dt__f_tensor_redistribute_begin_body(const dt_tensor *t, const dt_placement *fplacements,
                                                      dt_tensor **out) {
    dt_placement c[DT_MAX_MESH_DIMS];
    dt_status st = dt__check_tensor("dt_tensor_redistribute_begin", t);
    if (!st) st = dt__f_placements("dt_tensor_redistribute_begin", fplacements, dt_mesh_ndim(t->mesh), t->desc.ndim, c);
    return st ? st : DT__F_CALL(dt_tensor_redistribute_begin)(t, c, out);
}
DT_API dt_status dt_f_tensor_redistribute_begin(const dt_tensor *t, const dt_placement *fplacements, dt_tensor **out) {
    DT__F_PUBLIC("dt_tensor_redistribute_begin", dt__f_tensor_redistribute_begin_body(t, fplacements, out));
}

static dt_status dt__f_tensor_redistribute_reduce_begin_body(const dt_tensor *t, const dt_placement *fplacements,
                                                             dt_reduce op, dt_tensor *out) {
    dt_placement c[DT_MAX_MESH_DIMS];
    dt_status st = dt__check_tensor("dt_tensor_redistribute_reduce_begin", t);
    if (!st)
        st = dt__f_placements("dt_tensor_redistribute_reduce_begin", fplacements, dt_mesh_ndim(t->mesh),
                              t->desc.ndim, c);
    return st ? st : DT__F_CALL(dt_tensor_redistribute_reduce_begin)(t, c, op, out);
}
DT_API dt_status dt_f_tensor_redistribute_reduce_begin(const dt_tensor *t, const dt_placement *fplacements,
                                                       dt_reduce op, dt_tensor *out) {
    DT__F_PUBLIC("dt_tensor_redistribute_reduce_begin",
                 dt__f_tensor_redistribute_reduce_begin_body(t, fplacements, op, out));
}

static dt_status dt__f_tensor_shape_body(const dt_tensor *t, int *ndim, int64_t *shape) {
    dt_status st = dt__check_tensor("dt_tensor_shape", t);
    if (st) return st;
    if (!ndim || !shape) return dt__fail(DT_ERR_ARG, "dt_tensor_shape: ndim or shape is NULL");
    *ndim = t->desc.ndim;
    dt__f_reverse(t->desc.shape, t->desc.ndim, shape);
    return DT_OK;
}
DT_API dt_status dt_f_tensor_shape(const dt_tensor *t, int *ndim, int64_t *shape) {
    DT__F_PUBLIC("dt_tensor_shape", dt__f_tensor_shape_body(t, ndim, shape));
}

static dt_status dt__f_tensor_local_shape_body(const dt_tensor *t, int64_t *shape, int64_t *offset) {
    int64_t v[DT_MAX_DIMS];
    dt_status st = dt__check_tensor("dt_tensor_local_shape", t);
    if (st) return st;
    if (shape) { dt_tensor_local_shape(t, v); dt__f_reverse(v, t->desc.ndim, shape); }
    if (offset) { dt_tensor_local_offset(t, v); dt__f_reverse(v, t->desc.ndim, offset); }
    return DT_OK;
}
DT_API dt_status dt_f_tensor_local_shape(const dt_tensor *t, int64_t *shape, int64_t *offset) {
    DT__F_PUBLIC("dt_tensor_local_shape", dt__f_tensor_local_shape_body(t, shape, offset));
}

static dt_status dt__f_tensor_local_body(const dt_tensor *t, dt_dtype dtype, int ndim, int64_t *shape) {
    int64_t ls[DT_MAX_DIMS], str[DT_MAX_DIMS], step = 1;
    int d, n;
    dt_status st = dt__check_tensor("dt_tensor_local", t);
    if (st) return st;
    n = t->desc.ndim;
    if (!shape) return dt__fail(DT_ERR_ARG, "dt_tensor_local: shape is NULL");
    if (t->desc.dtype != dtype)
        return dt__fail(DT_ERR_DTYPE, "dt_tensor_local: the tensor is %s, the Fortran array %s",
                        dt_dtype_name(t->desc.dtype), dt_dtype_name(dtype));
    if (n != ndim)
        return dt__fail(DT_ERR_SHAPE, "dt_tensor_local: the tensor has rank %d, the Fortran array pointer %d", n, ndim);
    if (!dt__on_host(t->dev))
        return dt__fail(DT_ERR_UNSUPPORTED, "dt_tensor_local: the tensor is in device memory");
    dt_tensor_local_shape(t, ls);
    dt_tensor_local_strides(t, str);
    for (d = n - 1; d >= 0; d--) { /* contiguous: row-major strides wherever they address something */
        if (ls[d] > 1 && str[d] != step)
            return dt__fail(DT_ERR_UNSUPPORTED, "dt_tensor_local: the tensor's storage is strided or ghosted "
                            "(your own array, from dt_tensor_from_local): use that array");
        step *= ls[d];
    }
    dt__f_reverse(ls, n, shape);
    return DT_OK;
}
DT_API dt_status dt_f_tensor_local(const dt_tensor *t, dt_dtype dtype, int ndim, int64_t *shape) {
    DT__F_PUBLIC("dt_tensor_local", dt__f_tensor_local_body(t, dtype, ndim, shape));
}

static dt_status dt__f_layout_body(const dt_mesh *m, const dt_tensor_desc *fd, const int *coord, int64_t *local_shape,
                                   int64_t *local_offset) {
    dt__fdesc c;
    int64_t ls[DT_MAX_DIMS], off[DT_MAX_DIMS];
    dt_status st = dt__f_desc("dt_layout", fd, &c);
    if (!st) st = DT__F_CALL(dt_layout)(m, &c.d, coord, ls, off);
    if (st) return st;
    if (local_shape) dt__f_reverse(ls, c.d.ndim, local_shape);
    if (local_offset) dt__f_reverse(off, c.d.ndim, local_offset);
    return DT_OK;
}
DT_API dt_status dt_f_layout(const dt_mesh *m, const dt_tensor_desc *fd, const int *coord, int64_t *local_shape,
                             int64_t *local_offset) {
    DT__F_PUBLIC("dt_layout", dt__f_layout_body(m, fd, coord, local_shape, local_offset));
}

static dt_status dt__f_tensor_set_halo_body(dt_tensor *t, const dt_halo_desc *fh) {
    dt_halo_desc h;
    int d, n;
    dt_status st = dt__check_tensor("dt_tensor_set_halo", t);
    if (st || !fh) return st ? st : DT__F_CALL(dt_tensor_set_halo)(t, NULL);
    h = *fh;
    n = t->desc.ndim;
    for (d = 0; d < n; d++) {
        h.width[d] = fh->width[n - 1 - d];
        h.boundary[d] = fh->boundary[n - 1 - d];
    }
    return DT__F_CALL(dt_tensor_set_halo)(t, &h);
}
DT_API dt_status dt_f_tensor_set_halo(dt_tensor *t, const dt_halo_desc *fh) {
    DT__F_PUBLIC("dt_tensor_set_halo", dt__f_tensor_set_halo_body(t, fh));
}

/* a reduction over Fortran dims: they become C dims, then the C call */
typedef dt_status (*dt__f_reduce_fn)(const dt_tensor *, int, const int *, int, dt_tensor **);
static dt_status dt__f_reduce(const char *fn, dt__f_reduce_fn f, const dt_tensor *x, int ndims, const int *fdims,
                              int keepdim, dt_tensor **out) {
    int dims[DT_MAX_DIMS], i;
    dt_status st = dt__check_tensor(fn, x);
    if (st) return st;
    if (ndims == 0 || !fdims) return f(x, ndims, fdims, keepdim, out); /* all dims */
    if (ndims < 0 || ndims > x->desc.ndim)
        return dt__fail(DT_ERR_ARG, "%s: ndims = %d for a rank-%d tensor", fn, ndims, x->desc.ndim);
    for (i = 0; i < ndims; i++)
        if ((dims[i] = dt__f_dim(fdims[i], x->desc.ndim)) < 0)
            return dt__fail(DT_ERR_ARG, "%s: dims(%d) = %d: a Fortran dim of a rank-%d tensor is 1..%d", fn, i + 1,
                            fdims[i], x->desc.ndim, x->desc.ndim);
    return f(x, ndims, dims, keepdim, out);
}

DT_API dt_status dt_f_sum(const dt_tensor *x, int ndims, const int *fdims, int keepdim, dt_tensor **out) {
    DT__F_PUBLIC("dt_sum", dt__f_reduce("dt_sum", DT__F_CALL(dt_sum), x, ndims, fdims, keepdim, out));
}

DT_API dt_status dt_f_mean(const dt_tensor *x, int ndims, const int *fdims, int keepdim, dt_tensor **out) {
    DT__F_PUBLIC("dt_mean", dt__f_reduce("dt_mean", DT__F_CALL(dt_mean), x, ndims, fdims, keepdim, out));
}

DT_API dt_status dt_f_max(const dt_tensor *x, int ndims, const int *fdims, int keepdim, dt_tensor **out) {
    DT__F_PUBLIC("dt_max", dt__f_reduce("dt_max", DT__F_CALL(dt_max), x, ndims, fdims, keepdim, out));
}

DT_API dt_status dt_f_min(const dt_tensor *x, int ndims, const int *fdims, int keepdim, dt_tensor **out) {
    DT__F_PUBLIC("dt_min", dt__f_reduce("dt_min", DT__F_CALL(dt_min), x, ndims, fdims, keepdim, out));
}

DT_API void *dt_f_tensor_ghosted_data(const dt_tensor *t, int64_t *ghosted_shape) {
    int64_t g[DT_MAX_DIMS];
    void *p;
    if (!t) return NULL;
    p = dt_tensor_ghosted_data(t, g);
    if (p && ghosted_shape) dt__f_reverse(g, t->desc.ndim, ghosted_shape);
    return p;
}

DT_API dt_status dt_f_matmul(const dt_tensor *a, const dt_tensor *b, dt_tensor **out) {
    DT__F_PUBLIC("dt_matmul", DT__F_CALL(dt_matmul)(b, a, out));
}

static dt_status dt__f_tensor_load_npy_body(dt_mesh *m, const char *path, int ndim, const dt_placement *fplacements,
                                            dt_tensor **out) {
    dt_placement c[DT_MAX_MESH_DIMS];
    dt_tensor *t = NULL;
    dt_status st;
    if (ndim < 0 || ndim > DT_MAX_DIMS)
        return dt__fail(DT_ERR_SHAPE, "dt_tensor_load_npy: ndim = %d, must be 0..%d", ndim, DT_MAX_DIMS);
    if ((st = dt__f_placements("dt_tensor_load_npy", fplacements, m ? dt_mesh_ndim(m) : 0, ndim, c))) return st;
    if (!out) return dt__fail(DT_ERR_ARG, "dt_tensor_load_npy: out is NULL");
    if (*out && (*out)->desc.ndim != ndim)
        return dt__fail(DT_ERR_SHAPE, "dt_tensor_load_npy: *out has rank %d, the call said rank %d",
                        (*out)->desc.ndim, ndim);
    if (*out) return DT__F_CALL(dt_tensor_load_npy)(m, path, c, out); /* *out's spec is checked against the file */
    if ((st = DT__F_CALL(dt_tensor_load_npy)(m, path, c, &t))) return st;
    if (t->desc.ndim != ndim) { /* the placements were converted for another rank: refuse the tensor */
        st = dt__fail(DT_ERR_SHAPE, "dt_tensor_load_npy: %s holds a rank-%d array, the call said rank %d", path,
                      t->desc.ndim, ndim);
        dt_tensor_destroy(t);
        return st;
    }
    *out = t;
    return DT_OK;
}
DT_API dt_status dt_f_tensor_load_npy(dt_mesh *m, const char *path, int ndim, const dt_placement *fplacements,
                                      dt_tensor **out) {
    DT__F_PUBLIC("dt_tensor_load_npy", dt__f_tensor_load_npy_body(m, path, ndim, fplacements, out));
}

/* ---- the typed wraps (dtensor.f90's generic dt_tensor_from_local /
   distribute / gather over real, integer and complex arrays of rank 1-4):
   the module passes the array's own dtype (from its kind) and whether it is
   contiguous, so a desc that mislabels the array cannot go through. The
   refusal is agreed over the mesh where the forwarded call communicates
   anyway (a rank that branched into another kind must not leave the others
   waiting in the call's collective). */
static const char *dt__f_kind_name(int dtype) {
    switch (dtype) {
    case DT_F32: return "real(c_float)";
    case DT_F64: return "real(c_double)";
    case DT_I32: return "integer(c_int32_t)";
    case DT_I64: return "integer(c_int64_t)";
    case DT_C64: return "complex(c_float_complex)";
    case DT_C128: return "complex(c_double_complex)";
    default: return "an array of another kind";
    }
}

/* the module's constant for a dtype, as the desc's field is spelled in Fortran */
static const char *dt__f_dtype_const(int dtype) {
    static const char *const names[] = {"DT_F32", "DT_F64", "DT_F16", "DT_BF16", "DT_I32", "DT_I64", "DT_U8",
                                        "DT_C64", "DT_C128"};
    return dtype >= 0 && dtype < (int)(sizeof names / sizeof names[0]) ? names[dtype] : "an unknown dtype";
}

static dt_status dt__f_array_check(const char *fn, const char *what, int desc_dtype, int array_dtype, int contiguous) {
    if (desc_dtype != array_dtype)
        /* DT_F32 is 0, the value of a desc whose dtype was never set: say so, since a real(8) array with an
           unset dtype is the usual way to get here */
        return dt__fail(DT_ERR_DTYPE, "%s: desc%%dtype = %s (%d%s) but %s is %s: set desc%%dtype = %s, or pass an "
                        "array of the desc's kind", fn, dt__f_dtype_const(desc_dtype), desc_dtype,
                        desc_dtype == DT_F32 ? ", also the value of a dtype left unset" : "", what,
                        dt__f_kind_name(array_dtype), dt__f_dtype_const(array_dtype));
    if (!contiguous)
        return dt__fail(DT_ERR_ARG, "%s: %s is a non-contiguous array section (a stride other than 1, e.g. "
                        "u(1:n:2, :)): the call reads it as contiguous storage, and a compiler's copy of it would "
                        "break DT_FLAG_BORROW's aliasing; pass the whole array and describe the part with "
                        "desc%%local_ghost or desc%%local_strides", fn, what);
    return DT_OK;
}

static dt_status dt__f_tensor_from_local_typed_body(dt_mesh *m, const dt_tensor_desc *fd, void *local, int array_dtype,
                                                    int contiguous, unsigned flags, dt_tensor **out) {
    const char *fn = "dt_tensor_from_local";
    dt_status st = DT_OK;
    if (!m || !fd) return dt__f_tensor_from_local_body(m, fd, local, flags, out); /* its own refusal */
    st = dt__f_array_check(fn, "local", fd->dtype, array_dtype, contiguous);
    if (m->rank >= 0 && m->size > 1 && (st = dt__agree(m->comm, fn, st, 0))) return st;
    return st ? st : dt__f_tensor_from_local_body(m, fd, local, flags, out);
}
DT_API dt_status dt_f_tensor_from_local_typed(dt_mesh *m, const dt_tensor_desc *fd, void *local, int array_dtype,
                                              int contiguous, unsigned flags, dt_tensor **out) {
    DT__F_PUBLIC("dt_tensor_from_local",
               dt__f_tensor_from_local_typed_body(m, fd, local, array_dtype, contiguous, flags, out));
}

/* elements of a Fortran-order desc's global shape; -1 for a shape that cannot be one */
static int64_t dt__f_numel(const dt_tensor_desc *fd) {
    int64_t n = 1;
    int i;
    if (fd->ndim < 0 || fd->ndim > DT_MAX_DIMS) return -1;
    for (i = 0; i < fd->ndim; i++) {
        if (fd->shape[i] < 0) return -1;
        n *= fd->shape[i];
    }
    return n;
}

static dt_status dt__f_tensor_distribute_typed_body(dt_mesh *m, const dt_tensor_desc *fd, const void *full,
                                                    int array_dtype, int contiguous, int64_t nelem, int src_rank,
                                                    dt_tensor **out) {
    const char *fn = "dt_tensor_distribute";
    dt_status st;
    int64_t need;
    if (!m || !fd) return dt__f_tensor_distribute_body(m, fd, full, src_rank, out);
    st = dt__f_array_check(fn, "full", fd->dtype, array_dtype, contiguous);
    need = dt__f_numel(fd);
    /* only the ranks whose `full` is read need the whole array (the others may pass a size-0 one) */
    if (!st && m->rank >= 0 && (src_rank == DT_SRC_ALL || src_rank == m->rank) && need >= 0 && nelem < need)
        st = dt__fail(DT_ERR_SHAPE, "%s: full has %lld elements, the desc's global shape %lld (on the source rank %d)",
                      fn, (long long)nelem, (long long)need, m->rank);
    /* DT_SRC_ALL moves nothing (but the consistency checks' agreement): a local refusal leaves nobody waiting */
    if ((src_rank != DT_SRC_ALL || dt__checks_on()) && m->rank >= 0 && m->size > 1 &&
        (st = dt__agree(m->comm, fn, st, 0)))
        return st;
    return st ? st : dt__f_tensor_distribute_body(m, fd, full, src_rank, out);
}
DT_API dt_status dt_f_tensor_distribute_typed(dt_mesh *m, const dt_tensor_desc *fd, const void *full, int array_dtype,
                                              int contiguous, int64_t nelem, int src_rank, dt_tensor **out) {
    DT__F_PUBLIC("dt_tensor_distribute",
               dt__f_tensor_distribute_typed_body(m, fd, full, array_dtype, contiguous, nelem, src_rank, out));
}

static dt_status dt__f_tensor_gather_typed_body(const dt_tensor *t, void *full, int array_dtype, int contiguous,
                                                int64_t nelem) {
    const char *fn = "dt_tensor_gather";
    dt_status st = dt__check_tensor(fn, t);
    int64_t need = 1;
    int i;
    if (st) return st;
    if (t->desc.dtype != (dt_dtype)array_dtype)
        st = dt__fail(DT_ERR_DTYPE, "%s: the tensor is %s but full is %s (%s): gather into an array of the tensor's "
                      "kind, or dt_cast the tensor first", fn, dt__f_dtype_const(t->desc.dtype),
                      dt__f_kind_name(array_dtype), dt__f_dtype_const(array_dtype));
    else st = dt__f_array_check(fn, "full", array_dtype, array_dtype, contiguous);
    for (i = 0; i < t->desc.ndim; i++) need *= t->desc.shape[i];
    if (!st && t->mesh->rank >= 0 && nelem < need)
        st = dt__fail(DT_ERR_SHAPE, "%s: full has %lld elements, the tensor %lld", fn, (long long)nelem,
                      (long long)need);
    if (t->mesh->rank >= 0 && t->mesh->size > 1 && (st = dt__agree(t->mesh->comm, fn, st, 0))) return st;
    return st ? st : DT__F_CALL(dt_tensor_gather)(t, full);
}
DT_API dt_status dt_f_tensor_gather_typed(const dt_tensor *t, void *full, int array_dtype, int contiguous,
                                          int64_t nelem) {
    DT__F_PUBLIC("dt_tensor_gather", dt__f_tensor_gather_typed_body(t, full, array_dtype, contiguous, nelem));
}

/* ---- the rest of the API in Fortran order: a tensor dim argument is a
   Fortran dim (1..ndim, negative from the end), converted here; a shape is
   reversed. Calls without either are bound directly by the module. */

/* Fortran dim fd of a rank-ndim tensor as a C dim, or DT_ERR_ARG naming it */
static dt_status dt__f_dim_arg(const char *fn, const char *what, int fd, int ndim, int *cd) {
    *cd = dt__f_dim(fd, ndim);
    if (*cd < 0)
        return dt__fail(DT_ERR_ARG, "%s: %s = %d: a Fortran dim of a rank-%d tensor is 1..%d (or -%d..-1 from the end)",
                        fn, what, fd, ndim, ndim, ndim);
    return DT_OK;
}

static dt_status dt__f_transpose_body(const dt_tensor *x, int fd0, int fd1, dt_tensor **out) {
    int d0 = 0, d1 = 0;
    dt_status st = dt__check_tensor("dt_transpose", x);
    if (!st) st = dt__f_dim_arg("dt_transpose", "d0", fd0, x->desc.ndim, &d0);
    if (!st) st = dt__f_dim_arg("dt_transpose", "d1", fd1, x->desc.ndim, &d1);
    return st ? st : DT__F_CALL(dt_transpose)(x, d0, d1, out);
}
DT_API dt_status dt_f_transpose(const dt_tensor *x, int d0, int d1, dt_tensor **out) {
    DT__F_PUBLIC("dt_transpose", dt__f_transpose_body(x, d0, d1, out));
}

/* result Fortran dim i is x's Fortran dim perm[i]: C dim n-1-i is C dim n - perm[i] */
static dt_status dt__f_permute_body(const dt_tensor *x, const int *fperm, dt_tensor **out) {
    int perm[DT_MAX_DIMS], i, n;
    dt_status st = dt__check_tensor("dt_permute", x);
    if (st) return st;
    if (!fperm) return dt__fail(DT_ERR_ARG, "dt_permute: perm is NULL");
    n = x->desc.ndim;
    for (i = 0; i < n && !st; i++) {
        char what[24];
        snprintf(what, sizeof what, "perm(%d)", i + 1);
        st = dt__f_dim_arg("dt_permute", what, fperm[i], n, &perm[n - 1 - i]);
    }
    return st ? st : DT__F_CALL(dt_permute)(x, perm, out);
}
DT_API dt_status dt_f_permute(const dt_tensor *x, const int *perm, dt_tensor **out) {
    DT__F_PUBLIC("dt_permute", dt__f_permute_body(x, perm, out));
}

static dt_status dt__f_reshape_body(const dt_tensor *x, int ndim, const int64_t *fshape, dt_tensor **out) {
    int64_t shape[DT_MAX_DIMS];
    if (ndim < 0 || ndim > DT_MAX_DIMS)
        return dt__fail(DT_ERR_SHAPE, "dt_reshape: ndim = %d, must be 0..%d (DT_MAX_DIMS)", ndim, DT_MAX_DIMS);
    if (!fshape && ndim) return dt__fail(DT_ERR_ARG, "dt_reshape: shape is NULL");
    if (ndim) dt__f_reverse(fshape, ndim, shape);
    return DT__F_CALL(dt_reshape)(x, ndim, shape, out);
}
DT_API dt_status dt_f_reshape(const dt_tensor *x, int ndim, const int64_t *shape, dt_tensor **out) {
    DT__F_PUBLIC("dt_reshape", dt__f_reshape_body(x, ndim, shape, out));
}

static dt_status dt__f_squeeze_body(const dt_tensor *x, int fd, dt_tensor **out) {
    int d = 0;
    dt_status st = dt__check_tensor("dt_squeeze", x);
    if (!st) st = dt__f_dim_arg("dt_squeeze", "dim", fd, x->desc.ndim, &d);
    return st ? st : DT__F_CALL(dt_squeeze)(x, d, out);
}
DT_API dt_status dt_f_squeeze(const dt_tensor *x, int dim, dt_tensor **out) {
    DT__F_PUBLIC("dt_squeeze", dt__f_squeeze_body(x, dim, out));
}

/* dim: the new dim's place in the result (1..ndim+1) */
static dt_status dt__f_unsqueeze_body(const dt_tensor *x, int fd, dt_tensor **out) {
    int d = 0;
    dt_status st = dt__check_tensor("dt_unsqueeze", x);
    if (!st && x->desc.ndim >= DT_MAX_DIMS) return DT__F_CALL(dt_unsqueeze)(x, 0, out); /* its own refusal */
    if (!st) st = dt__f_dim_arg("dt_unsqueeze", "dim (of the result)", fd, x->desc.ndim + 1, &d);
    return st ? st : DT__F_CALL(dt_unsqueeze)(x, d, out);
}
DT_API dt_status dt_f_unsqueeze(const dt_tensor *x, int dim, dt_tensor **out) {
    DT__F_PUBLIC("dt_unsqueeze", dt__f_unsqueeze_body(x, dim, out));
}

/* start: the first index kept, 1-based (Fortran's x(start:start+length-1)) */
static dt_status dt__f_narrow_body(const dt_tensor *x, int fd, int64_t start, int64_t length, dt_tensor **out) {
    int d = 0;
    dt_status st = dt__check_tensor("dt_narrow", x);
    if (!st) st = dt__f_dim_arg("dt_narrow", "dim", fd, x->desc.ndim, &d);
    if (!st && (start < 1 || start - 1 > x->desc.shape[d]))
        st = dt__fail(DT_ERR_ARG, "dt_narrow: start = %lld along dim %d of extent %lld: the first index kept, 1-based "
                      "(1..%lld)", (long long)start, fd, (long long)x->desc.shape[d], (long long)x->desc.shape[d] + 1);
    return st ? st : DT__F_CALL(dt_narrow)(x, d, start - 1, length, out);
}
DT_API dt_status dt_f_narrow(const dt_tensor *x, int dim, int64_t start, int64_t length, dt_tensor **out) {
    DT__F_PUBLIC("dt_narrow", dt__f_narrow_body(x, dim, start, length, out));
}

/* cat along an existing Fortran dim (stack: extra = 1, the new dim's place in the result) */
static dt_status dt__f_join(const char *fn, int extra, int n, const dt_tensor *const *xs, int fd, dt_tensor **out) {
    int d = 0;
    dt_status st;
    if (n < 1 || !xs || !xs[0]) /* the forwarded call's refusal */
        return extra ? DT__F_CALL(dt_stack)(n, xs, 0, out) : DT__F_CALL(dt_cat)(n, xs, 0, out);
    if ((st = dt__check_tensor(fn, xs[0]))) return st;
    if ((st = dt__f_dim_arg(fn, extra ? "dim (of the result)" : "dim", fd, xs[0]->desc.ndim + extra, &d))) return st;
    return extra ? DT__F_CALL(dt_stack)(n, xs, d, out) : DT__F_CALL(dt_cat)(n, xs, d, out);
}
DT_API dt_status dt_f_cat(int n, const dt_tensor *const *xs, int dim, dt_tensor **out) {
    DT__F_PUBLIC("dt_cat", dt__f_join("dt_cat", 0, n, xs, dim, out));
}
DT_API dt_status dt_f_stack(int n, const dt_tensor *const *xs, int dim, dt_tensor **out) {
    DT__F_PUBLIC("dt_stack", dt__f_join("dt_stack", 1, n, xs, dim, out));
}

/* nouts: the handles outs has room for (a Fortran array's size) */
static dt_status dt__f_split_body(const dt_tensor *x, int fd, int n, const int64_t *sizes, dt_tensor **outs,
                                  int nouts) {
    int d = 0;
    dt_status st = dt__check_tensor("dt_split", x);
    if (!st) st = dt__f_dim_arg("dt_split", "dim", fd, x->desc.ndim, &d);
    if (!st && nouts < n)
        st = dt__fail(DT_ERR_ARG, "dt_split: %d sizes but outs has room for %d handles", n, nouts);
    return st ? st : DT__F_CALL(dt_split)(x, d, n, sizes, outs);
}
DT_API dt_status dt_f_split(const dt_tensor *x, int dim, int n, const int64_t *sizes, dt_tensor **outs, int nouts) {
    DT__F_PUBLIC("dt_split", dt__f_split_body(x, dim, n, sizes, outs, nouts));
}

/* the tensor's spec as a Fortran-order desc (shape reversed, Shard dims
   Fortran dims); the storage fields (local_shape, ...) are left empty */
static dt_status dt__f_tensor_get_desc_body(const dt_tensor *t, dt_tensor_desc *fd) {
    int i, n;
    dt_status st = dt__check_tensor("dt_tensor_get_desc", t);
    if (st) return st;
    if (!fd) return dt__fail(DT_ERR_ARG, "dt_tensor_get_desc: desc is NULL");
    n = t->desc.ndim;
    memset(fd, 0, sizeof *fd);
    fd->dtype = t->desc.dtype;
    fd->ndim = n;
    fd->device = t->desc.device;
    dt__f_reverse(t->desc.shape, n, fd->shape);
    for (i = 0; i < DT_MAX_MESH_DIMS; i++) {
        fd->placements[i] = t->desc.placements[i];
        if (fd->placements[i].kind == DT_SHARD) fd->placements[i].dim = (int8_t)(n - t->desc.placements[i].dim);
    }
    return DT_OK;
}
DT_API dt_status dt_f_tensor_get_desc(const dt_tensor *t, dt_tensor_desc *fd) {
    DT__F_PUBLIC("dt_tensor_get_desc", dt__f_tensor_get_desc_body(t, fd));
}

typedef dt_status (*dt__f_dim_fn)(const dt_tensor *, int, dt_tensor **);
static dt_status dt__f_along(const char *fn, dt__f_dim_fn f, const dt_tensor *x, int fd, dt_tensor **out) {
    int d = 0;
    dt_status st = dt__check_tensor(fn, x);
    if (!st) st = dt__f_dim_arg(fn, "dim", fd, x->desc.ndim, &d);
    return st ? st : f(x, d, out);
}
DT_API dt_status dt_f_softmax(const dt_tensor *x, int dim, dt_tensor **out) {
    DT__F_PUBLIC("dt_softmax", dt__f_along("dt_softmax", DT__F_CALL(dt_softmax), x, dim, out));
}
DT_API dt_status dt_f_log_softmax(const dt_tensor *x, int dim, dt_tensor **out) {
    DT__F_PUBLIC("dt_log_softmax", dt__f_along("dt_log_softmax", DT__F_CALL(dt_log_softmax), x, dim, out));
}

DT_API dt_status dt_f_norm2(const dt_tensor *x, int ndims, const int *fdims, int keepdim, dt_tensor **out) {
    DT__F_PUBLIC("dt_norm2", dt__f_reduce("dt_norm2", DT__F_CALL(dt_norm2), x, ndims, fdims, keepdim, out));
}
DT_API dt_status dt_f_argmax(const dt_tensor *x, int ndims, const int *fdims, int keepdim, dt_tensor **out) {
    DT__F_PUBLIC("dt_argmax", dt__f_reduce("dt_argmax", DT__F_CALL(dt_argmax), x, ndims, fdims, keepdim, out));
}

/* Fortran's c = matmul(a, b) holds c^T = b^T a^T in C order: the operands swap */
DT_API dt_status dt_f_mm(const dt_tensor *a, const dt_tensor *b, dt_tensor **out) {
    DT__F_PUBLIC("dt_mm", DT__F_CALL(dt_mm)(b, a, out));
}
DT_API dt_status dt_f_bmm(const dt_tensor *a, const dt_tensor *b, dt_tensor **out) {
    DT__F_PUBLIC("dt_bmm", DT__F_CALL(dt_bmm)(b, a, out));
}
DT_API dt_status dt_f_addmm(const dt_tensor *c, const dt_tensor *a, const dt_tensor *b, double beta, double alpha,
                            dt_tensor **out) {
    DT__F_PUBLIC("dt_addmm", DT__F_CALL(dt_addmm)(c, b, a, beta, alpha, out));
}

static dt_status dt__f_tensor_redistribute_reduce_body(const dt_tensor *t, const dt_placement *fplacements, dt_reduce op,
                                                       dt_tensor *out) {
    dt_placement c[DT_MAX_MESH_DIMS];
    const char *fn = "dt_tensor_redistribute_reduce";
    dt_status st = dt__check_tensor(fn, t);
    if (!st) st = dt__f_placements(fn, fplacements, dt_mesh_ndim(t->mesh), t->desc.ndim, c);
    return st ? st : DT__F_CALL(dt_tensor_redistribute_reduce)(t, c, op, out);
}
DT_API dt_status dt_f_tensor_redistribute_reduce(const dt_tensor *t, const dt_placement *fplacements, dt_reduce op,
                                                 dt_tensor *out) {
    DT__F_PUBLIC("dt_tensor_redistribute_reduce", dt__f_tensor_redistribute_reduce_body(t, fplacements, op, out));
}

static dt_status dt__f_tensor_rand_body(const char *fn, int normal, dt_mesh *m, const dt_tensor_desc *fd,
                                        dt_tensor **out) {
    dt__fdesc c;
    dt_status st = dt__f_desc(fn, fd, &c);
    if (st) return st;
    return normal ? DT__F_CALL(dt_tensor_randn)(m, &c.d, out) : DT__F_CALL(dt_tensor_rand)(m, &c.d, out);
}
DT_API dt_status dt_f_tensor_rand(dt_mesh *m, const dt_tensor_desc *fd, dt_tensor **out) {
    DT__F_PUBLIC("dt_tensor_rand", dt__f_tensor_rand_body("dt_tensor_rand", 0, m, fd, out));
}
DT_API dt_status dt_f_tensor_randn(dt_mesh *m, const dt_tensor_desc *fd, dt_tensor **out) {
    DT__F_PUBLIC("dt_tensor_randn", dt__f_tensor_rand_body("dt_tensor_randn", 1, m, fd, out));
}

DT_API int dt_f_tensor_local_strides(const dt_tensor *t, int64_t *strides) {
    int64_t s[DT_MAX_DIMS];
    int n;
    if (!t) return 0;
    n = dt_tensor_local_strides(t, s);
    if (strides) dt__f_reverse(s, n, strides);
    return n;
}

static dt_status dt__f_tensor_local_indices_body(const dt_tensor *t, int fd, int64_t *global_index) {
    int d = 0;
    dt_status st = dt__check_tensor("dt_tensor_local_indices", t);
    if (!st) st = dt__f_dim_arg("dt_tensor_local_indices", "dim", fd, t->desc.ndim, &d);
    return st ? st : DT__F_CALL(dt_tensor_local_indices)(t, d, global_index);
}
DT_API dt_status dt_f_tensor_local_indices(const dt_tensor *t, int dim, int64_t *global_index) {
    DT__F_PUBLIC("dt_tensor_local_indices", dt__f_tensor_local_indices_body(t, dim, global_index));
}

static dt_status dt__f_layout_indices_body(const dt_mesh *m, const dt_tensor_desc *fd, const int *coord, int fdim,
                                           int64_t *global_index) {
    dt__fdesc c;
    int d = 0;
    dt_status st = dt__f_desc("dt_layout_indices", fd, &c);
    if (!st) st = dt__f_dim_arg("dt_layout_indices", "dim", fdim, c.d.ndim, &d);
    return st ? st : DT__F_CALL(dt_layout_indices)(m, &c.d, coord, d, global_index);
}
DT_API dt_status dt_f_layout_indices(const dt_mesh *m, const dt_tensor_desc *fd, const int *coord, int dim,
                                     int64_t *global_index) {
    DT__F_PUBLIC("dt_layout_indices", dt__f_layout_indices_body(m, fd, coord, dim, global_index));
}

/* the stencil callback sees its block in Fortran order: the per-dim arrays
   reversed, global_shape pointing at a reversed copy */
typedef struct dt__f_stencil_ctx {
    dt_stencil_fn fn;
    void *user;
    int64_t global_shape[DT_MAX_DIMS];
} dt__f_stencil_ctx;

static void dt__f_stencil_call(const dt_stencil_block *b, void *user) {
    const dt__f_stencil_ctx *c = (const dt__f_stencil_ctx *)user;
    dt_stencil_block f = *b;
    int n = b->ndim;
    dt__f_reverse(b->in_stride, n, f.in_stride);
    dt__f_reverse(b->out_stride, n, f.out_stride);
    dt__f_reverse(b->width, n, f.width);
    dt__f_reverse(b->lo, n, f.lo);
    dt__f_reverse(b->ext, n, f.ext);
    dt__f_reverse(b->local_shape, n, f.local_shape);
    dt__f_reverse(b->offset, n, f.offset);
    f.global_shape = c->global_shape;
    c->fn(&f, c->user);
}

static dt_status dt__f_stencil_apply_body(dt_tensor *x, dt_stencil_fn fn, void *user, dt_tensor **out) {
    dt__f_stencil_ctx c;
    dt_status st = dt__check_tensor("dt_stencil_apply", x);
    if (st || !fn) return st ? st : DT__F_CALL(dt_stencil_apply)(x, fn, user, out);
    memset(&c, 0, sizeof c);
    c.fn = fn;
    c.user = user;
    dt__f_reverse(x->desc.shape, x->desc.ndim, c.global_shape);
    return DT__F_CALL(dt_stencil_apply)(x, dt__f_stencil_call, &c, out);
}
DT_API dt_status dt_f_stencil_apply(dt_tensor *x, dt_stencil_fn fn, void *user, dt_tensor **out) {
    DT__F_PUBLIC("dt_stencil_apply", dt__f_stencil_apply_body(x, fn, user, out));
}

/* padding and dilation per spatial dim in Fortran order (x(S..., C_in, N)):
   Fortran spatial dim i is C spatial dim nsp - 1 - i */
static dt_status dt__f_conv_body(int nsp, const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias,
                                 const dt_conv_desc *fdesc, dt_tensor **out) {
    dt_conv_desc c;
    int i;
    if (fdesc) {
        c = *fdesc;
        for (i = 0; i < nsp; i++) {
            c.padding[i] = fdesc->padding[nsp - 1 - i];
            c.dilation[i] = fdesc->dilation[nsp - 1 - i];
        }
    }
    if (nsp == 1) return DT__F_CALL(dt_conv1d)(x, w, bias, fdesc ? &c : NULL, out);
    if (nsp == 2) return DT__F_CALL(dt_conv2d)(x, w, bias, fdesc ? &c : NULL, out);
    return DT__F_CALL(dt_conv3d)(x, w, bias, fdesc ? &c : NULL, out);
}
DT_API dt_status dt_f_conv1d(const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias, const dt_conv_desc *desc,
                             dt_tensor **out) {
    DT__F_PUBLIC("dt_conv1d", dt__f_conv_body(1, x, w, bias, desc, out));
}
DT_API dt_status dt_f_conv2d(const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias, const dt_conv_desc *desc,
                             dt_tensor **out) {
    DT__F_PUBLIC("dt_conv2d", dt__f_conv_body(2, x, w, bias, desc, out));
}
DT_API dt_status dt_f_conv3d(const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias, const dt_conv_desc *desc,
                             dt_tensor **out) {
    DT__F_PUBLIC("dt_conv3d", dt__f_conv_body(3, x, w, bias, desc, out));
}

/* ScaLAPACK's array A(M_, N_) is Fortran's a(M_, N_) itself (the C side's
   transpose T is the Fortran array's reversed view): the desc comes back
   with shape {M_, N_}, Fortran Shard dims, local_shape {LOCr, LOCc} and
   local_strides {1, LLD_}, pointing at the caller's arrays */
static dt_status dt__f_tensor_desc_from_scalapack_body(const int desc[9], const dt_scalapack_grid *grid, dt_dtype dtype,
                                                       dt_tensor_desc *fd, int64_t *local_shape,
                                                       int64_t *local_strides) {
    dt_tensor_desc c;
    int64_t ls[2] = {0, 0}, str[2] = {0, 0};
    int i;
    dt_status st;
    if (!fd) return dt__fail(DT_ERR_ARG, "dt_tensor_desc_from_scalapack: out is NULL");
    if ((st = DT__F_CALL(dt_tensor_desc_from_scalapack)(desc, grid, dtype, &c, ls, str))) return st;
    *fd = c;
    dt__f_reverse(c.shape, 2, fd->shape);
    for (i = 0; i < DT_MAX_MESH_DIMS; i++)
        if (c.placements[i].kind == DT_SHARD) fd->placements[i].dim = (int8_t)(2 - c.placements[i].dim);
    fd->local_shape = NULL;
    fd->local_strides = NULL;
    if (local_shape) {
        dt__f_reverse(ls, 2, local_shape);
        fd->local_shape = local_shape;
    }
    if (local_strides) {
        dt__f_reverse(str, 2, local_strides);
        if (c.local_strides) fd->local_strides = local_strides;
    }
    return DT_OK;
}
DT_API dt_status dt_f_tensor_desc_from_scalapack(const int desc[9], const dt_scalapack_grid *grid, dt_dtype dtype,
                                                 dt_tensor_desc *fd, int64_t *local_shape, int64_t *local_strides) {
    DT__F_PUBLIC("dt_tensor_desc_from_scalapack",
               dt__f_tensor_desc_from_scalapack_body(desc, grid, dtype, fd, local_shape, local_strides));
}

/* The calls with no dim or shape argument to convert: the same C call,
   through DT__F_PUBLIC so that its refusals (shapes, placements, dims)
   speak Fortran like the rest of the module's */
#define DT__F_FWD(name, params, args) \
    DT_API dt_status dt_f_##name params { DT__F_PUBLIC("dt_" #name, DT__F_CALL(dt_##name) args); }
DT__F_FWD(mesh_create, (dt_comm *comm, const dt_mesh_desc *desc, dt_mesh **out), (comm, desc, out))
DT__F_FWD(neg, (const dt_tensor *x, dt_tensor **out), (x, out))
DT__F_FWD(abs, (const dt_tensor *x, dt_tensor **out), (x, out))
DT__F_FWD(exp, (const dt_tensor *x, dt_tensor **out), (x, out))
DT__F_FWD(log, (const dt_tensor *x, dt_tensor **out), (x, out))
DT__F_FWD(sqrt, (const dt_tensor *x, dt_tensor **out), (x, out))
DT__F_FWD(rsqrt, (const dt_tensor *x, dt_tensor **out), (x, out))
DT__F_FWD(sin, (const dt_tensor *x, dt_tensor **out), (x, out))
DT__F_FWD(cos, (const dt_tensor *x, dt_tensor **out), (x, out))
DT__F_FWD(tanh, (const dt_tensor *x, dt_tensor **out), (x, out))
DT__F_FWD(sigmoid, (const dt_tensor *x, dt_tensor **out), (x, out))
DT__F_FWD(relu, (const dt_tensor *x, dt_tensor **out), (x, out))
DT__F_FWD(gelu, (const dt_tensor *x, dt_tensor **out), (x, out))
DT__F_FWD(silu, (const dt_tensor *x, dt_tensor **out), (x, out))
DT__F_FWD(copy, (const dt_tensor *x, dt_tensor **out), (x, out))
DT__F_FWD(cast, (const dt_tensor *x, dt_dtype to, dt_tensor **out), (x, to, out))
DT__F_FWD(scale, (const dt_tensor *x, double a, dt_tensor **out), (x, a, out))
DT__F_FWD(shift, (const dt_tensor *x, double a, dt_tensor **out), (x, a, out))
DT__F_FWD(pow, (const dt_tensor *x, double a, dt_tensor **out), (x, a, out))
DT__F_FWD(fill, (const dt_tensor *x, double a, dt_tensor **out), (x, a, out))
DT__F_FWD(add, (const dt_tensor *a, const dt_tensor *b, dt_tensor **out), (a, b, out))
DT__F_FWD(sub, (const dt_tensor *a, const dt_tensor *b, dt_tensor **out), (a, b, out))
DT__F_FWD(mul, (const dt_tensor *a, const dt_tensor *b, dt_tensor **out), (a, b, out))
DT__F_FWD(div, (const dt_tensor *a, const dt_tensor *b, dt_tensor **out), (a, b, out))
DT__F_FWD(maximum, (const dt_tensor *a, const dt_tensor *b, dt_tensor **out), (a, b, out))
DT__F_FWD(minimum, (const dt_tensor *a, const dt_tensor *b, dt_tensor **out), (a, b, out))
DT__F_FWD(dot, (const dt_tensor *a, const dt_tensor *b, dt_tensor **out), (a, b, out))
DT__F_FWD(axpy, (double a, const dt_tensor *x, dt_tensor *y), (a, x, y))
DT__F_FWD(linear, (const dt_tensor *x, const dt_tensor *w, const dt_tensor *bias, dt_tensor **out), (x, w, bias, out))
DT__F_FWD(layer_norm, (const dt_tensor *x, const dt_tensor *w, const dt_tensor *b, double eps, dt_tensor **out),
          (x, w, b, eps, out))
DT__F_FWD(rms_norm, (const dt_tensor *x, const dt_tensor *w, double eps, dt_tensor **out), (x, w, eps, out))
DT__F_FWD(embedding, (const dt_tensor *table, const dt_tensor *idx, dt_tensor **out), (table, idx, out))
DT__F_FWD(cross_entropy, (const dt_tensor *logits, const dt_tensor *target, dt_tensor **out), (logits, target, out))
DT__F_FWD(dropout, (const dt_tensor *x, double p, dt_tensor **out, dt_tensor **mask), (x, p, out, mask))
DT__F_FWD(halo_exchange, (dt_tensor *t), (t))
DT__F_FWD(halo_exchange_begin, (dt_tensor *t), (t))
DT__F_FWD(halo_exchange_end, (dt_tensor *t), (t))
DT__F_FWD(tensor_gather, (const dt_tensor *t, void *full), (t, full))
DT__F_FWD(tensor_save_npy, (const dt_tensor *t, const char *path), (t, path))
DT__F_FWD(tensor_zero_local, (dt_tensor *t), (t))
DT__F_FWD(uniform_, (dt_tensor *t, double lo, double hi), (t, lo, hi))
DT__F_FWD(normal_, (dt_tensor *t, double mean, double std), (t, mean, std))
DT__F_FWD(bernoulli_, (dt_tensor *t, double p), (t, p))
DT__F_FWD(randint_, (dt_tensor *t, int64_t lo, int64_t hi), (t, lo, hi))
DT__F_FWD(tensor_redistribute_end, (dt_tensor *out), (out))
DT__F_FWD(tensor_redistribute_test, (dt_tensor *out, int *done), (out, done))
DT__F_FWD(tensor_scalapack_desc, (const dt_tensor *t, int ictxt, int desc[9], dt_scalapack_grid *grid),
          (t, ictxt, desc, grid))
#undef DT__F_FWD

DT_API int64_t dt_f_strcpy(const char *s, char *buf, int64_t cap) {
    size_t n = s ? strlen(s) : 0;
    if (buf && cap > 0) memcpy(buf, s ? s : "", (size_t)cap < n ? (size_t)cap : n);
    return (int64_t)n;
}

#ifdef __cplusplus
}
#endif
#endif /* DTENSOR_IMPLEMENTATION */
