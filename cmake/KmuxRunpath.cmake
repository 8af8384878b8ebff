# Run-time search paths (RUNPATH) of everything kmux installs, set in one place: every program,
# library and plugin that install(TARGETS) copies goes through kmux_install_program or
# kmux_install_rpath.
#
# An installed program finds libkmux relative to itself ($ORIGIN/../lib: prefix/bin ->
# prefix/lib), so that a prefix, even a moved one, runs without LD_LIBRARY_PATH.
#
# Each installed target is linked with its install RUNPATH already (BUILD_WITH_INSTALL_RPATH), in
# the build tree too. Otherwise CMake links the build-tree copy with the build RUNPATH and a
# trailing ':' (more of them where the install RUNPATH is longer: room to rewrite it in place at
# install), and an empty element of a RUNPATH is the current directory to the loader:
# ./build/bin/kmux-bench started from a folder holding a libjansson.so.4 would load that one.
# The build tree's bin/ and lib/ are siblings as in the install tree, so one $ORIGIN path serves
# both; where the install layout differs (a CMAKE_INSTALL_LIBDIR of lib/<multiarch>), the build
# tree's own relative path is added after it. tests/install/test_runpath.sh checks both trees.

# $ORIGIN-based path from the programs' folder to the libraries' folder, installed and built.
file(RELATIVE_PATH _kmux_bin_to_lib ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
file(RELATIVE_PATH _kmux_build_bin_to_lib ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}
     ${CMAKE_LIBRARY_OUTPUT_DIRECTORY})
set(KMUX_PROGRAM_RPATH "$ORIGIN/${_kmux_bin_to_lib}")
if(NOT _kmux_build_bin_to_lib STREQUAL _kmux_bin_to_lib)
  list(APPEND KMUX_PROGRAM_RPATH "$ORIGIN/${_kmux_build_bin_to_lib}")
endif()

# kmux_install_rpath(target): an installed library or plugin has the same RUNPATH in the build
# and the install tree: its INSTALL_RPATH (none unless the target sets one, e.g. kmux-cuda's
# cuBLASLt and cuDNN folders), never the build tree's padded one.
function(kmux_install_rpath tgt)
  set_target_properties(${tgt} PROPERTIES BUILD_WITH_INSTALL_RPATH ON)
endfunction()

# kmux_install_program(target): installs an executable to <bindir> with RUNPATH
# $ORIGIN/../<libdir>, plus the folders outside the project of the libraries it links (a
# jansson outside the loader's default path), in the build and the install tree alike.
function(kmux_install_program tgt)
  set_target_properties(${tgt} PROPERTIES INSTALL_RPATH "${KMUX_PROGRAM_RPATH}"
                                          INSTALL_RPATH_USE_LINK_PATH ON)
  kmux_install_rpath(${tgt})
  install(TARGETS ${tgt} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
endfunction()
