# mk/standin.mk -- dtensor_cuda.h's host code on the CPU, where CI runs.
#
# The CUDA programs are built with g++ against tests/standin/: a stand-in
# for the CUDA runtime (device memory the host cannot touch, kernels run on
# the CPU), NCCL (over MPI) and cuBLAS -- see tests/standin/cuda_runtime.h.
# No GPU and no toolkit. A test takes part when its TEST block has a
# "standin:" line (its value: extra compiler flags, or "yes"); it builds
# into $(TB)/standin/ in the configuration's variant (asan too), and
# tests/run.sh runs it as standin_NAME at the rank counts of its block.
STANDIN_SRCS := $(shell grep -l '^ *standin:' $(wildcard tests/test_*.c tests/test_*.cu))
STANDIN_BINS  = $(foreach f,$(STANDIN_SRCS),$(TB)/standin/$(basename $(notdir $(f))))
STANDIN_DEPS  = $(wildcard tests/standin/*.h) tests/dt_test.h dtensor.h dtensor_cuda.h
STANDIN_CXX   = -x c++ -std=c++17 -O1 -g $(STRICT) -I tests/standin -I. $(if $(filter asan,$(VARIANT)),$(SAN_FLAGS))
# a source's "standin:" flags and whether its block says nompi (then g++, no MPI)
standin_spec  = $(shell sed -n '1,/\*\//s/^ *$2: *//p' $1 | head -n 1)
STANDIN_CC    = $(if $(findstring nompi,$(call standin_spec,$<,needs)),g++ -DDTENSOR_NO_MPI,$(MPICXX) $(if \
                $(filter openmpi,$(MPI)),-DOMPI_SKIP_MPICXX=1))
STANDIN_BUILD = $(STANDIN_CC) $(STANDIN_CXX) $(filter-out yes,$(call standin_spec,$<,standin)) -o $@ $< -x none \
                $(LDLIBS) >$(TB)/logs/standin_$(@F).build.log 2>&1 || { sed -n 1,20p $(TB)/logs/standin_$(@F).build.log; exit 1; }

.PHONY: standin
standin: $(STANDIN_BINS) ## the CUDA tests built on the CPU stand-in (tests/standin/) for this configuration
	@echo "standin: OK ($(notdir $(STANDIN_BINS)))"

$(TB)/standin/%: tests/%.cu $(STANDIN_DEPS) | $(TB)/logs
	@mkdir -p $(@D)
	$(STANDIN_BUILD)

$(TB)/standin/%: tests/%.c $(STANDIN_DEPS) | $(TB)/logs
	@mkdir -p $(@D)
	$(STANDIN_BUILD)
