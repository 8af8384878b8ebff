# kmux_backend_decide(NAME FOUND REASON): resolves KMUX_WITH_<NAME> (AUTO/ON/OFF) against whether
# the toolkit was found, sets KMUX_BUILD_<NAME> in the caller's scope, says why in the configure
# output, and fails when ON was asked for but the toolkit is missing.
function(kmux_backend_decide name found reason)
  set(choice ${KMUX_WITH_${name}})
  if(choice STREQUAL "OFF")
    set(build OFF)
    message(STATUS "kmux: ${name} backend not built (KMUX_WITH_${name}=OFF)")
  elseif(found)
    set(build ON)
    message(STATUS "kmux: ${name} backend built (${reason})")
  elseif(choice STREQUAL "ON")
    message(FATAL_ERROR "kmux: KMUX_WITH_${name}=ON but ${reason}")
  else()
    set(build OFF)
    message(STATUS "kmux: ${name} backend not built: ${reason}")
  endif()
  set(KMUX_BUILD_${name} ${build} PARENT_SCOPE)
  if(build)
    string(TOLOWER ${name} lname)
    set_property(GLOBAL APPEND PROPERTY KMUX_BUILT_BACKENDS ${lname})
  endif()
endfunction()

# kmux_add_plugin(target sources...): a backend plugin libkmux-<x>.so exporting only its entry
# symbol, output next to libkmux.so and installed to <libdir>/kmux. It links its own hidden copy
# of kmux_common (dispatch/common: type names and sizes, conv output size), since a plugin cannot
# call libkmux's functions.
function(kmux_add_plugin tgt)
  add_library(${tgt} MODULE ${ARGN})
  kmux_target_defaults(${tgt})
  set_target_properties(${tgt} PROPERTIES PREFIX "lib" OUTPUT_NAME ${tgt})
  target_include_directories(${tgt} PRIVATE ${KMUX_SOURCE_DIR}/include ${KMUX_SOURCE_DIR})
  target_link_libraries(${tgt} PRIVATE kmux_common)
  target_link_options(${tgt} PRIVATE -Wl,--no-undefined -Wl,--exclude-libs,ALL)
  kmux_install_rpath(${tgt})   # one RUNPATH in both trees (cmake/KmuxRunpath.cmake)
  install(TARGETS ${tgt} LIBRARY DESTINATION ${KMUX_PLUGIN_INSTALL_DIR} COMPONENT runtime)
endfunction()
