# tests/unit.cmake: plain-C unit tests of the CPU building blocks (label `unit`).
# Each test program checks results against an independent reference and exits nonzero on failure.
foreach(test_name test_keys test_radix_sort test_merge test_size_parse test_host_memory)
  add_executable(${test_name} ${CMAKE_CURRENT_SOURCE_DIR}/unit/${test_name}.c)
  target_link_libraries(${test_name} PRIVATE h5g_base h5g_cpu h5g_test_support)
  add_test(NAME unit.${test_name} COMMAND ${test_name})
  set_tests_properties(unit.${test_name} PROPERTIES LABELS unit TIMEOUT 300)
endforeach()
