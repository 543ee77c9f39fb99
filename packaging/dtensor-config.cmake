# dtensor-config.cmake -- find_package(dtensor) (installed by `make install`
# into <prefix>/lib/cmake/dtensor/). Gives the INTERFACE target
# dtensor::dtensor: dtensor.h's include dir, MPI::MPI_C and BLIS.
#   set(DTENSOR_NO_MPI ON)    # optional: no MPI
#   set(DTENSOR_BLAS none)    # optional: no BLAS (blis: the default)
#   find_package(dtensor 0.6 REQUIRED)
#   target_link_libraries(app PRIVATE dtensor::dtensor)
# One file of the program defines DTENSOR_IMPLEMENTATION before including
# dtensor.h (see its top), or the program links dtensor::impl instead (the
# implementation compiled once: libdtensor.a, installed by make install):
#   target_link_libraries(app PRIVATE dtensor::impl) The package is relocatable: the include dir is
# found from this file's place, <prefix>/lib/cmake/dtensor/.
get_filename_component(_dtensor_include_dir "${CMAKE_CURRENT_LIST_DIR}/../../../include" ABSOLUTE)
set(_dtensor_global "")
get_filename_component(_dtensor_impl_archive "${CMAKE_CURRENT_LIST_DIR}/../../libdtensor.a" ABSOLUTE)
include("${CMAKE_CURRENT_LIST_DIR}/dtensor-target.cmake")
unset(_dtensor_include_dir)
unset(_dtensor_global)
unset(_dtensor_impl_archive)
