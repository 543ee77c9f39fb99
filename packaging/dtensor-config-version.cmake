# dtensor-config-version.cmake -- the version is read from the installed
# dtensor.h (DTENSOR_VERSION_MAJOR/MINOR/PATCH), never written twice.
# Compatible: the same major version and at least the requested one; while
# the major version is 0, the same minor version too (0.x releases may change
# the ABI).
get_filename_component(_dtensor_h "${CMAKE_CURRENT_LIST_DIR}/../../../include/dtensor.h" ABSOLUTE)
file(STRINGS "${_dtensor_h}" _dtensor_v REGEX "^#define DTENSOR_VERSION_(MAJOR|MINOR|PATCH) +[0-9]+")
string(REGEX REPLACE ".*MAJOR +([0-9]+).*" "\\1" _dtensor_major "${_dtensor_v}")
string(REGEX REPLACE ".*MINOR +([0-9]+).*" "\\1" _dtensor_minor "${_dtensor_v}")
string(REGEX REPLACE ".*PATCH +([0-9]+).*" "\\1" _dtensor_patch "${_dtensor_v}")
set(PACKAGE_VERSION "${_dtensor_major}.${_dtensor_minor}.${_dtensor_patch}")
set(PACKAGE_VERSION_COMPATIBLE FALSE)
set(PACKAGE_VERSION_EXACT FALSE)
if(NOT PACKAGE_FIND_VERSION OR
   (PACKAGE_FIND_VERSION_MAJOR EQUAL _dtensor_major AND
    (_dtensor_major GREATER 0 OR PACKAGE_FIND_VERSION_MINOR EQUAL _dtensor_minor) AND
    NOT PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION))
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
endif()
if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
  set(PACKAGE_VERSION_EXACT TRUE)
endif()
unset(_dtensor_h)
unset(_dtensor_v)
unset(_dtensor_major)
unset(_dtensor_minor)
unset(_dtensor_patch)
