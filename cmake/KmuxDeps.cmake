# cmake/KmuxDeps.cmake - Criterion (the test suite) and jansson (kmux-bench, kmux-info, kmux-check,
# the fuzz targets) as the imported targets kmux::criterion and kmux::jansson, found once for the
# whole build:
#   1. through pkg-config where it is installed (Debian's libcriterion-dev, libjansson-dev);
#   2. else by find_path/find_library, which search CMAKE_PREFIX_PATH and the system (the GPU
#      machine has no pkg-config: tests/gpu/run.sh puts the folders of tests/gpu/bundle_deps.sh
#      in CMAKE_PREFIX_PATH).
# A dependency not found leaves its target undefined and prints
#   "kmux: <name> NOT FOUND (...)"
# (tests/gpu/run.sh reads that line); the folders that need it decide whether that is an error
# (kmux_require_dep) or a part not built.

# kmux_find_dep(<name> <header> <library>): defines kmux::<name> when found.
function(kmux_find_dep name header lib)
  if(TARGET kmux::${name})
    return()
  endif()
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(KMUX_PC_${name} QUIET IMPORTED_TARGET GLOBAL ${name})
  endif()
  if(TARGET PkgConfig::KMUX_PC_${name})
    add_library(kmux::${name} ALIAS PkgConfig::KMUX_PC_${name})
    message(STATUS "kmux: ${name} ${KMUX_PC_${name}_VERSION} (pkg-config)")
    return()
  endif()
  find_path(KMUX_${name}_INCLUDE_DIR ${header} DOC "Folder of ${header} (${name})")
  find_library(KMUX_${name}_LIBRARY ${lib} DOC "The ${name} library")
  if(NOT KMUX_${name}_INCLUDE_DIR OR NOT KMUX_${name}_LIBRARY)
    message(STATUS "kmux: ${name} NOT FOUND (no pkg-config module ${name}; ${header}: "
                   "${KMUX_${name}_INCLUDE_DIR}, lib${lib}: ${KMUX_${name}_LIBRARY}; searched "
                   "CMAKE_PREFIX_PATH='${CMAKE_PREFIX_PATH}' and the system)")
    return()
  endif()
  add_library(kmux::${name} UNKNOWN IMPORTED GLOBAL)
  get_filename_component(_dir "${KMUX_${name}_LIBRARY}" DIRECTORY)
  # the libraries it needs in turn lie beside it in a carried bundle: the linker looks there too
  set_target_properties(kmux::${name} PROPERTIES
    IMPORTED_LOCATION "${KMUX_${name}_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${KMUX_${name}_INCLUDE_DIR}"
    INTERFACE_LINK_OPTIONS "LINKER:-rpath-link,${_dir}")
  message(STATUS "kmux: ${name} ${KMUX_${name}_LIBRARY} (${KMUX_${name}_INCLUDE_DIR}/${header})")
endfunction()

# kmux_require_dep(<name> <what>): a configure error naming <what> needs it when it is missing.
function(kmux_require_dep name what)
  if(NOT TARGET kmux::${name})
    message(FATAL_ERROR "kmux: ${name} NOT FOUND, and ${what} needs it (Debian: apt install "
                        "lib${name}-dev; without pkg-config: CMAKE_PREFIX_PATH=<its prefix>)")
  endif()
endfunction()

kmux_find_dep(criterion criterion/criterion.h criterion)
kmux_find_dep(jansson jansson.h jansson)
