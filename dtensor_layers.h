/* dtensor_layers.h -- tensor-parallel layers for dtensor.h

   Megatron-LM style tensor parallelism for C (PyTorch's ColwiseParallel,
   RowwiseParallel, SequenceParallel): a linear-layer object dt_tp_linear
   (forward, backward, SGD) and the MLP block of a transformer, dt_tp_mlp,
   made of dtensor.h's public ops. BSD-3-Clause, see LICENSE.

   HOW TO USE
   ==========
   In exactly one .c file of your program:

       #define DTENSOR_IMPLEMENTATION
       #include "dtensor_layers.h"       (includes dtensor.h)

   which compiles dtensor.h's implementation and the layers' into that
   file; include "dtensor_layers.h" (or "dtensor.h" where no layer is
   used) without the define everywhere else. Build, link and run as for
   dtensor.h; nothing more is needed. dtensor.h's OPTIONS apply here too
   (DT_MALLOC / DT_FREE, DTENSOR_STATIC, DT_API, DT_MAX_DIMS, ...).

   The implementation uses dtensor.h's public API alone (its ops, accessors,
   dt_set_last_error for the messages, dt_mesh_agree for the consistency
   checks, dt_call_begin/dt_call_end around each public call so that the
   error handler runs once, after the agreement; tests/lint/layering.py checks that it names no private dt__
   name), so it also compiles in a file where dtensor.h's implementation
   is not:
   DTENSOR_IMPLEMENTATION_LINKED   as in dtensor.h: DTENSOR_IMPLEMENTATION
                           is ignored in this file, the implementations
                           come from an object compiled once elsewhere:
                           either from this header (cc -x c
                           -DDTENSOR_IMPLEMENTATION -c dtensor_layers.h:
                           dtensor.h's and the layers'), or the layers alone
                           next to an object of dtensor.h:
   DTENSOR_LAYERS_IMPLEMENTATION   compile the layers' implementation into
                           this file and nothing of dtensor.h's, whatever
                           else is defined (cc -x c
                           -DDTENSOR_LAYERS_IMPLEMENTATION -c
                           dtensor_layers.h). The Makefile's programs link
                           dtensor.o and such a dtensor_layers.o.

   MAP
   ===
   Public part (always compiled):
     >>layers-api    the dt_tp_* types and functions, documented (every call
                     collective over the layer's mesh, except the accessors)
   Implementation (DTENSOR_IMPLEMENTATION or DTENSOR_LAYERS_IMPLEMENTATION):
     >>layers        the helpers (placement equality, spec hashes,
                     argument checks), dt_tp_linear, the MLP block, the
                     dt_f_tp_* entry points of dtensor.f90 (Fortran order)
*/
#ifndef DTENSOR_LAYERS_H
#define DTENSOR_LAYERS_H

