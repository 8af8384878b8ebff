# kmux-support-matrix: prints which op x dtype x compute combination every device supports, as
# Markdown (docs/support-matrix.md). Included by tools/CMakeLists.txt (tools/*.cmake).
add_executable(kmux-support-matrix ${CMAKE_CURRENT_LIST_DIR}/kmux_support_matrix.c)
kmux_target_defaults(kmux-support-matrix)
target_link_libraries(kmux-support-matrix PRIVATE kmux kmux_common)
kmux_install_program(kmux-support-matrix)   # RUNPATH $ORIGIN/../lib (cmake/KmuxRunpath.cmake)

# docs/support-matrix.md is this tool's output on the devices tools/support-matrix.sh names:
# `cmake --build build --target support-matrix` regenerates it (in the source tree: review and
# commit it). ctest support_matrix_current regenerates it into the build tree and fails, with
# the difference and that command, when the file's rows, columns or supported cells are stale;
# what depends on the CPU (implementation names, notes, reasons, machine lines) is not compared.
add_custom_target(support-matrix
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/support-matrix.sh generate $<TARGET_FILE:kmux-support-matrix>
          ${KMUX_SOURCE_DIR}/docs/support-matrix.md
  DEPENDS kmux-support-matrix
  COMMENT "Regenerating docs/support-matrix.md" VERBATIM)
if(KMUX_BUILD_TESTS)
  add_test(NAME support_matrix_current
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/support-matrix.sh check $<TARGET_FILE:kmux-support-matrix>
                   ${KMUX_SOURCE_DIR}/docs/support-matrix.md ${KMUX_BINARY_DIR}/support-matrix-check)
  set_tests_properties(support_matrix_current PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
