# dtensor.h -- build, test, benchmark, install. `make help` lists every
# target with one line each; the recipes live in mk/*.mk by concern:
#   mk/build.mk    the examples and the demo          mk/test.mk     the test suite, make check
#   mk/bench.mk    the benchmarks (into build/)       mk/cuda.mk     dtensor_cuda.h (nvcc)
#   mk/lint.mk     strict builds, static analysis     mk/install.mk  install, packaging tests
#   mk/standin.mk  the CUDA tests on the CPU stand-in (tests/standin/)
# Nothing here writes outside build/ except `make install` and `make bench-publish`.

MPI     ?= mpich
NP      ?= 4
CFLAGS  ?= -O2 -g
LDLIBS  ?= -lblis -lm
ARGS    ?=

MPICC   = mpicc.$(MPI)
MPICXX  = mpicxx.$(MPI)
MPIEXEC = mpiexec.$(MPI)$(if $(filter openmpi,$(MPI)), --allow-run-as-root --oversubscribe)
BUILD   = build/$(MPI)
HDR     = dtensor.h
LHDR    = dtensor_layers.h
WARN    = -Wall -Wextra -pedantic
STRICT  = -Wall -Wextra -Werror -pedantic
# one core per rank: BLIS (Debian installs its OpenMP build first) and OpenMP single-threaded
BENCH_ENV = BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1
# the CUDA toolkit (mk/cuda.mk; make strict's nvcc builds too)
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(firstword $(wildcard $(CUDA_HOME)/bin/nvcc) $(shell command -v nvcc 2>/dev/null))
NVSTRICT   = -std=c++17 -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.PHONY: all help deps clean

all: examples ## build every example (build/$(MPI)/NAME)

MK = mk/build.mk mk/test.mk mk/standin.mk mk/lint.mk mk/cuda.mk mk/bench.mk mk/install.mk
include $(MK)

help: ## this list (variables: MPI=mpich|openmpi NP ARGS CFLAGS LDLIBS TESTARGS; see each mk/*.mk)
	@for f in Makefile $(MK); do awk -F':.*## ' -v f=$$f 'FNR == 1 && f != "Makefile" { print f ":" } \
	  /^[a-zA-Z$$][^ :=]*:.*## / { printf "  make %-24s %s\n", $$1, $$2 }' $$f; done

deps: ## install what building and testing need (Debian/Ubuntu, as root; mk/deps.sh)
	@bash mk/deps.sh

clean: ## remove build/
	rm -rf build