#include "dtensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>layers-api ------------------------------------------------------------
   Megatron-LM style tensor parallelism for C: PyTorch's ColwiseParallel,
   RowwiseParallel and SequenceParallel as a linear-layer object
   (y = x W^T + b, forward, backward, SGD) and a two-layer MLP block
   (colwise -> activation -> dropout -> rowwise), made of dtensor.h's ops
   (dt_linear, dt_matmul, dt_transpose, dt_reshape, dt_sum,
   dt_tensor_redistribute, dt_dropout, dt_axpy); nothing here has a
   communication path of its own, so DTENSOR_LOG=ops/plan and dt_explain
   show every collective it runs.

   The weight W [out, in], the bias b [out] and their gradients are tensors
   on the layer's mesh. On the tensor-parallel mesh dim ("tp", named in the
   desc) they are split as below; on every other mesh dim they are
   Replicate. x is [..., in] with at least one batch dim:

     style          W on tp   b on tp   x on tp             y on tp
     DT_TP_COLWISE  Shard(0)  Shard(0)  Replicate           Shard(-1)
     DT_TP_ROWWISE  Shard(1)  Replicate Shard(-1)           Partial(SUM) -> Replicate
                                                            (an allreduce)
     sequence_parallel (x's sequence dim `seq_dim`, "seq"):
     DT_TP_COLWISE                      Shard(seq) -> allgather -> Replicate
     DT_TP_ROWWISE                                          Partial(SUM) -> Shard(seq)
                                                            (a reduce-scatter)

   so colwise -> pointwise -> rowwise costs one allreduce forward and one
   backward (for dx), or with sequence parallelism one allgather and one
   reduce-scatter each way; the pointwise ops between them run on the
   local shards. A tp placement of x other than the one in the table (not
   Partial) is accepted and redistributed first; dx always gets x's spec.

   Data parallelism is implicit: on every other mesh dim x may be
   Replicate or Shard(d) for a batch dim d (e.g. batch Shard(0) on "dp" of
   a [dp, tp] mesh). y keeps x's placements there, and the backward sums
   the weight and bias gradients over the mesh dims x is sharded on
   (Partial(SUM) -> Replicate: one allreduce per gradient, as DDP does).
   The gradients are those of the global computation, so with a loss that
   is a mean over the global batch they need no 1/dp scaling.

   Forward keeps nothing: backward takes the same x again (with sequence
   parallelism it all-gathers x again instead of keeping the gathered
   copy, as Megatron-LM does: one allgather traded for memory). The MLP
   block keeps its hidden activations and dropout mask from its last
   forward (see dt_tp_mlp_forward).

   Weights start as PyTorch's nn.Linear: W and b uniform in
   [-1/sqrt(in), 1/sqrt(in)), drawn with the mesh's sharding-invariant RNG
   (dt_uniform_), so the same seed and the same sequence of calls give the
   same global weights on every mesh and rank count, equal to a one-rank
   run. Dtypes: F32 and F64, host tensors.

   Every call is collective over the layer's mesh. Arguments are checked
   before anything moves: NULLs (DT_ERR_ARG), x / dy on another mesh
   (DT_ERR_MESH), another dtype (DT_ERR_DTYPE), a feature size or shape
   that does not fit (DT_ERR_SHAPE), a Partial x / dy or a feature dim
   sharded on a non-tp mesh dim (DT_ERR_PLACEMENT), a non-NULL *y / *dx
   without the result's spec; on such errors nothing is changed and
   dt_last_error() names the call and the values. */

typedef enum dt_tp_style {
    DT_TP_COLWISE = 0,   /* W Shard(0) on tp: the output features are split   */
    DT_TP_ROWWISE = 1    /* W Shard(1) on tp: the input features are split    */
} dt_tp_style;

typedef enum dt_tp_init {
    DT_TP_INIT_UNIFORM = 0, /* W, b uniform in [-1/sqrt(in), 1/sqrt(in)) (default; draws
                               out*in (+ out) numbers from the mesh's RNG, W first) */
    DT_TP_INIT_ZEROS = 1    /* W, b zero; the RNG is not touched (fill them yourself) */
} dt_tp_init;

typedef struct dt_tp_linear dt_tp_linear;

typedef struct dt_tp_linear_desc {
    dt_tp_style style;      /* DT_TP_COLWISE (0, default) or DT_TP_ROWWISE          */
    int64_t in_features;    /* x's last dim (required, > 0)                          */
    int64_t out_features;   /* y's last dim (required, > 0)                          */
    dt_dtype dtype;         /* DT_F32 (0, default) or DT_F64                         */
    int no_bias;            /* 1: no bias (default 0: a bias, as nn.Linear)          */
    const char *tp_dim;     /* the name of the tensor-parallel mesh dim; NULL or "":
                               the last mesh dim. On a 1-D mesh everything is tp    */
    int sequence_parallel;  /* 1: colwise takes x Shard(seq_dim) on tp (and returns
                               dx so), rowwise returns y Shard(seq_dim) on tp (and
                               takes dy so); 0: Replicate there                      */
    int seq_dim;            /* x's sequence dim, counted as dt_shard counts (negative
                               from the end); 0 means the default -2, the dim before
                               the features ([batch, seq, features] -> seq). Name
                               dim 0 by its negative form (-3 for [seq, batch, f]) */
    int accumulate_grads;   /* 1: backward adds to the gradients (PyTorch's .grad
                               semantics; clear them with dt_tp_linear_zero_grad);
                               0 (default): backward overwrites them               */
    dt_tp_init init;        /* DT_TP_INIT_UNIFORM (0, default) or DT_TP_INIT_ZEROS   */
    int device;             /* where W, b and their gradients live: DT_HOST (0,
                               default) or DT_CUDA (dtensor_cuda.h); x, dy and the
                               outputs must be on it too (DT_ERR_DEVICE). The MLP
                               below is host-only (its activation's backward is a
                               host loop)                                           */
} dt_tp_linear_desc;

/* collective over m: makes W, b and zeroed gradients, initialised per
   desc->init (which draws from m's RNG: call it in the same order on every
   rank). Ranks outside m get a layer with empty tensors. */
DT_API dt_status dt_tp_linear_create(dt_mesh *m, const dt_tp_linear_desc *desc, dt_tp_linear **out);  /* collective */
DT_API void dt_tp_linear_destroy(dt_tp_linear *l);  /* local */
/* the layer's tensors (owned by it; fill or read them, keep their spec):
   W [out, in], b [out] (NULL with no_bias), and their gradients */
DT_API dt_tensor *dt_tp_linear_weight(const dt_tp_linear *l);  /* local */
DT_API dt_tensor *dt_tp_linear_bias(const dt_tp_linear *l);  /* local */
DT_API dt_tensor *dt_tp_linear_grad_weight(const dt_tp_linear *l);  /* local */
DT_API dt_tensor *dt_tp_linear_grad_bias(const dt_tp_linear *l);  /* local */
/* the placement on tp the layer expects x in, and gives y in (the table
   above; a Shard dim as given in the desc, e.g. -1 or -2) */
DT_API dt_placement dt_tp_linear_input_placement(const dt_tp_linear *l);  /* local */
DT_API dt_placement dt_tp_linear_output_placement(const dt_tp_linear *l);  /* local */
/* y = x W^T + b. x [..., in]; y [..., out] with x's placements on the other
   mesh dims and dt_tp_linear_output_placement on tp. *y as for ops: NULL
   makes a new tensor, non-NULL must have the result's spec (reused). */
DT_API dt_status dt_tp_linear_forward(dt_tp_linear *l, const dt_tensor *x, dt_tensor **y);  /* collective */
/* from dy = dL/dy (y's shape, any non-Partial placements; brought to the
   layout the layer needs) and the forward's x: dW = dy^T x and db = the
   sum of dy over the batch dims into the layer's gradients (summed over
   the mesh dims x is sharded on, see above), and dx = dy W with x's spec
   into *dx (dx NULL: not wanted, e.g. for the first layer: saves a matmul
   and its collective). */
DT_API dt_status dt_tp_linear_backward(dt_tp_linear *l, const dt_tensor *x, const dt_tensor *dy, dt_tensor **dx);  /* collective */
DT_API dt_status dt_tp_linear_zero_grad(dt_tp_linear *l);  /* local */
/* plain SGD: W -= lr dW, b -= lr db. Moves no data (the gradients have the
   weights' spec), but runs dt_axpy, an op: collective like every op */
DT_API dt_status dt_tp_linear_sgd(dt_tp_linear *l, double lr);  /* collective (dt_axpy; moves no data) */

/* The MLP block of a transformer: y = fc2(dropout(act(fc1(x)))), fc1 colwise
   [hidden, in], fc2 rowwise [out, hidden]: the hidden activations stay
   Shard(-1) on tp, so forward is one allreduce of y (sequence parallel: an
   allgather of x and a reduce-scatter of y) and backward one of dx (the
   weight gradients add one allreduce each over the data-parallel dims). */
typedef enum dt_tp_activation {
    DT_TP_RELU = 0,      /* max(x, 0) (default)                                 */
    DT_TP_GELU = 1       /* exact: x/2 (1 + erf(x/sqrt 2)), as dt_gelu           */
} dt_tp_activation;

typedef struct dt_tp_mlp dt_tp_mlp;

typedef struct dt_tp_mlp_desc {
    int64_t in_features;     /* x's last dim (required, > 0)                         */
    int64_t hidden_features; /* fc1's outputs, fc2's inputs, split over tp (> 0)     */
    int64_t out_features;    /* y's last dim; 0 = in_features                        */
    dt_dtype dtype;          /* DT_F32 (0, default) or DT_F64                        */
    dt_tp_activation activation; /* DT_TP_RELU (0, default) or DT_TP_GELU            */
    double dropout;          /* p in [0, 1): dropout on the activations when the
                                forward is told it is training; 0 = none             */
    int no_bias;             /* 1: fc1 and fc2 without bias                          */
    const char *tp_dim;      /* as in dt_tp_linear_desc (NULL / "": last mesh dim)   */
    int sequence_parallel;   /* x and y Shard(seq_dim) on tp (see above)             */
    int seq_dim;             /* as in dt_tp_linear_desc (0: -2)                      */
    int accumulate_grads;    /* as in dt_tp_linear_desc                              */
    dt_tp_init init;         /* as in dt_tp_linear_desc; fc1 is drawn before fc2     */
} dt_tp_mlp_desc;

DT_API dt_status dt_tp_mlp_create(dt_mesh *m, const dt_tp_mlp_desc *desc, dt_tp_mlp **out);  /* collective */
DT_API void dt_tp_mlp_destroy(dt_tp_mlp *mlp);  /* local */
/* its two layers (owned by the block): weights, gradients, placements */
DT_API dt_tp_linear *dt_tp_mlp_fc1(const dt_tp_mlp *mlp);  /* local */
DT_API dt_tp_linear *dt_tp_mlp_fc2(const dt_tp_mlp *mlp);  /* local */
/* y = fc2(dropout(act(fc1(x)))); dropout only when `training` is non-zero
   (it draws from the mesh's RNG, sharding-invariantly: the same mask on
   every mesh). Keeps fc1's output, the mask and fc2's input for the next
   backward (reused buffers while x's spec stays the same). */
DT_API dt_status dt_tp_mlp_forward(dt_tp_mlp *mlp, const dt_tensor *x, int training, dt_tensor **y);  /* collective */
/* the gradients of both layers, and dx (NULL: not wanted), from dy and the
   x of the last forward (same spec; DT_ERR_ARG without a forward) */
DT_API dt_status dt_tp_mlp_backward(dt_tp_mlp *mlp, const dt_tensor *x, const dt_tensor *dy, dt_tensor **dx);  /* collective */
DT_API dt_status dt_tp_mlp_zero_grad(dt_tp_mlp *mlp);  /* local */
DT_API dt_status dt_tp_mlp_sgd(dt_tp_mlp *mlp, double lr);  /* collective (dt_axpy; moves no data) */

/* ---- Fortran ----
   The entry points dtensor.f90 binds the layers to (its dt_tp_* names; the
   accessors and destroys are bound to the calls above). Each is the call
   without the f_, made in Fortran order (dt_f_call_begin): a Fortran x is
   x(in, batch...), y(out, batch...), W is w(in, out) (dt_tensor_gather it
   into such an array), b(out); the table above with Fortran's Shard dims
   (Shard(-1) is Fortran's Shard(1), the features; colwise W is Shard(2)),
   and the messages in Fortran order (shapes reversed, Shard dims 1..ndim).
   The desc's seq_dim is a Fortran dim of x, 2..ndim (0: 2, the dim after
   the features, as C's default -2; from the end: not taken, DT_ERR_ARG);
   the create calls also compare the module's sizeof of the desc, as
   dt_f_check_sizes reported it at start-up (dt_f_module_size 0 and 1),
   with this build's (DT_ERR_ARG if they differ). The placement calls give
   Fortran's Shard dims: Shard(1) for the features, Shard(k) for a seq_dim
   of k (a C desc's seq_dim d >= 0: Shard(-(d + 1)), from the end). */
DT_API dt_status dt_f_tp_linear_create(dt_mesh *m, const dt_tp_linear_desc *fdesc, dt_tp_linear **out);  /* collective */
DT_API dt_placement dt_f_tp_linear_input_placement(const dt_tp_linear *l);  /* local */
DT_API dt_placement dt_f_tp_linear_output_placement(const dt_tp_linear *l);  /* local */
DT_API dt_status dt_f_tp_linear_forward(dt_tp_linear *l, const dt_tensor *x, dt_tensor **y);  /* collective */
DT_API dt_status dt_f_tp_linear_backward(dt_tp_linear *l, const dt_tensor *x, const dt_tensor *dy, dt_tensor **dx);  /* collective */
/* the backwards without dx (dtensor.f90's dt_tp_*_backward(l, x, dy): dx not wanted) */
DT_API dt_status dt_f_tp_linear_backward_nodx(dt_tp_linear *l, const dt_tensor *x, const dt_tensor *dy);  /* collective */
DT_API dt_status dt_f_tp_linear_zero_grad(dt_tp_linear *l);  /* local */
DT_API dt_status dt_f_tp_linear_sgd(dt_tp_linear *l, double lr);  /* collective */
DT_API dt_status dt_f_tp_mlp_create(dt_mesh *m, const dt_tp_mlp_desc *fdesc, dt_tp_mlp **out);  /* collective */
DT_API dt_status dt_f_tp_mlp_forward(dt_tp_mlp *mlp, const dt_tensor *x, int training, dt_tensor **y);  /* collective */
DT_API dt_status dt_f_tp_mlp_backward(dt_tp_mlp *mlp, const dt_tensor *x, const dt_tensor *dy, dt_tensor **dx);  /* collective */
DT_API dt_status dt_f_tp_mlp_backward_nodx(dt_tp_mlp *mlp, const dt_tensor *x, const dt_tensor *dy);  /* collective */
DT_API dt_status dt_f_tp_mlp_zero_grad(dt_tp_mlp *mlp);  /* local */
DT_API dt_status dt_f_tp_mlp_sgd(dt_tp_mlp *mlp, double lr);  /* collective */

#ifdef __cplusplus
}
#endif
#endif /* DTENSOR_LAYERS_H */

