# Warning flags for every kmux target; KMUX_WERROR (on in CI) turns them into errors.
set(KMUX_C_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
    -Wformat=2 -Wvla -Wno-unused-parameter)
# GCC: snprintf into fixed-size fields truncates on purpose (clang has no such warning).
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  list(APPEND KMUX_C_WARNINGS -Wno-format-truncation)
endif()
set(KMUX_CXX_WARNINGS -Wall -Wextra -Wno-unused-parameter)
if(KMUX_WERROR)
  list(APPEND KMUX_C_WARNINGS -Werror)
  list(APPEND KMUX_CXX_WARNINGS -Werror)
endif()

# kmux_target_defaults(target): warnings, sanitizers, hidden visibility.
function(kmux_target_defaults tgt)
  target_compile_options(${tgt} PRIVATE $<$<COMPILE_LANGUAGE:C>:${KMUX_C_WARNINGS}>
                                        $<$<COMPILE_LANGUAGE:CXX>:${KMUX_CXX_WARNINGS}>)
  set_target_properties(${tgt} PROPERTIES C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden
                                          VISIBILITY_INLINES_HIDDEN ON)
  if(KMUX_SANITIZE)
    target_compile_options(${tgt} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=${KMUX_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all>)
    target_link_options(${tgt} PRIVATE -fsanitize=${KMUX_SANITIZE})
  endif()
endfunction()
