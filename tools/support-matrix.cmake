# kmux-support-matrix: prints which op x dtype x compute combination every device supports, as
# Markdown (docs/support-matrix.md). Included by tools/CMakeLists.txt (tools/*.cmake).
add_executable(kmux-support-matrix ${CMAKE_CURRENT_LIST_DIR}/kmux_support_matrix.c)
kmux_target_defaults(kmux-support-matrix)
target_link_libraries(kmux-support-matrix PRIVATE kmux)
install(TARGETS kmux-support-matrix RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