#if defined(DTENSOR_IMPLEMENTATION) && !defined(DTENSOR_IMPLEMENTATION_LINKED) && !defined(DTENSOR_LAYERS_IMPLEMENTATION)
#define DTENSOR_LAYERS_IMPLEMENTATION
#endif
#if defined(DTENSOR_LAYERS_IMPLEMENTATION) && !defined(DTENSOR_LAYERS_IMPLEMENTATION_DONE)
#define DTENSOR_LAYERS_IMPLEMENTATION_DONE

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(DT_MALLOC) && defined(DT_FREE)
#elif !defined(DT_MALLOC) && !defined(DT_FREE)
#define DT_MALLOC(sz) malloc(sz)
#define DT_FREE(p) free(p)
#else
#error "dtensor_layers.h: define both DT_MALLOC and DT_FREE, or neither"
#endif

/* clang's static analyzer (make lint) does not look into variadic functions,
   nor into dtensor.h's implementation where it is not in the file: show it
   that these return an error they are given. Analysis builds only; undefined
   at the end of the implementation. */
#ifdef __clang_analyzer__
#define dt_set_last_error(st, ...) (dt_set_last_error((st), __VA_ARGS__), (st))
#define dt_mesh_agree(m, fn, local, d, args, nargs, what) \
    ((local) ? (dt_mesh_agree((m), (fn), (local), (d), (args), (nargs), (what)), (local)) \
             : dt_mesh_agree((m), (fn), (local), (d), (args), (nargs), (what)))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* >>layers ----------------------------------------------------------------
   Tensor-parallel linear layers and the MLP block, made only of public ops
   (each step below is one op call, so its strategy and collectives are the
   op's own, visible with dt_explain) plus one local loop, the activation /
   dropout backward of the MLP. Errors in the arguments are found before the
   first op runs, so nothing is changed on those. */

struct dt_tp_linear {
    dt_mesh *mesh;
    int tp, nd;              /* the tensor-parallel mesh dim, the mesh's ndim      */
    dt_tp_style style;
    int sp, seq_dim, acc;    /* sequence parallel, its dim (as given), accumulate  */
    int64_t in, out;
    dt_dtype dtype;
    int device;
    dt_tensor *w, *b, *gw, *gb;
};

struct dt_tp_mlp {
    dt_tp_linear *fc1, *fc2;
    dt_tp_activation act;
    double p;
    int have;                /* a forward succeeded: xd, h, a (d, mask) are its    */
    int dropped;             /* it applied dropout: fc2's input is d, else a       */
    dt_tensor_desc xd;       /* its x's spec                                       */
    dt_tensor *h, *a, *d, *mask; /* fc1's output, act(h), dropout(a), the U8 mask  */
};

/* ---- dtensor.h's private helpers the layers need, redone on its public types ---- */

/* placements of normalised descs (a DT_SPLIT_SIZES one carries the number
   of its sizes in `block`): equal fields, equal sizes */
static int dtl__placement_eq(dt_placement a, dt_placement b) {
    if (a.kind != b.kind || a.dim != b.dim || a.reduce != b.reduce || a.split != b.split || a.block != b.block)
        return 0;
    if (a.kind != DT_SHARD || a.split != DT_SPLIT_SIZES || a.sizes == b.sizes) return 1;
    return a.block > 0 && a.sizes && b.sizes && !memcmp(a.sizes, b.sizes, (size_t)a.block * sizeof(int64_t));
}

/* an error from an inner public call: make the message name the layer's
   call fn too ("fn: inner message"), unless it already starts with fn */
static dt_status dtl__within(const char *fn, dt_status st) {
    const char *e = dt_last_error();
    size_t n = strlen(fn);
    char msg[512];
    if (st == DT_OK || (!strncmp(e, fn, n) && (e[n] == ':' || e[n] == ' '))) return st;
    snprintf(msg, sizeof msg, "%s", e);
    return dt_set_last_error(st, "%s: %s", fn, msg);
}

static void dtl__pl_copy(dt_placement *dst, const dt_placement *src, int nd) {
    memset(dst, 0, sizeof(dt_placement) * DT_MAX_MESH_DIMS);
    memcpy(dst, src, sizeof(dt_placement) * (size_t)nd);
}

static int dtl__pl_same(const dt_placement *a, const dt_placement *b, int nd) {
    int k;
    for (k = 0; k < nd; k++)
        /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): both are placement arrays of live descs */
        if (!dtl__placement_eq(a[k], b[k])) return 0;
    return 1;
}

/* a Shard dim as given (negative from the end) -> 0..ndim-1 */
static int dtl__norm(int dim, int ndim) { return dim < 0 ? dim + ndim : dim; }

/* placements p (n mesh dims) of a rank-ndim tensor as messages write them
   (dt_placements_str), the Shard dims counted as the caller counts them:
   inside a Fortran entry point (dt_f_order) Fortran's, C's d being n - d */
static char *dtl__pl_str(const dt_placement *p, int n, int ndim, char *buf, size_t cap) {
    dt_placement q[DT_MAX_MESH_DIMS];
    int k;
    dtl__pl_copy(q, p, n);
    if (dt_f_order())
        for (k = 0; k < n; k++)
            if (q[k].kind == DT_SHARD) q[k].dim = (int8_t)(ndim - dtl__norm(q[k].dim, ndim));
    return dt_placements_str(q, n, buf, cap);
}

static dt_placement dtl__in_pl(const dt_tp_linear *l) {
    if (l->style == DT_TP_ROWWISE) return dt_shard(-1);
    return l->sp ? dt_shard(l->seq_dim) : dt_replicate();
}

static dt_placement dtl__out_pl(const dt_tp_linear *l) {
    if (l->style == DT_TP_COLWISE) return dt_shard(-1);
    return l->sp ? dt_shard(l->seq_dim) : dt_replicate();
}

/* x's placements with p (its dim normalised for an ndim tensor) on tp */
static void dtl__pl_with(const dt_tp_linear *l, const dt_tensor_desc *xd, dt_placement p, dt_placement *pl) {
    dtl__pl_copy(pl, xd->placements, l->nd);
    if (p.kind == DT_SHARD) p.dim = (int8_t)dtl__norm(p.dim, xd->ndim);
    pl[l->tp] = p;
}

static dt_status dtl__resolve_dim(const char *fn, const dt_mesh *m, const char *name, int *tp) {
    char names[160];
    size_t len = 0;
    int k, nd = dt_mesh_ndim(m);
    if (!name || !name[0]) {
        *tp = nd - 1;
        return DT_OK;
    }
    *tp = dt_mesh_dim_index(m, name);
    if (*tp >= 0) return DT_OK;
    names[0] = 0;
    for (k = 0; k < nd && len < sizeof names; k++)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s\"%s\"", k ? ", " : "", dt_mesh_dim_name(m, k));
    return dt_set_last_error(DT_ERR_MESH, "%s: tp_dim \"%s\" is not a dim of the mesh (its dims: %s)", fn, name, names);
}

/* an activation x (what: "x", "dy") for layer l: l's mesh, dtype, host; at
   least 2 dims, the last `feat`; with `like`, like's batch dims; no Partial;
   the feature dim sharded on tp only; with sequence parallelism a seq_dim
   that names a batch dim */
