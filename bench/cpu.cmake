# bench/cpu.cmake: CPU benchmarks (built, never run as tests). Results: bench/RESULTS.md.
add_executable(bench_cpu_sort ${CMAKE_CURRENT_SOURCE_DIR}/cpu_sort.c)
target_link_libraries(bench_cpu_sort PRIVATE h5g_util)
