# mk/build.mk -- the examples and the demo.
#
# Every program of a configuration links one implementation object,
# $(BUILD)/dtensor.o (dtensor.h compiled once with DTENSOR_IMPLEMENTATION and
# CFLAGS), and the layers' (dtensor_layers.h alone, with
# DTENSOR_LAYERS_IMPLEMENTATION); the programs themselves still define
# DTENSOR_IMPLEMENTATION as a user's single-file program does, and are
# compiled with DTENSOR_IMPLEMENTATION_LINKED, which makes the headers ignore it.

EXAMPLES = $(patsubst examples/%.c,$(BUILD)/%,$(wildcard examples/*.c))
LINKED   = -DDTENSOR_IMPLEMENTATION_LINKED

# per-example flags: EXFLAGS_NAME, EXLIBS_NAME. pencil compares with FFTW-MPI's
# transpose, which Debian builds against Open MPI only (libfftw3-mpi-dev):
# under MPICH, or without the package, pencil runs its dtensor part alone.
ifeq ($(MPI)$(wildcard /usr/include/fftw3-mpi.h),openmpi/usr/include/fftw3-mpi.h)
EXFLAGS_pencil = -DHAVE_FFTW_MPI
EXLIBS_pencil  = -lfftw3_mpi -lfftw3
endif
# scalapack calls ScaLAPACK (pdgemm, pdgetrf/pdgetrs) on the tensors' own buffers
EXLIBS_scalapack = -lscalapack-$(MPI)

.PHONY: examples demo
examples: $(EXAMPLES) ## build every examples/NAME.c into build/$(MPI)/NAME

$(BUILD)/dtensor.o: dtensor.h
	@mkdir -p $(@D)
	$(MPICC) -std=c99 $(WARN) $(CFLAGS) -x c -DDTENSOR_IMPLEMENTATION -c -o $@ $<

$(BUILD)/dtensor_layers.o: $(LHDR) $(HDR)
	@mkdir -p $(@D)
	$(MPICC) -std=c99 $(WARN) $(CFLAGS) -x c -DDTENSOR_LAYERS_IMPLEMENTATION -c -o $@ $<

$(BUILD)/%: examples/%.c $(BUILD)/dtensor.o $(BUILD)/dtensor_layers.o
	$(MPICC) -std=c99 $(WARN) $(CFLAGS) $(LINKED) $(EXFLAGS_$*) -I. -o $@ $< $(BUILD)/dtensor.o $(BUILD)/dtensor_layers.o $(EXLIBS_$*) $(LDLIBS)

run-%: $(BUILD)/% ## run-NAME NP=4 ARGS=...: build and run one example (its arguments: the top of examples/NAME.c)
	$(BENCH_ENV) $(MPIEXEC) -n $(NP) ./$(BUILD)/$* $(ARGS)

# each example's whole output goes to build/$(MPI)/demo/NAME.log
demo: examples ## every example at NP ranks (default 4), each checking its result, and a short report
	@$(BENCH_ENV) bash examples/demo.sh --mpi $(MPI) --np $(NP) --bin $(BUILD)

# Fortran (dtensor.f90, `use dtensor`): the module compiled once per MPI with
# its mpif90 into $(BUILD)/fortran/ (dtensor.mod, dtensor.o), and each
# examples/NAME.f90 into $(BUILD)/NAME_f, linked with the C implementation
# object above: the module holds no logic, only the bindings.
MPIFC      = mpif90.$(MPI)
FFLAGS    ?= -O2 -g
FSTRICT    = -std=f2008 -Wall -Werror
FMOD       = $(BUILD)/fortran
F_EXAMPLES = $(patsubst examples/%.f90,$(BUILD)/%_f,$(wildcard examples/*.f90))
examples: $(F_EXAMPLES)

$(FMOD)/dtensor.o: dtensor.f90
	@mkdir -p $(@D)
	$(MPIFC) $(FSTRICT) $(FFLAGS) -J $(@D) -c -o $@ $<

$(BUILD)/%_f: examples/%.f90 $(FMOD)/dtensor.o $(BUILD)/dtensor.o
	$(MPIFC) $(FSTRICT) $(FFLAGS) -I$(FMOD) -o $@ $< $(FMOD)/dtensor.o $(BUILD)/dtensor.o $(LDLIBS)