static dt_status dtl__check_act(const char *fn, const dt_tp_linear *l, const char *what, const dt_tensor *x,
                                int64_t feat, const dt_tensor_desc *like) {
    const dt_tensor_desc *d;
    char a[160], b[160];
    int k, nd;
    if (!x) return dt_set_last_error(DT_ERR_ARG, "%s: %s is NULL", fn, what);
    d = dt_tensor_get_desc(x);
    nd = d->ndim;
    if (dt_tensor_mesh(x) != l->mesh) return dt_set_last_error(DT_ERR_MESH, "%s: %s lives on another mesh than the layer", fn, what);
    if (d->dtype != l->dtype)
        return dt_set_last_error(DT_ERR_DTYPE, "%s: %s is %s, the layer is %s", fn, what, dt_dtype_name(d->dtype),
                                 dt_dtype_name(l->dtype));
    if (d->device != l->device)
        return dt_set_last_error(DT_ERR_DEVICE, "%s: %s is on device %d, the layer on device %d%s", fn, what, d->device,
                                 l->device, l->device ? "" : " (an MLP's layers are host tensors)");
    if (nd < 2 || d->shape[nd - 1] != feat) { /* (the features last in C, first in Fortran) */
        snprintf(b, sizeof b, dt_f_order() ? "[%lld, ...]" : "[..., %lld]", (long long)feat);
        return dt_set_last_error(DT_ERR_SHAPE, "%s: %s has shape %s, the layer wants %s with at least one batch dim", fn,
                                 what, dt_shape_str(d->shape, nd, a, sizeof a), b);
    }
    if (like && (like->ndim != nd || memcmp(like->shape, d->shape, sizeof(int64_t) * (size_t)(nd - 1))))
        return dt_set_last_error(DT_ERR_SHAPE, "%s: %s has shape %s, x has %s (the batch dims must be x's)", fn, what,
                                 dt_shape_str(d->shape, nd, a, sizeof a), dt_shape_str(like->shape, like->ndim, b, sizeof b));
    if (l->sp && (dtl__norm(l->seq_dim, nd) < 0 || dtl__norm(l->seq_dim, nd) >= nd - 1)) /* (Fortran: C's -k is k) */
        return dt_set_last_error(DT_ERR_SHAPE, "%s: seq_dim %d is not a batch dim of %s %s", fn,
                                 dt_f_order() ? (l->seq_dim < 0 ? -l->seq_dim : nd - l->seq_dim) : l->seq_dim, what,
                                 dt_shape_str(d->shape, nd, a, sizeof a));
    for (k = 0; k < l->nd; k++) {
        if (d->placements[k].kind == DT_PARTIAL)
            return dt_set_last_error(DT_ERR_PLACEMENT, "%s: %s is %s, Partial on mesh dim %d: reduce it first "
                                     "(dt_tensor_redistribute to Replicate)", fn, what,
                                     dtl__pl_str(d->placements, l->nd, nd, a, sizeof a), k);
        if (k != l->tp && d->placements[k].kind == DT_SHARD && d->placements[k].dim == nd - 1)
            return dt_set_last_error(DT_ERR_PLACEMENT, "%s: %s is %s: its feature dim is split on mesh dim %d, which is not the "
                                     "tp dim %d (only batch dims may be sharded there)", fn, what,
                                     dtl__pl_str(d->placements, l->nd, nd, a, sizeof a), k, l->tp);
    }
    return DT_OK;
}

/* a non-NULL *out (what: "*y", "*dx") must have the result's spec */
static dt_status dtl__check_out(const char *fn, const char *what, const dt_tensor *o, const dt_tp_linear *l, int ndim,
                                const int64_t *shape, const dt_placement *pl) {
    const dt_tensor_desc *d;
    char a[160], b[160];
    if (!o) return DT_OK;
    d = dt_tensor_get_desc(o);
    if (dt_tensor_mesh(o) != l->mesh) return dt_set_last_error(DT_ERR_MESH, "%s: %s lives on another mesh than the layer", fn, what);
    if (d->device != l->device)
        return dt_set_last_error(DT_ERR_DEVICE, "%s: %s is on device %d, the layer on device %d", fn, what, d->device,
                                 l->device);
    if (d->dtype != l->dtype)
        return dt_set_last_error(DT_ERR_DTYPE, "%s: %s is %s, the result is %s", fn, what, dt_dtype_name(d->dtype),
                                 dt_dtype_name(l->dtype));
    if (d->ndim != ndim || memcmp(d->shape, shape, sizeof(int64_t) * (size_t)ndim))
        return dt_set_last_error(DT_ERR_SHAPE, "%s: %s has shape %s, the result has %s", fn, what,
                                 dt_shape_str(d->shape, d->ndim, a, sizeof a), dt_shape_str(shape, ndim, b, sizeof b));
    if (!dtl__pl_same(d->placements, pl, l->nd))
        return dt_set_last_error(DT_ERR_PLACEMENT, "%s: %s has placements %s, the result has %s", fn, what,
                                 dtl__pl_str(d->placements, l->nd, ndim, a, sizeof a), dtl__pl_str(pl, l->nd, ndim, b, sizeof b));
    return DT_OK;
}

/* x itself if it has the placements pl, else a redistributed copy in *tmp */
static dt_status dtl__bring(const dt_tensor *x, const dt_placement *pl, int nd, dt_tensor **tmp,
                            const dt_tensor **use) {
    dt_status st;
    if (dtl__pl_same(dt_tensor_get_desc(x)->placements, pl, nd)) {
        *use = x;
        return DT_OK;
    }
    if ((st = dt_tensor_redistribute(x, pl, tmp))) return st;
    *use = *tmp;
    return DT_OK;
}

/* the result r (consumed) into *out with the placements pl: r itself when
   *out is NULL and r has them already, else redistributed into *out */
static dt_status dtl__finish(dt_tensor *r, const dt_placement *pl, int nd, dt_tensor **out) {
    dt_status st;
    if (!*out && dtl__pl_same(dt_tensor_get_desc(r)->placements, pl, nd)) {
        *out = r;
        return DT_OK;
    }
    st = dt_tensor_redistribute(r, pl, out);
    dt_tensor_destroy(r);
    return st;
}

static dt_status dtl__zero(dt_tensor *t) { return t ? dt_tensor_zero_local(t) : DT_OK; }

static dt_status dtl__linear_check(const char *fn, const dt_mesh *m, const dt_tp_linear_desc *desc, int *tp) {
    if ((unsigned)desc->style > DT_TP_ROWWISE)
        return dt_set_last_error(DT_ERR_ARG, "%s: style = %d, must be DT_TP_COLWISE or DT_TP_ROWWISE", fn, (int)desc->style);
    if (desc->in_features <= 0 || desc->out_features <= 0)
        return dt_set_last_error(DT_ERR_ARG, "%s: in_features = %lld, out_features = %lld; both must be > 0", fn,
                                 (long long)desc->in_features, (long long)desc->out_features);
    if (desc->dtype != DT_F32 && desc->dtype != DT_F64)
        return dt_set_last_error(DT_ERR_DTYPE, "%s: dtype %s; layers take DT_F32 or DT_F64", fn, dt_dtype_name(desc->dtype));
    if ((unsigned)desc->init > DT_TP_INIT_ZEROS)
        return dt_set_last_error(DT_ERR_ARG, "%s: init = %d, must be DT_TP_INIT_UNIFORM or DT_TP_INIT_ZEROS", fn, (int)desc->init);
    if (desc->seq_dim < -DT_MAX_DIMS || desc->seq_dim >= DT_MAX_DIMS)
        return dt_set_last_error(DT_ERR_ARG, "%s: seq_dim = %d is out of range", fn, desc->seq_dim);
    return dtl__resolve_dim(fn, m, desc->tp_dim, tp);
}

/* what the ranks making a layer must agree on (consistency checks): v[11] */
static void dtl__linear_args(const dt_tp_linear_desc *d, int tp, int64_t *v) {
    v[0] = d->style;
    v[1] = d->in_features;
    v[2] = d->out_features;
    v[3] = d->dtype;
    v[4] = d->no_bias != 0;
    v[5] = tp;
    v[6] = d->sequence_parallel != 0;
    v[7] = d->seq_dim;
    v[8] = d->accumulate_grads != 0;
    v[9] = d->init;
    v[10] = d->device;
}

static dt_status dtl__linear_make(const char *fn, dt_mesh *m, const dt_tp_linear_desc *desc, dt_tp_linear **out) {
    dt_tp_linear *l = NULL;
    dt_tensor_desc wd, bd;
    dt_status st;
    int tp;
    if ((st = dtl__linear_check(fn, m, desc, &tp))) return st;
    if (!(l = (dt_tp_linear *)DT_MALLOC(sizeof *l)))
        return dt_set_last_error(DT_ERR_NOMEM, "%s: out of memory allocating %zu bytes", fn, sizeof *l);
    memset(l, 0, sizeof *l);
    l->mesh = m;
    l->tp = tp;
    l->nd = dt_mesh_ndim(m);
    l->style = desc->style;
    l->sp = desc->sequence_parallel != 0;
    l->seq_dim = desc->seq_dim ? desc->seq_dim : -2;
    l->acc = desc->accumulate_grads != 0;
    l->in = desc->in_features;
    l->out = desc->out_features;
    l->dtype = desc->dtype;
    l->device = desc->device;
    memset(&wd, 0, sizeof wd);
    wd.dtype = l->dtype;
    wd.device = l->device;
    wd.ndim = 2;
    wd.shape[0] = l->out;
    wd.shape[1] = l->in;
    wd.placements[tp] = dt_shard(l->style == DT_TP_COLWISE ? 0 : 1);
    bd = wd;
    bd.ndim = 1;
    bd.shape[1] = 0;
    bd.placements[tp] = l->style == DT_TP_COLWISE ? dt_shard(0) : dt_replicate();
    st = dt_tensor_zeros(m, &wd, &l->w);
    if (!st) st = dt_tensor_zeros(m, &wd, &l->gw);
    if (!st && !desc->no_bias) st = dt_tensor_zeros(m, &bd, &l->b);
    if (!st && !desc->no_bias) st = dt_tensor_zeros(m, &bd, &l->gb);
    if (!st && desc->init == DT_TP_INIT_UNIFORM) {
        double bound = 1.0 / sqrt((double)l->in);
        st = dt_uniform_(l->w, -bound, bound);
        if (!st && l->b) st = dt_uniform_(l->b, -bound, bound);
    }
    if (st) {
        dt_tp_linear_destroy(l);
        return dtl__within(fn, st); /* the inner dt_tensor_zeros / dt_uniform_ names only itself */
    }
    *out = l;
    return DT_OK;
}

