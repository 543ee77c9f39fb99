/* tests/fuzz/fuzz_npy.c -- libFuzzer target: the .npy header parser and the
   RNG state file reader.

   The input is a file. The first byte picks:
   - even: dt__npy_parse_header on exactly the bytes (a malloc'd copy of that
     length, so ASan sees any read past it): DT_OK or DT_ERR_IO with a
     message, never a crash; what it accepts is sane (a supported dtype,
     0..DT_MAX_DIMS non-negative dims, data_offset inside the input,
     data_bytes = numel * itemsize). If bit 1 of the first byte is clear,
     accepted headers whose data fits in
     the input are then written to a file and loaded whole with
     dt_tensor_load_npy on a one-rank mesh (size check, data read), and
     the tensor saved and loaded again must give the same bytes.
   - odd: the rest written to a file and read with dt_rng_load_state:
     DT_OK or DT_ERR_IO, the state unchanged on error. */
#define _GNU_SOURCE
#ifndef DTENSOR_NO_MPI
#define DTENSOR_NO_MPI
#endif
#define DTENSOR_IMPLEMENTATION
#include "../../dtensor.h"
#include "fuzz_sim.h"
#include <unistd.h>


static char path[64], path2[64];
static dt_comm *comm;
static dt_mesh *mesh;

static void init(void) {
    dt_mesh_desc md;
    if (mesh) return;
    snprintf(path, sizeof path, "/tmp/dt_fuzz_npy_%d.npy", (int)getpid());
    snprintf(path2, sizeof path2, "/tmp/dt_fuzz_npy_%d_2.npy", (int)getpid());
    if (dt_comm_self(&comm)) FZ_FAIL("self comm");
    memset(&md, 0, sizeof md);
    md.ndim = 1;
    md.shape[0] = 1;
    if (dt_mesh_create(comm, &md, &mesh)) FZ_FAIL("mesh");
}

static void write_file(const char *p, const uint8_t *d, size_t n) {
    FILE *f = fopen(p, "wb");
    if (!f) FZ_FAIL("cannot write %s", p);
    if (n && fwrite(d, 1, n, f) != n) FZ_FAIL("short write");
    fclose(f);
}

static void check_npy(const uint8_t *data, size_t size, int load) {
    char *buf = (char *)malloc(size ? size : 1);
    dt__npy_info info;
    dt_status st;
    int d;
    memcpy(buf, data, size);
    memset(&info, 0xa5, sizeof info);
    st = dt__npy_parse_header(buf, size, &info);
    free(buf);
    if (st != DT_OK) {
        FZ_ASSERT(st == DT_ERR_IO, "parser status %d: %s", (int)st, dt_last_error());
        FZ_ASSERT(strncmp(dt_last_error(), "dt_tensor_load_npy: ", 20) == 0, "message: %s", dt_last_error());
        return;
    }
    {
        size_t n = dt_dtype_size(info.dtype);
        FZ_ASSERT(info.dtype != DT_BF16 && n > 0, "accepted dtype %d", (int)info.dtype);
        FZ_ASSERT(info.ndim >= 0 && info.ndim <= DT_MAX_DIMS, "accepted ndim %d", info.ndim);
        for (d = 0; d < info.ndim; d++) { FZ_ASSERT(info.shape[d] >= 0, "negative dim"); n *= (size_t)info.shape[d]; }
        FZ_ASSERT(n == info.data_bytes, "data_bytes %zu, numel*itemsize %zu", info.data_bytes, n);
        FZ_ASSERT(info.data_offset >= 10 && info.data_offset <= size, "data_offset %zu of %zu", info.data_offset, size);
    }
    /* the whole load path, when the data fits in the input (or is padded to it) */
    if (load && info.data_bytes <= ((size_t)1 << 16)) {
        size_t want = info.data_offset + info.data_bytes;
        uint8_t *file = (uint8_t *)calloc(want ? want : 1, 1);
        dt_tensor *t = NULL, *t2 = NULL;
        dt_placement rep[DT_MAX_MESH_DIMS];
        memcpy(file, data, want < size ? want : size);
        /* exact size, then one byte short: the size check must refuse that */
        write_file(path, file, want);
        memset(rep, 0, sizeof rep);
        st = dt_tensor_load_npy(mesh, path, rep, &t);
        FZ_ASSERT(st == DT_OK, "parser accepted, dt_tensor_load_npy refused: %s", dt_last_error());
        FZ_ASSERT(dt_tensor_get_desc(t)->dtype == info.dtype && dt_tensor_get_desc(t)->ndim == info.ndim, "loaded desc");
        FZ_ASSERT(info.data_bytes == 0 || memcmp(dt_tensor_data(t), file + info.data_offset, info.data_bytes) == 0,
                  "loaded data differ");
        st = dt_tensor_save_npy(t, path2);
        FZ_ASSERT(st == DT_OK, "save: %s", dt_last_error());
        st = dt_tensor_load_npy(mesh, path2, rep, &t2);
        FZ_ASSERT(st == DT_OK, "reload: %s", dt_last_error());
        FZ_ASSERT(info.data_bytes == 0 || memcmp(dt_tensor_data(t2), dt_tensor_data(t), info.data_bytes) == 0,
                  "round trip data differ");
        dt_tensor_destroy(t2);
        dt_tensor_destroy(t);
        t = NULL;
        if (want > 0) {
            write_file(path, file, want - 1);
            st = dt_tensor_load_npy(mesh, path, rep, &t);
            FZ_ASSERT(st == DT_ERR_IO && t == NULL, "a file one byte short loaded (status %d)", (int)st);
        }
        free(file);
    }
}

static void check_rng(const uint8_t *data, size_t size) {
    uint64_t s0, o0, s1, o1;
    dt_status st;
    dt_rng_get_state(mesh, &s0, &o0);
    write_file(path, data, size);
    st = dt_rng_load_state(mesh, path);
    dt_rng_get_state(mesh, &s1, &o1);
    if (st != DT_OK) {
        FZ_ASSERT(st == DT_ERR_IO, "dt_rng_load_state status %d: %s", (int)st, dt_last_error());
        FZ_ASSERT(s0 == s1 && o0 == o1, "state changed by a refused file");
    } else {
        /* accepted: saving it again and loading gives the same state */
        FZ_ASSERT(dt_rng_save_state(mesh, path2) == DT_OK, "save state: %s", dt_last_error());
        FZ_ASSERT(dt_rng_set_state(mesh, s0 ^ 1, o0 + 4) == DT_OK, "set state");
        FZ_ASSERT(dt_rng_load_state(mesh, path2) == DT_OK, "reload state: %s", dt_last_error());
        dt_rng_get_state(mesh, &s0, &o0);
        FZ_ASSERT(s0 == s1 && o0 == o1, "state round trip");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_quiet();
    init();
    if (size == 0) return 0;
    if (data[0] & 1) check_rng(data + 1, size - 1);
    else check_npy(data + 1, size - 1, !(data[0] & 2));
    return 0;
}
