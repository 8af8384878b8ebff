# kmux-check: the readiness report (tools/kmux_check/). Included by tools/CMakeLists.txt
# (tools/*.cmake). Needs jansson (JSON output and target files), as kmux-bench.
if(NOT TARGET kmux::jansson)
  message(STATUS "kmux: kmux-check not built: jansson not found (Debian: apt install libjansson-dev)")
  return()
endif()

# Everything but main() in a static library, so that tests/test_check*.c link the same code.
set(KMUX_CHECK_CORE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/kmux_check/ck_device.c
  ${CMAKE_CURRENT_LIST_DIR}/kmux_check/ck_env.c
  ${CMAKE_CURRENT_LIST_DIR}/kmux_check/ck_function.c
  ${CMAKE_CURRENT_LIST_DIR}/kmux_check/ck_libs.c
  ${CMAKE_CURRENT_LIST_DIR}/kmux_check/ck_report.c
  ${CMAKE_CURRENT_LIST_DIR}/kmux_check/ck_speed.c
  ${CMAKE_CURRENT_LIST_DIR}/kmux_check/ck_sys.c
  ${CMAKE_CURRENT_LIST_DIR}/kmux_check/ck_targets.c
  ${CMAKE_CURRENT_LIST_DIR}/kmux_check/ck_values.c
  ${CMAKE_CURRENT_LIST_DIR}/kmux_check/ck_verdict.c)
add_library(kmux_check_core STATIC ${KMUX_CHECK_CORE_SOURCES})
kmux_target_defaults(kmux_check_core)
target_include_directories(kmux_check_core PUBLIC ${CMAKE_CURRENT_LIST_DIR}/kmux_check
                                           PRIVATE ${KMUX_SOURCE_DIR})
target_link_libraries(kmux_check_core PUBLIC kmux kmux::jansson Threads::Threads m
                                      PRIVATE kmux_common)

add_executable(kmux-check ${CMAKE_CURRENT_LIST_DIR}/kmux_check/main.c)
kmux_target_defaults(kmux-check)
target_link_libraries(kmux-check PRIVATE kmux_check_core)
kmux_install_program(kmux-check)   # RUNPATH $ORIGIN/../lib (cmake/KmuxRunpath.cmake)

if(KMUX_BUILD_TESTS)
  # The command line on this machine: text and JSON (validated against the schema with Ajv).
  add_test(NAME check_cli
           COMMAND sh ${KMUX_SOURCE_DIR}/tests/test_check_cli.sh $<TARGET_FILE:kmux-check>)
  set_tests_properties(check_cli PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
                       ENVIRONMENT "KMUX_CHECK_TEST_TMP=${KMUX_BINARY_DIR}/check-test-tmp")
endif()