static dt_status dtl__linear_create_body(dt_mesh *m, const dt_tp_linear_desc *desc, dt_tp_linear **out) {
    const char *fn = "dt_tp_linear_create";
    dt_status st = DT_OK;
    int tp = 0;
    int64_t v[11] = {0};
    if (!m) return dt_set_last_error(DT_ERR_ARG, "%s: mesh is NULL", fn);
    if (!desc) st = dt_set_last_error(DT_ERR_ARG, "%s: desc is NULL", fn);
    else if (!out) st = dt_set_last_error(DT_ERR_ARG, "%s: out is NULL", fn);
    else st = dtl__linear_check(fn, m, desc, &tp);
    /* consistency checks: one rank's bad desc fails all before any tensor is made */
    if (!st) dtl__linear_args(desc, tp, v);
    if ((st = dt_mesh_agree(m, fn, st, NULL, v, st ? 0 : 11, NULL))) return st;
    return dtl__linear_make(fn, m, desc, out);
}
DT_API dt_status dt_tp_linear_create(dt_mesh *m, const dt_tp_linear_desc *desc, dt_tp_linear **out) {
    dt_call_begin();
    return dt_call_end("dt_tp_linear_create", dtl__linear_create_body(m, desc, out));
}

DT_API void dt_tp_linear_destroy(dt_tp_linear *l) {
    if (!l) return;
    dt_tensor_destroy(l->w);
    dt_tensor_destroy(l->b);
    dt_tensor_destroy(l->gw);
    dt_tensor_destroy(l->gb);
    DT_FREE(l);
}

DT_API dt_tensor *dt_tp_linear_weight(const dt_tp_linear *l) { return l ? l->w : NULL; }
DT_API dt_tensor *dt_tp_linear_bias(const dt_tp_linear *l) { return l ? l->b : NULL; }
DT_API dt_tensor *dt_tp_linear_grad_weight(const dt_tp_linear *l) { return l ? l->gw : NULL; }
DT_API dt_tensor *dt_tp_linear_grad_bias(const dt_tp_linear *l) { return l ? l->gb : NULL; }
DT_API dt_placement dt_tp_linear_input_placement(const dt_tp_linear *l) { return l ? dtl__in_pl(l) : dt_replicate(); }
DT_API dt_placement dt_tp_linear_output_placement(const dt_tp_linear *l) { return l ? dtl__out_pl(l) : dt_replicate(); }

/* consistency checks of a layer call: its argument checks' verdict, x's and
   dy's specs (a NULL or refused argument: the verdict alone) */
static dt_status dtl__consistent(const char *fn, const dt_mesh *m, dt_status st, const dt_tensor *x,
                                 const dt_tensor *dy) {
    int64_t h = st || !dy ? 0 : (int64_t)dt_tensor_desc_hash(dt_tensor_get_desc(dy));
    return dt_mesh_agree(m, fn, st, dt_tensor_get_desc(x), &h, 1, NULL);
}
#ifdef __clang_analyzer__ /* a local failure is returned (for the static analyzer) */
#define dtl__consistent(fn, m, st, x, dy) \
    ((st) ? (dtl__consistent((fn), (m), (st), (x), (dy)), (st)) : dtl__consistent((fn), (m), (st), (x), (dy)))
#endif

/* the spec checks of a forward from x (l's input) to *y (ly's output, ly
   on l's mesh and tp dim), which gets the spec (yshape, ypl) */
static dt_status dtl__forward_check(const char *fn, const dt_tp_linear *l, const dt_tp_linear *ly, const dt_tensor *x,
                                    dt_tensor **y, int64_t *yshape, dt_placement *ypl) {
    const dt_tensor_desc *xd;
    dt_status st;
    if (!y) return dt_set_last_error(DT_ERR_ARG, "%s: y is NULL", fn);
    if ((st = dtl__check_act(fn, l, "x", x, l->in, NULL))) return st;
    if (!(xd = dt_tensor_get_desc(x))) return dt_set_last_error(DT_ERR_ARG, "%s: x is NULL", fn);
    memcpy(yshape, xd->shape, sizeof(int64_t) * DT_MAX_DIMS);
    yshape[xd->ndim - 1] = ly->out;
    dtl__pl_with(ly, xd, dtl__out_pl(ly), ypl);
    if (*y == x) return dt_set_last_error(DT_ERR_ARG, "%s: *y is x (the backward needs x)", fn);
    return dtl__check_out(fn, "*y", *y, ly, xd->ndim, yshape, ypl);
}

static dt_status dtl__linear_forward_body(dt_tp_linear *l, const dt_tensor *x, dt_tensor **y) {
    const char *fn = "dt_tp_linear_forward";
    dt_placement need[DT_MAX_MESH_DIMS], ypl[DT_MAX_MESH_DIMS];
    int64_t ysh[DT_MAX_DIMS];
    const dt_tensor *xu = NULL;
    dt_tensor *xt = NULL, *r = NULL;
    dt_status st;
    if (!l) return dt_set_last_error(DT_ERR_ARG, "%s: layer is NULL", fn);
    st = dtl__forward_check(fn, l, l, x, y, ysh, ypl);
    if ((st = dtl__consistent(fn, l->mesh, st, x, NULL))) return st;
    /* x to the layer's input layout on tp: colwise Replicate (sequence
       parallel: the allgather), rowwise Shard(-1) (local when x is Replicate) */
    dtl__pl_with(l, dt_tensor_get_desc(x), l->style == DT_TP_COLWISE ? dt_replicate() : dt_shard(-1), need);
    st = dtl__bring(x, need, l->nd, &xt, &xu);
    /* colwise: R x S(0) -> S(-1); rowwise: S(-1) x S(1) -> Partial(SUM), the
       bias added once */
    if (!st) st = dt_linear(xu, l->w, l->b, &r);
    dt_tensor_destroy(xt);
    /* rowwise: Partial -> Replicate (allreduce) or Shard(seq) (reduce-scatter) */
    if (!st) return dtl__within(fn, dtl__finish(r, ypl, l->nd, y));
    dt_tensor_destroy(r);
    return dtl__within(fn, st); /* the inner calls name only themselves */
}
DT_API dt_status dt_tp_linear_forward(dt_tp_linear *l, const dt_tensor *x, dt_tensor **y) {
    dt_call_begin();
    return dt_call_end("dt_tp_linear_forward", dtl__linear_forward_body(l, x, y));
}

/* the argument checks of a backward through l1 (x's layer) .. l2 (dy's layer) */
static dt_status dtl__backward_check(const char *fn, const dt_tp_linear *l1, const dt_tp_linear *l2,
                                     const dt_tensor *x, const dt_tensor *dy, dt_tensor **dx) {
    const dt_tensor_desc *xd;
    dt_status st;
    if ((st = dtl__check_act(fn, l1, "x", x, l1->in, NULL))) return st;
    xd = dt_tensor_get_desc(x);
    if ((st = dtl__check_act(fn, l2, "dy", dy, l2->out, xd))) return st;
    if (dx && (*dx == x || *dx == dy)) return dt_set_last_error(DT_ERR_ARG, "%s: *dx is x or dy", fn);
    if (dx) return dtl__check_out(fn, "*dx", *dx, l1, xd->ndim, xd->shape, xd->placements);
    return DT_OK;
}

