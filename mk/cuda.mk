# mk/cuda.mk -- dtensor_cuda.h (CUDA tensors, the NCCL backend).
#
# `make cuda` needs nvcc and the libraries, not a GPU: it builds every CUDA
# program into build/cuda/ and runs dtensor_cuda.h's strictness builds.
# test-cuda and bench-cuda run them, on a GPU. Everything is compiled with
# NVFLAGS: nvcc's own warnings and the host compiler's -Wall -Wextra are
# errors (NVSTRICT, as in `strict`), for CUDA_ARCH. The programs are built
# against $(MPI) (the -I, -L and -l flags of `mpicc.$(MPI) -show`; its -Wl
# flags are gcc's, not nvcc's) and link NCCL, cuBLAS, cuRAND and the CUDA
# runtime, with an rpath to $(CUDA_HOME)/lib64 so that they run without
# LD_LIBRARY_PATH. build/cuda/ holds one MPI's builds: `make clean` when
# switching MPI. Programs: tests/NAME.cu, tests/test_device.c (as CUDA, with
# -DDT_TEST_CUDA), bench/cuda.cu (bench_cuda) and examples/NAME.cu.
CUDA_ARCH     ?= sm_90
CUDABENCHARGS ?=
NVFLAGS    = $(NVSTRICT) -arch=$(CUDA_ARCH) -O2 -g
CUDA_LIBS  = -L$(CUDA_HOME)/lib64 -Xlinker -rpath=$(CUDA_HOME)/lib64 -lnccl -lcublas -lcurand -lcudart
MPI_SHOW   = $(shell mpicc.$(MPI) -show 2>/dev/null)
CB         = build/cuda
CUDA_HDR   = dtensor.h dtensor_cuda.h dtensor_layers.h
CU_BUILD   = $(NVCC) $(NVFLAGS) -I. $(filter -I%,$(MPI_SHOW))
CU_LINK    = $(CUDA_LIBS) $(filter -L% -l%,$(MPI_SHOW)) $(LDLIBS)
CUDA_PROGS = $(patsubst tests/%.cu,$(CB)/%,$(wildcard tests/*.cu)) \
             $(if $(wildcard tests/test_device.c),$(CB)/test_device) \
             $(if $(wildcard bench/cuda.cu),$(CB)/bench_cuda) \
             $(patsubst examples/%.cu,$(CB)/%,$(wildcard examples/*.cu))

.PHONY: cuda cuda-nvcc cuda-strict test-cuda bench-cuda
cuda: cuda-nvcc cuda-strict $(CUDA_PROGS) ## every CUDA program into build/cuda/ and dtensor_cuda.h's strict builds (nvcc; no GPU needed)
	@echo "cuda: OK ($(notdir $(CUDA_PROGS)))"

# the toolkit is promised wherever this runs: no nvcc is an error, not a skip
cuda-nvcc:
	@if [ -z "$(NVCC)" ]; then echo "cuda: nvcc not found (CUDA_HOME=$(CUDA_HOME), PATH)"; exit 1; fi

$(CB)/%: tests/%.cu tests/dt_test.h $(CUDA_HDR) | cuda-nvcc
	@mkdir -p $(CB)
	$(CU_BUILD) -o $@ $< $(CU_LINK)

$(CB)/test_device: tests/test_device.c tests/dt_test.h $(CUDA_HDR) | cuda-nvcc
	@mkdir -p $(CB)
	$(CU_BUILD) -x cu -DDT_TEST_CUDA -o $@ $< $(CU_LINK)

$(CB)/bench_cuda: bench/cuda.cu bench/bench.h $(CUDA_HDR) | cuda-nvcc
	@mkdir -p $(CB)
	$(CU_BUILD) -o $@ $< $(CU_LINK)

$(CB)/%: examples/%.cu $(CUDA_HDR) | cuda-nvcc
	@mkdir -p $(CB)
	$(CU_BUILD) -o $@ $< $(CU_LINK)

# dtensor_cuda.h as `strict` checks dtensor.h: the implementation (without
# MPI: linked and run; with MPICH: compiled), the declarations only, then
# nvcc's preprocessed host code (-cuda) through g++ -pedantic (see mk/lint.mk
# for why -pedantic cannot go through -Xcompiler). Kernels become host-side
# launch stubs in that output, so the pedantic pass sees the host half of
# the device code too. One target per build: make -j2 runs two at once.
CS = $(CB)/strict
CUDA_STRICT = nompi.run mpi.o decl.o nompi_ii.o mpi_ii.o decl_ii.o
CS_SRC = $(if $(filter decl,$1),tests/lint/decl_cuda.cu,tests/lint/impl_cuda.cu)
CS_DEF = $(if $(filter nompi,$1),-DDTENSOR_NO_MPI,$(MPICH_INC))
cuda-strict: $(addprefix $(CS)/,$(CUDA_STRICT))
	@echo "cuda-strict: OK"
$(CS)/nompi.run: $(CUDA_HDR) tests/lint/impl_cuda.cu | cuda-nvcc
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -DDTENSOR_NO_MPI -I. -o $(CS)/nompi tests/lint/impl_cuda.cu $(CUDA_LIBS) $(LDLIBS) && ./$(CS)/nompi && touch $@
$(CS)/%_ii.o: $(CUDA_HDR) tests/lint/impl_cuda.cu tests/lint/decl_cuda.cu | cuda-nvcc
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) $(call CS_DEF,$*) -I. -cuda -o $(CS)/$*.ii $(call CS_SRC,$*)
	g++ -std=c++17 $(STRICT) -c -o $@ $(CS)/$*.ii
$(CS)/%.o: $(CUDA_HDR) tests/lint/impl_cuda.cu tests/lint/decl_cuda.cu | cuda-nvcc
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) $(MPICH_INC) -I. -c -o $@ $(call CS_SRC,$*)

# on a GPU machine: tests/run_cuda.sh runs what `make cuda` built; exit 77
# ("no device, SKIPPED") is a failure here. Last line: N passed, N failed.
test-cuda: cuda ## on a GPU: the CUDA tests (tests/run_cuda.sh) and bench_cuda once
	CUDABENCHARGS='$(CUDABENCHARGS)' bash tests/run_cuda.sh $(MPI)

bench-cuda: $(CB)/bench_cuda ## on a GPU: build/cuda/bench_cuda $(CUDABENCHARGS)
	./$(CB)/bench_cuda $(CUDABENCHARGS)
