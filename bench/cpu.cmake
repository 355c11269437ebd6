# bench/cpu.cmake: CPU benchmarks (built, never run as tests). Results: bench/RESULTS.md.
add_executable(bench_cpu_sort ${CMAKE_CURRENT_SOURCE_DIR}/cpu_sort.c)
target_link_libraries(bench_cpu_sort PRIVATE h5g_base h5g_cpu h5g_test_support)

# bench_h5copy: the copy bound of bench/e2e.sh (h5gsort's collective I/O, no sort).
add_executable(bench_h5copy ${CMAKE_CURRENT_SOURCE_DIR}/h5copy.c)
target_link_libraries(bench_h5copy PRIVATE h5g_io h5g_mpi h5g_base)

# bench_raw_io: the raw I/O bound of bench/e2e.sh (threaded pread + pwrite of the same bytes).
add_executable(bench_raw_io ${CMAKE_CURRENT_SOURCE_DIR}/raw_io.c)
target_link_libraries(bench_raw_io PRIVATE Threads::Threads)