static dt_status dtl__linear_backward_body(dt_tp_linear *l, const dt_tensor *x, const dt_tensor *dy, dt_tensor **dx) {
    const char *fn = "dt_tp_linear_backward";
    dt_placement xpl[DT_MAX_MESH_DIMS], dypl[DT_MAX_MESH_DIMS];
    const dt_tensor_desc *xd;
    const dt_tensor *xu = NULL, *dyu = NULL, *x2 = NULL, *dy2 = NULL;
    dt_tensor *xt = NULL, *dyt = NULL, *xr = NULL, *dyr = NULL, *dyT = NULL, *gw = NULL, *gb = NULL, *g = NULL;
    int dims[DT_MAX_DIMS], k, nd;
    int64_t sh[2];
    dt_status st;
    if (!l) return dt_set_last_error(DT_ERR_ARG, "%s: layer is NULL", fn);
    st = dtl__backward_check(fn, l, l, x, dy, dx);
    if ((st = dtl__consistent(fn, l->mesh, st, x, dy))) return st;
    xd = dt_tensor_get_desc(x);
    nd = xd->ndim;
    /* colwise: x Replicate, dy Shard(-1) on tp; rowwise: x Shard(-1), dy
       Replicate (sequence parallel: the allgather of x resp. dy) */
    dtl__pl_with(l, xd, l->style == DT_TP_COLWISE ? dt_replicate() : dt_shard(-1), xpl);
    dtl__pl_with(l, xd, l->style == DT_TP_COLWISE ? dt_shard(-1) : dt_replicate(), dypl);
    st = dtl__bring(x, xpl, l->nd, &xt, &xu);
    if (!st) st = dtl__bring(dy, dypl, l->nd, &dyt, &dyu);
    /* dW = dy^T x over the flattened batch: on tp S(0)/S(1) like W, on the
       data-parallel dims Partial(SUM) (S(1) x S(0)) */
    x2 = xu;
    dy2 = dyu;
    if (!st && nd > 2) {
        sh[0] = -1;
        sh[1] = l->in;
        st = dt_reshape(xu, 2, sh, &xr);
        sh[1] = l->out;
        if (!st) st = dt_reshape(dyu, 2, sh, &dyr);
        x2 = xr;
        dy2 = dyr;
    }
    if (!st) st = dt_transpose(dy2, 0, 1, &dyT);
    if (!st) st = dt_matmul(dyT, x2, &gw);
    /* db = dy summed over the batch dims */
    for (k = 0; k < nd - 1; k++) dims[k] = k;
    if (!st && l->b) st = dt_sum(dyu, nd - 1, dims, 0, &gb);
    /* dx = dy W: colwise S(-1) x S(0) -> Partial(SUM) on tp; rowwise R x S(1) -> S(-1) */
    if (!st && dx) st = dt_matmul(dyu, l->w, &g);
    /* commit: the gradients to W's / b's spec (the allreduces over the
       data-parallel dims), dx to x's spec (colwise: the allreduce, or the
       reduce-scatter under sequence parallelism) */
    if (!st) st = l->acc ? dt_axpy(1.0, gw, l->gw) : dt_tensor_redistribute(gw, dt_tensor_get_desc(l->gw)->placements, &l->gw);
    if (!st && l->b) st = l->acc ? dt_axpy(1.0, gb, l->gb) : dt_tensor_redistribute(gb, dt_tensor_get_desc(l->gb)->placements, &l->gb);
    if (!st && dx) {
        dtl__pl_copy(xpl, xd->placements, l->nd);
        st = dtl__finish(g, xpl, l->nd, dx);
        g = NULL;
    }
    dt_tensor_destroy(g);
    dt_tensor_destroy(gb);
    dt_tensor_destroy(gw);
    dt_tensor_destroy(dyT);
    dt_tensor_destroy(dyr);
    dt_tensor_destroy(xr);
    dt_tensor_destroy(dyt);
    dt_tensor_destroy(xt);
    return dtl__within(fn, st);
}
DT_API dt_status dt_tp_linear_backward(dt_tp_linear *l, const dt_tensor *x, const dt_tensor *dy, dt_tensor **dx) {
    dt_call_begin();
    return dt_call_end("dt_tp_linear_backward", dtl__linear_backward_body(l, x, dy, dx));
}

static dt_status dtl__linear_zero_grad_body(dt_tp_linear *l) {
    if (!l) return dt_set_last_error(DT_ERR_ARG, "dt_tp_linear_zero_grad: layer is NULL");
    dtl__zero(l->gw);
    return dtl__zero(l->gb);
}
DT_API dt_status dt_tp_linear_zero_grad(dt_tp_linear *l) {
    dt_call_begin();
    return dt_call_end("dt_tp_linear_zero_grad", dtl__linear_zero_grad_body(l));
}

static dt_status dtl__linear_sgd_body(dt_tp_linear *l, double lr) {
    dt_status st;
    if (!l) return dt_set_last_error(DT_ERR_ARG, "dt_tp_linear_sgd: layer is NULL");
    if (!(lr == lr) || lr - lr != 0.0) return dt_set_last_error(DT_ERR_ARG, "dt_tp_linear_sgd: lr = %g is not finite", lr);
    if (!(st = dt_axpy(-lr, l->gw, l->w)) && l->b) st = dt_axpy(-lr, l->gb, l->b);
    return dtl__within("dt_tp_linear_sgd", st);
}
DT_API dt_status dt_tp_linear_sgd(dt_tp_linear *l, double lr) {
    dt_call_begin();
    return dt_call_end("dt_tp_linear_sgd", dtl__linear_sgd_body(l, lr));
}

/* ---- the MLP block ---- */

static dt_status dtl__mlp_check(const char *fn, const dt_mesh *m, const dt_tp_mlp_desc *desc, dt_tp_mlp **out) {
    int tp;
    if (!desc) return dt_set_last_error(DT_ERR_ARG, "%s: desc is NULL", fn);
    if (!out) return dt_set_last_error(DT_ERR_ARG, "%s: out is NULL", fn);
    if (desc->in_features <= 0 || desc->hidden_features <= 0 || desc->out_features < 0)
        return dt_set_last_error(DT_ERR_ARG, "%s: in_features = %lld, hidden_features = %lld, out_features = %lld; the first "
                                 "two must be > 0, the last >= 0", fn, (long long)desc->in_features,
                                 (long long)desc->hidden_features, (long long)desc->out_features);
    if ((unsigned)desc->activation > DT_TP_GELU)
        return dt_set_last_error(DT_ERR_ARG, "%s: activation = %d, must be DT_TP_RELU or DT_TP_GELU", fn, (int)desc->activation);
    if (!(desc->dropout >= 0.0 && desc->dropout < 1.0))
        return dt_set_last_error(DT_ERR_ARG, "%s: dropout = %g, must be in [0, 1)", fn, desc->dropout);
    if ((unsigned)desc->init > DT_TP_INIT_ZEROS)
        return dt_set_last_error(DT_ERR_ARG, "%s: init = %d, must be DT_TP_INIT_UNIFORM or DT_TP_INIT_ZEROS", fn, (int)desc->init);
    if (desc->dtype != DT_F32 && desc->dtype != DT_F64)
        return dt_set_last_error(DT_ERR_DTYPE, "%s: dtype %s; layers take DT_F32 or DT_F64", fn, dt_dtype_name(desc->dtype));
    if (desc->seq_dim < -DT_MAX_DIMS || desc->seq_dim >= DT_MAX_DIMS)
        return dt_set_last_error(DT_ERR_ARG, "%s: seq_dim = %d is out of range", fn, desc->seq_dim);
    return dtl__resolve_dim(fn, m, desc->tp_dim, &tp);
}

/* what the ranks making an MLP block must agree on: v[12] */
static void dtl__mlp_args(const dt_mesh *m, const dt_tp_mlp_desc *d, int64_t *v) {
    v[0] = d->in_features;
    v[1] = d->hidden_features;
    v[2] = d->out_features;
    v[3] = d->dtype;
    v[4] = d->activation;
    memcpy(&v[5], &d->dropout, sizeof d->dropout);
    v[6] = d->no_bias != 0;
    v[7] = d->tp_dim && d->tp_dim[0] ? dt_mesh_dim_index(m, d->tp_dim) : -1;
    v[8] = d->sequence_parallel != 0;
    v[9] = d->seq_dim;
    v[10] = d->accumulate_grads != 0;
    v[11] = d->init;
}

static dt_status dtl__mlp_create_body(dt_mesh *m, const dt_tp_mlp_desc *desc, dt_tp_mlp **out) {
    const char *fn = "dt_tp_mlp_create";
    dt_tp_linear_desc ld;
    dt_tp_mlp *mlp = NULL;
    int64_t v[12] = {0};
    dt_status st;
    if (!m) return dt_set_last_error(DT_ERR_ARG, "%s: mesh is NULL", fn);
    /* consistency checks: one rank's bad desc fails all before any tensor is made */
    st = dtl__mlp_check(fn, m, desc, out);
    if (!st) dtl__mlp_args(m, desc, v);
    if ((st = dt_mesh_agree(m, fn, st, NULL, v, st ? 0 : 12, NULL))) return st;
    if (!(mlp = (dt_tp_mlp *)DT_MALLOC(sizeof *mlp)))
        return dt_set_last_error(DT_ERR_NOMEM, "%s: out of memory allocating %zu bytes", fn, sizeof *mlp);
    memset(mlp, 0, sizeof *mlp);
    mlp->act = desc->activation;
    mlp->p = desc->dropout;
    memset(&ld, 0, sizeof ld);
    ld.style = DT_TP_COLWISE;
    ld.in_features = desc->in_features;
    ld.out_features = desc->hidden_features;
    ld.dtype = desc->dtype;
    ld.no_bias = desc->no_bias;
    ld.tp_dim = desc->tp_dim;
    ld.sequence_parallel = desc->sequence_parallel;
    ld.seq_dim = desc->seq_dim;
    ld.accumulate_grads = desc->accumulate_grads;
    ld.init = desc->init;
    st = dtl__linear_make(fn, m, &ld, &mlp->fc1);
    ld.style = DT_TP_ROWWISE;
    ld.in_features = desc->hidden_features;
    ld.out_features = desc->out_features ? desc->out_features : desc->in_features;
    if (!st) st = dtl__linear_make(fn, m, &ld, &mlp->fc2);
    if (st) {
        dt_tp_mlp_destroy(mlp);
        return st;
    }
    *out = mlp;
    return DT_OK;
}
DT_API dt_status dt_tp_mlp_create(dt_mesh *m, const dt_tp_mlp_desc *desc, dt_tp_mlp **out) {
    dt_call_begin();
    return dt_call_end("dt_tp_mlp_create", dtl__mlp_create_body(m, desc, out));
}

