# tests/unit.cmake: plain-C unit tests of the CPU building blocks (label `unit`), unit.<name> runs
# test_<name>. Each test program checks results against an independent reference and exits
# nonzero on failure.
foreach(name keys compose radix_sort merge size_parse host_memory parallel)
  add_executable(test_${name} ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_${name}.c)
  target_link_libraries(test_${name} PRIVATE h5g_base h5g_cpu h5g_test_support)
  add_test(NAME unit.${name} COMMAND test_${name})
  set_tests_properties(unit.${name} PROPERTIES LABELS unit TIMEOUT 300)
endforeach()
# pin pieces above the 2 MiB alignment of buffers that are not pinned
add_test(NAME unit.host_memory_4m COMMAND test_host_memory)
set_tests_properties(unit.host_memory_4m PROPERTIES LABELS unit TIMEOUT 300
                     ENVIRONMENT "H5GSORT_PIN_PIECE_BYTES=4194304")

# The command line (src/options.c): accepted forms, defaults and every usage error.
add_executable(test_options ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_options.c)
target_link_libraries(test_options PRIVATE h5g_core h5g_test_support)
add_test(NAME unit.options COMMAND test_options)
set_tests_properties(unit.options PROPERTIES LABELS unit TIMEOUT 300)

# h5gsort replaces no function of the C library (the environment's writers above all): every
# library in the process gets the C library's own.
add_test(NAME unit.no_libc_replacements
         COMMAND bash -c "symbols=$(nm --defined-only \"$1\") && [ -n \"$symbols\" ] && ! grep -E ' [TtWw] (setenv|unsetenv|putenv|clearenv|getenv|malloc|free|fork)$' <<<\"$symbols\""
                 _ $<TARGET_FILE:h5gsort>)
set_tests_properties(unit.no_libc_replacements PROPERTIES LABELS unit TIMEOUT 60)
