# mk/install.mk -- make install and the packaging tests.
#
# make install PREFIX=... DESTDIR=...: the headers (dtensor.h, dtensor_cuda.h,
# dtensor_layers.h) and the Fortran module's source dtensor.f90 (compiled by the
# application with its mpif90: .mod files are compiler-specific), the compiled
# library libdtensor.a and libdtensor.so (dtensor.h's and the layers'
# implementations, compiled once with $(MPI)'s mpicc and CFLAGS: for
# applications that do not compile the implementation themselves; header-only
# stays the default), pkg-config files and the CMake package (packaging/).
# The version comes from dtensor.h's
# DTENSOR_VERSION_MAJOR/MINOR/PATCH lines, nowhere else. dtensor-lib.pc gives
# -ldtensor (libdtensor.so) with -Wl,-rpath,${libdir}, so its programs start
# without LD_LIBRARY_PATH, and names the archive (variable archive). dtensor.pc gives
# -I and BLIS (-lblis -lm; variable blas_libs) and is used with mpicc, which
# adds MPI's flags; dtensor-mpich.pc / dtensor-openmpi.pc add MPICH's / Open
# MPI's own .pc for a plain compiler. dtensor-config.cmake: options
# DTENSOR_NO_MPI and DTENSOR_BLAS=blis|none (packaging/dtensor-target.cmake).
PREFIX  ?= /usr/local
DESTDIR ?=
DT_VERSION := $(shell awk '/^\#define DTENSOR_VERSION_(MAJOR|MINOR|PATCH) /{v = v sep $$3; sep = "."} END {print v}' dtensor.h)
INST_INC   = $(DESTDIR)$(PREFIX)/include
INST_LIB   = $(DESTDIR)$(PREFIX)/lib
INST_PC    = $(DESTDIR)$(PREFIX)/lib/pkgconfig
INST_CMAKE = $(DESTDIR)$(PREFIX)/lib/cmake/dtensor
CMAKE_PKG  = dtensor-config.cmake dtensor-config-version.cmake dtensor-target.cmake
PC_SED     = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(DT_VERSION)|g'

.PHONY: lib shared install uninstall test-install test-abi test-threads
lib: $(BUILD)/libdtensor.a ## the compiled library build/<mpi>/libdtensor.a: dtensor.h's and the layers' implementations, one archive

$(BUILD)/libdtensor.a: $(BUILD)/dtensor.o $(BUILD)/dtensor_layers.o
	rm -f $@
	ar rcs $@ $^

# the shared library: the same implementations compiled position-independent
# (objects of their own: -fPIC's TLS model would slow the static build's
# error buffer), linked with the BLAS and libm (MPI comes from mpicc)
$(BUILD)/pic/%.o: %.h $(HDR)
	@mkdir -p $(@D)
	$(MPICC) -std=c99 $(WARN) $(CFLAGS) -fPIC -x c -D$(if $(filter dtensor_layers,$*),DTENSOR_LAYERS_IMPLEMENTATION,DTENSOR_IMPLEMENTATION) -c -o $@ $<

$(BUILD)/libdtensor.so: $(BUILD)/pic/dtensor.o $(BUILD)/pic/dtensor_layers.o
	$(MPICC) -shared -Wl,-soname,libdtensor.so -o $@ $^ $(LDLIBS)

shared: $(BUILD)/libdtensor.so ## the shared library build/<mpi>/libdtensor.so (the same implementations, -fPIC)

install: $(BUILD)/libdtensor.a $(BUILD)/libdtensor.so ## the headers, dtensor.f90, libdtensor.a and .so (MPI=mpich), pkg-config files and CMake package into PREFIX (/usr/local), DESTDIR honoured
	@test -n "$(DT_VERSION)" || { echo "install: no version in dtensor.h"; exit 1; }
	install -d $(INST_INC) $(INST_LIB) $(INST_PC) $(INST_CMAKE)
	install -m 644 dtensor.h dtensor_cuda.h dtensor_layers.h dtensor.f90 $(INST_INC)/
	install -m 644 $(BUILD)/libdtensor.a $(INST_LIB)/
	install -m 755 $(BUILD)/libdtensor.so $(INST_LIB)/
	$(PC_SED) packaging/dtensor.pc.in > $(INST_PC)/dtensor.pc
	$(PC_SED) -e 's|@MPI@|$(MPI)|g' packaging/dtensor-lib.pc.in > $(INST_PC)/dtensor-lib.pc
	$(PC_SED) -e 's|@MPI@|mpich|g' -e 's|@MPIPC@|mpich|g' packaging/dtensor-mpi.pc.in > $(INST_PC)/dtensor-mpich.pc
	$(PC_SED) -e 's|@MPI@|openmpi|g' -e 's|@MPIPC@|ompi-c|g' packaging/dtensor-mpi.pc.in > $(INST_PC)/dtensor-openmpi.pc
	install -m 644 $(addprefix packaging/,$(CMAKE_PKG)) $(INST_CMAKE)/
	@echo "install: dtensor $(DT_VERSION) into $(DESTDIR)$(PREFIX)"

uninstall: ## remove what make install put into PREFIX
	rm -f $(INST_INC)/dtensor.h $(INST_INC)/dtensor_cuda.h $(INST_INC)/dtensor_layers.h $(INST_INC)/dtensor.f90 \
	      $(INST_LIB)/libdtensor.a $(INST_LIB)/libdtensor.so \
	      $(addprefix $(INST_PC)/,dtensor.pc dtensor-lib.pc dtensor-mpich.pc dtensor-openmpi.pc) \
	      $(addprefix $(INST_CMAKE)/,$(CMAKE_PKG))
	-rmdir $(INST_CMAKE)

test-install: ## install into a temporary prefix; a consumer via pkg-config, find_package, add_subdirectory, FetchContent
	bash tests/install/run.sh

test-abi: ## files built with another DT_MAX_DIMS / DT_MAX_MESH_DIMS / DTENSOR_NO_MPI fail to link (tests/abi)
	bash tests/abi/run.sh $(MPI)

test-threads: ## dt_comm_mpi's MPI state and thread-level checks (tests/test_threads.c) at 1 and 2 ranks
	DT_TESTS=test_threads bash tests/run.sh $(MPI) --np "1 2"