static void dtl__mlp_drop_saved(dt_tp_mlp *mlp) {
    dt_tensor_destroy(mlp->h);
    dt_tensor_destroy(mlp->a);
    dt_tensor_destroy(mlp->d);
    dt_tensor_destroy(mlp->mask);
    mlp->h = mlp->a = mlp->d = mlp->mask = NULL;
    mlp->have = 0;
}

DT_API void dt_tp_mlp_destroy(dt_tp_mlp *mlp) {
    if (!mlp) return;
    dtl__mlp_drop_saved(mlp);
    dt_tp_linear_destroy(mlp->fc1);
    dt_tp_linear_destroy(mlp->fc2);
    DT_FREE(mlp);
}

DT_API dt_tp_linear *dt_tp_mlp_fc1(const dt_tp_mlp *mlp) { return mlp ? mlp->fc1 : NULL; }
DT_API dt_tp_linear *dt_tp_mlp_fc2(const dt_tp_mlp *mlp) { return mlp ? mlp->fc2 : NULL; }

static int dtl__same_spec(const dt_tensor_desc *a, const dt_tensor_desc *b, int nd) {
    return a->dtype == b->dtype && a->ndim == b->ndim &&
           !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) && dtl__pl_same(a->placements, b->placements, nd);
}

static dt_status dtl__mlp_forward_body(dt_tp_mlp *mlp, const dt_tensor *x, int training, dt_tensor **y) {
    const char *fn = "dt_tp_mlp_forward";
    dt_placement ypl[DT_MAX_MESH_DIMS];
    int64_t ysh[DT_MAX_DIMS];
    int drop;
    dt_status st;
    if (!mlp) return dt_set_last_error(DT_ERR_ARG, "%s: mlp is NULL", fn);
    st = dtl__forward_check(fn, mlp->fc1, mlp->fc2, x, y, ysh, ypl);
    if ((st = dtl__consistent(fn, mlp->fc1->mesh, st, x, NULL))) return st;
    if (training && mlp->p > 0.0) { /* training differs between ranks: the dropout would draw on some only */
        int64_t tr = 1;
        if ((st = dt_mesh_agree(mlp->fc1->mesh, fn, DT_OK, NULL, &tr, 1, "training"))) return st;
    } else if ((st = dt_mesh_agree(mlp->fc1->mesh, fn, DT_OK, NULL, NULL, 0, "not training"))) {
        return st;
    }
    /* the saved tensors are reused as *out while x's spec stays the same */
    if (mlp->have && !dtl__same_spec(&mlp->xd, dt_tensor_get_desc(x), mlp->fc1->nd)) dtl__mlp_drop_saved(mlp);
    mlp->have = 0;
    drop = training && mlp->p > 0.0;
    if (!drop) {
        dt_tensor_destroy(mlp->d);
        dt_tensor_destroy(mlp->mask);
        mlp->d = mlp->mask = NULL;
    }
    st = dt_tp_linear_forward(mlp->fc1, x, &mlp->h);            /* [..., hidden] S(-1) on tp */
    if (!st) st = mlp->act == DT_TP_GELU ? dt_gelu(mlp->h, &mlp->a) : dt_relu(mlp->h, &mlp->a); /* local */
    if (!st && drop) st = dt_dropout(mlp->a, mlp->p, &mlp->d, &mlp->mask);                   /* local */
    if (!st) st = dt_tp_linear_forward(mlp->fc2, drop ? mlp->d : mlp->a, y);
    if (st) {
        dtl__mlp_drop_saved(mlp);
        return dtl__within(fn, st);
    }
    mlp->xd = *dt_tensor_get_desc(x);
    mlp->xd.local_shape = NULL;
    mlp->dropped = drop;
    mlp->have = 1;
    return DT_OK;
}
DT_API dt_status dt_tp_mlp_forward(dt_tp_mlp *mlp, const dt_tensor *x, int training, dt_tensor **y) {
    dt_call_begin();
    return dt_call_end("dt_tp_mlp_forward", dtl__mlp_forward_body(mlp, x, training, y));
}

/* g = g * dropout'(mask) * act'(h) on the local elements (g and h have one spec) */
static void dtl__act_backward(dt_tp_activation act, dt_dtype t, size_t n, const void *h, const unsigned char *mask,
                              double scale, void *g) {
    size_t i;
    for (i = 0; i < n; i++) {
        double hv = t == DT_F32 ? (double)((const float *)h)[i] : ((const double *)h)[i];
        double gv = t == DT_F32 ? (double)((float *)g)[i] : ((double *)g)[i], dv;
        if (mask) gv = mask[i] ? gv * scale : 0.0;
        if (act == DT_TP_GELU) /* Phi(h) + h phi(h) */
            dv = 0.5 * erfc(-hv * 0.70710678118654752440) + hv * exp(-0.5 * hv * hv) * 0.39894228040143267794;
        else
            dv = hv > 0.0 ? 1.0 : 0.0;
        if (t == DT_F32) ((float *)g)[i] = (float)(gv * dv);
        else ((double *)g)[i] = gv * dv;
    }
}

static dt_status dtl__mlp_backward_body(dt_tp_mlp *mlp, const dt_tensor *x, const dt_tensor *dy, dt_tensor **dx) {
    const char *fn = "dt_tp_mlp_backward";
    const dt_tensor_desc *xd, *hd;
    dt_tensor *g = NULL, *gt = NULL;
    const dt_tensor *gu = NULL;
    char a[160], b[160], c[160], e[160];
    dt_status st;
    if (!mlp) return dt_set_last_error(DT_ERR_ARG, "%s: mlp is NULL", fn);
    st = dtl__check_act(fn, mlp->fc1, "x", x, mlp->fc1->in, NULL);
    if (!st && !mlp->have)
        st = dt_set_last_error(DT_ERR_ARG, "%s: no forward to differentiate (call dt_tp_mlp_forward first)", fn);
    if (!st && !dtl__same_spec(&mlp->xd, (xd = dt_tensor_get_desc(x)), mlp->fc1->nd))
        st = dt_set_last_error(DT_ERR_ARG, "%s: x is %s %s, the last forward's x was %s %s", fn,
                               dt_shape_str(xd->shape, xd->ndim, a, sizeof a),
                               dtl__pl_str(xd->placements, mlp->fc1->nd, xd->ndim, b, sizeof b),
                               dt_shape_str(mlp->xd.shape, mlp->xd.ndim, c, sizeof c),
                               dtl__pl_str(mlp->xd.placements, mlp->fc1->nd, mlp->xd.ndim, e, sizeof e));
    if (!st) st = dtl__backward_check(fn, mlp->fc1, mlp->fc2, x, dy, dx);
    if ((st = dtl__consistent(fn, mlp->fc1->mesh, st, x, dy))) return st;
    /* fc2: its gradients, and g = dL/d(its input) with that input's spec */
    st = dt_tp_linear_backward(mlp->fc2, mlp->dropped ? mlp->d : mlp->a, dy, &g);
    hd = dt_tensor_get_desc(mlp->h);
    if (!st) st = dtl__bring(g, hd->placements, mlp->fc1->nd, &gt, &gu);
    if (!st) { /* through dropout and the activation, on the local shards */
        dt_tensor *gw = gt ? gt : g;
        dtl__act_backward(mlp->act, hd->dtype, dt_tensor_local_numel(gw), dt_tensor_data(mlp->h),
                          mlp->dropped ? (const unsigned char *)dt_tensor_data(mlp->mask) : NULL,
                          1.0 / (1.0 - mlp->p), dt_tensor_data(gw));
        st = dt_tp_linear_backward(mlp->fc1, x, gw, dx);
    }
    (void)gu;
    dt_tensor_destroy(gt);
    dt_tensor_destroy(g);
    return dtl__within(fn, st);
}
DT_API dt_status dt_tp_mlp_backward(dt_tp_mlp *mlp, const dt_tensor *x, const dt_tensor *dy, dt_tensor **dx) {
    dt_call_begin();
    return dt_call_end("dt_tp_mlp_backward", dtl__mlp_backward_body(mlp, x, dy, dx));
}

