# Debian packages: `cpack -G DEB` in the build folder writes three packages, split the way Debian
# splits a library (the install components of cmake/KmuxInstall.cmake):
#   libkmux<major>  libkmux.so.<major> and the plugins in <libdir>/kmux   (section libs)
#   libkmux-dev     headers, libkmux.so, the CMake package, kmux.pc        (section libdevel)
#   kmux-tools      kmux-info, kmux-bench, kmux-check, kmux-support-matrix (section science)
# Dependencies are computed: dpkg-shlibdeps from what each file links (libc, libgomp; the tools
# jansson), and, for the libraries the CPU plugins open at run time by SONAME (OpenBLAS, oneDNN:
# no NEEDED entry for dpkg-shlibdeps to see), the package that owns the library the build found
# (dpkg-query -S). The CUDA and HIP plugins open their vendor libraries at run time and depend on
# nothing: a machine without a GPU stack installs them and they say why they offer no device.
# -dev and -tools depend on the exact runtime version. tests/install/test_deb.sh checks them.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kmux)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "kmux")
set(CPACK_PACKAGE_CONTACT "kmux developers <kmux@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "one C API for GEMM, convolution and mixed precision over CUDA, HIP, oneDNN and OpenBLAS")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev tools)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)   # <name>_<version>_<arch>.deb

set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libkmux.so.<major> is not in any installed package while the tools are packaged: dpkg-shlibdeps
# finds it in the build tree (CPack passes --ignore-missing-info) and the dependency on the
# runtime package comes from the component dependency below instead.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_LIBRARY_OUTPUT_DIRECTORY})
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)   # "libkmux0 (= 0.1.0)"

set(_kmux_opened_deps "")
get_property(_kmux_opened GLOBAL PROPERTY KMUX_RUNTIME_OPENED_LIBS)
find_program(KMUX_DPKG_QUERY dpkg-query)
foreach(_lib IN LISTS _kmux_opened)
  get_filename_component(_real "${_lib}" REALPATH)
  set(_pkg "")
  if(KMUX_DPKG_QUERY AND EXISTS "${_real}")
    execute_process(COMMAND ${KMUX_DPKG_QUERY} -S "${_real}" OUTPUT_VARIABLE _owner
                    ERROR_QUIET RESULT_VARIABLE _rc)
    if(_rc EQUAL 0 AND _owner MATCHES "^([a-z0-9][a-z0-9+.-]*)(:[a-z0-9]+)?: ")
      set(_pkg "${CMAKE_MATCH_1}")
    endif()
  endif()
  if(_pkg)
    list(APPEND _kmux_opened_deps "${_pkg}")
  else()
    message(STATUS "kmux: package dependency for ${_lib} unknown (no dpkg package owns ${_real})")
  endif()
endforeach()
list(REMOVE_DUPLICATES _kmux_opened_deps)
string(REPLACE ";" ", " CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "${_kmux_opened_deps}")

set(_kmux_runtime_pkg libkmux${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${_kmux_runtime_pkg})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_GENERATE_SHLIBS ON)   # a shlibs file for packages linking it
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "kmux runtime: libkmux and its backend plugins (ref built in; OpenBLAS, oneDNN, CUDA and HIP as built)")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libkmux-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "kmux development files: kmux.h, kmux_backend.h, the CMake package (kmux::kmux) and kmux.pc")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME kmux-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION science)
set(CPACK_COMPONENT_TOOLS_DEPENDS runtime)
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "kmux tools: kmux-info, kmux-bench (cross-backend benchmark), kmux-check (GPU stack readiness)")

include(CPack)
