# Installation: libkmux + headers, a CMake package (find_package(kmux) -> kmux::kmux), a
# pkg-config file (kmux.pc); plugins install themselves to <libdir>/kmux (kmux_add_plugin).
# Three install components, split the way Debian splits a library (cmake/KmuxPackage.cmake):
#   runtime  libkmux.so.<major> and the plugins
#   dev      headers, the libkmux.so link, the CMake package, kmux.pc
#   tools    kmux-info, kmux-bench, kmux-check, kmux-support-matrix (kmux_install_program)
include(CMakePackageConfigHelpers)

kmux_install_rpath(kmux)   # one RUNPATH in both trees (cmake/KmuxRunpath.cmake)
install(TARGETS kmux EXPORT kmuxTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${KMUX_SOURCE_DIR}/include/kmux.h ${KMUX_SOURCE_DIR}/include/kmux_backend.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(EXPORT kmuxTargets NAMESPACE kmux:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kmux
        COMPONENT dev)

configure_package_config_file(${KMUX_SOURCE_DIR}/cmake/kmuxConfig.cmake.in
  ${KMUX_BINARY_DIR}/kmuxConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kmux)
write_basic_package_version_file(${KMUX_BINARY_DIR}/kmuxConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${KMUX_BINARY_DIR}/kmuxConfig.cmake ${KMUX_BINARY_DIR}/kmuxConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kmux COMPONENT dev)

file(RELATIVE_PATH KMUX_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file(${KMUX_SOURCE_DIR}/cmake/kmux.pc.in ${KMUX_BINARY_DIR}/kmux.pc @ONLY)
install(FILES ${KMUX_BINARY_DIR}/kmux.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT dev)