static dt_status dtl__mlp_zero_grad_body(dt_tp_mlp *mlp) {
    if (!mlp) return dt_set_last_error(DT_ERR_ARG, "dt_tp_mlp_zero_grad: mlp is NULL");
    dt_tp_linear_zero_grad(mlp->fc1);
    return dt_tp_linear_zero_grad(mlp->fc2);
}
DT_API dt_status dt_tp_mlp_zero_grad(dt_tp_mlp *mlp) {
    dt_call_begin();
    return dt_call_end("dt_tp_mlp_zero_grad", dtl__mlp_zero_grad_body(mlp));
}

static dt_status dtl__mlp_sgd_body(dt_tp_mlp *mlp, double lr) {
    dt_status st;
    if (!mlp) return dt_set_last_error(DT_ERR_ARG, "dt_tp_mlp_sgd: mlp is NULL");
    if (!(st = dt_tp_linear_sgd(mlp->fc1, lr))) st = dt_tp_linear_sgd(mlp->fc2, lr);
    return dtl__within("dt_tp_mlp_sgd", st);
}
DT_API dt_status dt_tp_mlp_sgd(dt_tp_mlp *mlp, double lr) {
    dt_call_begin();
    return dt_call_end("dt_tp_mlp_sgd", dtl__mlp_sgd_body(mlp, lr));
}

/* ---- the Fortran entry points (dtensor.f90): the calls above in Fortran
   order (dt_f_call_begin / dt_f_call_end); the descs' seq_dim converted,
   their size as the module has it compared ---- */

/* the module's sizeof of desc struct i (0: dt_tp_linear_desc, 1:
   dt_tp_mlp_desc), as dt_f_check_sizes got it at start-up (0: not told) */
static dt_status dtl__f_sizeof(const char *fn, int i, const char *what, size_t mine) {
    int64_t f = dt_f_module_size(i);
    if (f && f != (int64_t)mine)
        return dt_set_last_error(DT_ERR_ARG, "%s: the Fortran module's sizeof %s is %lld, the C library's %lld: dtensor.f90 "
                                 "does not match this build of dtensor_layers.h (build both from the same version)", fn,
                                 what, (long long)f, (long long)mine);
    return DT_OK;
}

/* a Fortran seq_dim (0: the default, Fortran's 2; k: Fortran dim k of x)
   as the layers take it: C's -k, whatever x's rank */
static dt_status dtl__f_seq_dim(const char *fn, int fseq, int *seq) {
    if (fseq < 0 || fseq > DT_MAX_DIMS)
        return dt_set_last_error(DT_ERR_ARG, "%s: desc%%seq_dim = %d: a Fortran dim of x, 2..ndim (0: 2, the dim after "
                                 "the features), not counted from the end", fn, fseq);
    *seq = -fseq;
    return DT_OK;
}

/* a layer's placement (a Shard dim as the layers keep it: C's -k, or a C
   desc's seq_dim d >= 0) with Fortran's dim: k, or -(d + 1) from the end */
static dt_placement dtl__f_pl(dt_placement p) {
    if (p.kind == DT_SHARD) p.dim = (int8_t)(p.dim < 0 ? -p.dim : -(p.dim + 1));
    return p;
}

static dt_status dtl__f_linear_create_body(dt_mesh *m, const dt_tp_linear_desc *fdesc, dt_tp_linear **out) {
    const char *fn = "dt_tp_linear_create";
    dt_tp_linear_desc d;
    dt_status st;
    if (!m || !fdesc) return dt_tp_linear_create(m, fdesc, out); /* its refusal */
    d = *fdesc;
    st = dtl__f_sizeof(fn, 0, "dt_tp_linear_desc", sizeof d);
    if (!st) st = dtl__f_seq_dim(fn, fdesc->seq_dim, &d.seq_dim);
    /* a rank that refused the conversion fails every rank (checks on) */
    if ((st = dt_mesh_agree(m, fn, st, NULL, NULL, 0, NULL))) return st;
    return dt_tp_linear_create(m, &d, out);
}
DT_API dt_status dt_f_tp_linear_create(dt_mesh *m, const dt_tp_linear_desc *fdesc, dt_tp_linear **out) {
    dt_f_call_begin();
    return dt_f_call_end("dt_tp_linear_create", dtl__f_linear_create_body(m, fdesc, out));
}
DT_API dt_placement dt_f_tp_linear_input_placement(const dt_tp_linear *l) {
    return dtl__f_pl(dt_tp_linear_input_placement(l));
}
DT_API dt_placement dt_f_tp_linear_output_placement(const dt_tp_linear *l) {
    return dtl__f_pl(dt_tp_linear_output_placement(l));
}
DT_API dt_status dt_f_tp_linear_forward(dt_tp_linear *l, const dt_tensor *x, dt_tensor **y) {
    dt_f_call_begin();
    return dt_f_call_end("dt_tp_linear_forward", dt_tp_linear_forward(l, x, y));
}
DT_API dt_status dt_f_tp_linear_backward(dt_tp_linear *l, const dt_tensor *x, const dt_tensor *dy, dt_tensor **dx) {
    dt_f_call_begin();
    return dt_f_call_end("dt_tp_linear_backward", dt_tp_linear_backward(l, x, dy, dx));
}
DT_API dt_status dt_f_tp_linear_backward_nodx(dt_tp_linear *l, const dt_tensor *x, const dt_tensor *dy) {
    dt_f_call_begin();
    return dt_f_call_end("dt_tp_linear_backward", dt_tp_linear_backward(l, x, dy, NULL));
}
DT_API dt_status dt_f_tp_linear_zero_grad(dt_tp_linear *l) {
    dt_f_call_begin();
    return dt_f_call_end("dt_tp_linear_zero_grad", dt_tp_linear_zero_grad(l));
}
DT_API dt_status dt_f_tp_linear_sgd(dt_tp_linear *l, double lr) {
    dt_f_call_begin();
    return dt_f_call_end("dt_tp_linear_sgd", dt_tp_linear_sgd(l, lr));
}

static dt_status dtl__f_mlp_create_body(dt_mesh *m, const dt_tp_mlp_desc *fdesc, dt_tp_mlp **out) {
    const char *fn = "dt_tp_mlp_create";
    dt_tp_mlp_desc d;
    dt_status st;
    if (!m || !fdesc) return dt_tp_mlp_create(m, fdesc, out); /* its refusal */
    d = *fdesc;
    st = dtl__f_sizeof(fn, 1, "dt_tp_mlp_desc", sizeof d);
    if (!st) st = dtl__f_seq_dim(fn, fdesc->seq_dim, &d.seq_dim);
    if ((st = dt_mesh_agree(m, fn, st, NULL, NULL, 0, NULL))) return st;
    return dt_tp_mlp_create(m, &d, out);
}
DT_API dt_status dt_f_tp_mlp_create(dt_mesh *m, const dt_tp_mlp_desc *fdesc, dt_tp_mlp **out) {
    dt_f_call_begin();
    return dt_f_call_end("dt_tp_mlp_create", dtl__f_mlp_create_body(m, fdesc, out));
}
DT_API dt_status dt_f_tp_mlp_forward(dt_tp_mlp *mlp, const dt_tensor *x, int training, dt_tensor **y) {
    dt_f_call_begin();
    return dt_f_call_end("dt_tp_mlp_forward", dt_tp_mlp_forward(mlp, x, training, y));
}
DT_API dt_status dt_f_tp_mlp_backward(dt_tp_mlp *mlp, const dt_tensor *x, const dt_tensor *dy, dt_tensor **dx) {
    dt_f_call_begin();
    return dt_f_call_end("dt_tp_mlp_backward", dt_tp_mlp_backward(mlp, x, dy, dx));
}
DT_API dt_status dt_f_tp_mlp_backward_nodx(dt_tp_mlp *mlp, const dt_tensor *x, const dt_tensor *dy) {
    dt_f_call_begin();
    return dt_f_call_end("dt_tp_mlp_backward", dt_tp_mlp_backward(mlp, x, dy, NULL));
}
DT_API dt_status dt_f_tp_mlp_zero_grad(dt_tp_mlp *mlp) {
    dt_f_call_begin();
    return dt_f_call_end("dt_tp_mlp_zero_grad", dt_tp_mlp_zero_grad(mlp));
}
DT_API dt_status dt_f_tp_mlp_sgd(dt_tp_mlp *mlp, double lr) {
    dt_f_call_begin();
    return dt_f_call_end("dt_tp_mlp_sgd", dt_tp_mlp_sgd(mlp, lr));
}

#ifdef __clang_analyzer__
#undef dt_set_last_error
#undef dt_mesh_agree
#endif

#ifdef __cplusplus
}
#endif
#endif /* DTENSOR_LAYERS_IMPLEMENTATION */
