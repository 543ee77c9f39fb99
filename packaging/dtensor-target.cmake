# packaging/dtensor-target.cmake -- the dtensor::dtensor INTERFACE target,
# shared by the installed package (dtensor-config.cmake) and the repository's
# CMakeLists.txt (add_subdirectory / FetchContent). Expects
# _dtensor_include_dir (where dtensor.h is). Options, set before
# find_package(dtensor) / add_subdirectory:
#   DTENSOR_NO_MPI  ON: no MPI (DTENSOR_NO_MPI defined for every file, the
#                   self and custom backends only); OFF (default):
#                   find_package(MPI COMPONENTS C), links MPI::MPI_C (a
#                   C++-only project: MPI::MPI_CXX, MPI_CXX_SKIP_MPICXX)
#   DTENSOR_BLAS    blis (default): find_library(blis) and blis.h (also under
#                   include/blis/), links it; none: defines DTENSOR_NO_BLIS
#                   (the built-in GEMM loops) and links no BLAS
# The options become compile definitions of the target, so every file that
# links it agrees (dtensor.h's ABI check makes a file that does not fail to
# link).
if(TARGET dtensor::dtensor)
  return()
endif()
option(DTENSOR_NO_MPI "dtensor: build without MPI (DTENSOR_NO_MPI)" OFF)
set(DTENSOR_BLAS "blis" CACHE STRING "dtensor: the local GEMM's BLAS: blis or none")
set_property(CACHE DTENSOR_BLAS PROPERTY STRINGS blis none)

set(_dtensor_libs "")
set(_dtensor_defs "")
set(_dtensor_incs "${_dtensor_include_dir}")
if(DTENSOR_NO_MPI)
  list(APPEND _dtensor_defs DTENSOR_NO_MPI)
else()
  # MPI's C bindings; a project that enables only C++ gets MPI::MPI_CXX
  # without MPI's C++ bindings (FindMPI needs the language enabled)
  get_property(_dtensor_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  include(CMakeFindDependencyMacro)
  if(NOT "C" IN_LIST _dtensor_langs AND "CXX" IN_LIST _dtensor_langs)
    if(NOT DEFINED MPI_CXX_SKIP_MPICXX)
      set(MPI_CXX_SKIP_MPICXX ON)
    endif()
    find_dependency(MPI COMPONENTS CXX)
    list(APPEND _dtensor_libs MPI::MPI_CXX)
  else()
    find_dependency(MPI COMPONENTS C)
    list(APPEND _dtensor_libs MPI::MPI_C)
  endif()
  unset(_dtensor_langs)
endif()
if(DTENSOR_BLAS STREQUAL "none")
  list(APPEND _dtensor_defs DTENSOR_NO_BLIS)
elseif(DTENSOR_BLAS STREQUAL "blis")
  find_library(DTENSOR_BLIS_LIBRARY NAMES blis blis-mt)
  find_path(DTENSOR_BLIS_INCLUDE_DIR blis.h PATH_SUFFIXES blis)
  if(NOT DTENSOR_BLIS_LIBRARY OR NOT DTENSOR_BLIS_INCLUDE_DIR)
    set(dtensor_FOUND FALSE)
    set(dtensor_NOT_FOUND_MESSAGE
        "dtensor: BLIS not found (libblis: ${DTENSOR_BLIS_LIBRARY}, blis.h: ${DTENSOR_BLIS_INCLUDE_DIR}); "
        "install it (Debian: libblis-dev), point CMAKE_PREFIX_PATH at it, or set DTENSOR_BLAS=none")
    if(NOT DEFINED CMAKE_FIND_PACKAGE_NAME)
      message(FATAL_ERROR "${dtensor_NOT_FOUND_MESSAGE}")
    endif()
    return()
  endif()
  list(APPEND _dtensor_libs "${DTENSOR_BLIS_LIBRARY}")
  list(APPEND _dtensor_incs "${DTENSOR_BLIS_INCLUDE_DIR}")
else()
  message(FATAL_ERROR "dtensor: DTENSOR_BLAS is '${DTENSOR_BLAS}'; use blis or none")
endif()
find_library(DTENSOR_M_LIBRARY m)
if(DTENSOR_M_LIBRARY)
  list(APPEND _dtensor_libs "${DTENSOR_M_LIBRARY}")
endif()

# GLOBAL from add_subdirectory (visible to the parent project); the
# package's imported target is local to the find_package caller's directory
add_library(dtensor::dtensor INTERFACE IMPORTED ${_dtensor_global})
foreach(_dtensor_mpi MPI::MPI_C MPI::MPI_CXX)
  if(_dtensor_global AND TARGET ${_dtensor_mpi})
    get_target_property(_dtensor_mpi_global ${_dtensor_mpi} IMPORTED_GLOBAL)
    if(NOT _dtensor_mpi_global)
      set_target_properties(${_dtensor_mpi} PROPERTIES IMPORTED_GLOBAL TRUE)
    endif()
  endif()
endforeach()
unset(_dtensor_mpi)
unset(_dtensor_mpi_global)
set_target_properties(dtensor::dtensor PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${_dtensor_incs}"
  INTERFACE_COMPILE_DEFINITIONS "${_dtensor_defs}"
  INTERFACE_LINK_LIBRARIES "${_dtensor_libs}")
unset(_dtensor_libs)
unset(_dtensor_defs)
unset(_dtensor_incs)
