# kmux_soname(<out> <library file> <fallback>): the SONAME of a shared library (what a plugin
# passes to dlopen() at run time to open the same library it was built against), read with
# readelf; <fallback> when the file or readelf is missing or the library has no SONAME.
function(kmux_soname out lib fallback)
  set(name "${fallback}")
  if(CMAKE_READELF AND lib AND EXISTS "${lib}")
    execute_process(COMMAND ${CMAKE_READELF} -d "${lib}" OUTPUT_VARIABLE dyn ERROR_QUIET
                    RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND dyn MATCHES "Library soname: \\[([^]]+)\\]")
      set(name "${CMAKE_MATCH_1}")
    endif()
  endif()
  set(${out} "${name}" PARENT_SCOPE)
  # what the plugins open at run time, for the packages' dependencies (cmake/KmuxPackage.cmake)
  if(lib)
    get_filename_component(_dir "${lib}" DIRECTORY)
    set_property(GLOBAL APPEND PROPERTY KMUX_RUNTIME_OPENED_LIBS "${_dir}/${name}")
  endif()
endfunction()
