# bench/gpu.cmake: GPU benchmarks (built, never run as tests). Results: bench/RESULTS.md.
# bench_local_sort: our kernels against CUB (the reference; CUB is used here and in no product code).
add_executable(bench_local_sort ${CMAKE_CURRENT_SOURCE_DIR}/local_sort.cu)
target_link_libraries(bench_local_sort PRIVATE h5g_cuda h5g_test_support)
# bench_host_buffers: ways of getting pinned host slice buffers, and the H2D rate from each.
add_executable(bench_host_buffers ${CMAKE_CURRENT_SOURCE_DIR}/host_buffers.cu)
target_link_libraries(bench_host_buffers PRIVATE CUDA::cudart h5g_base h5g_test_support)
# bench_staged_io: the data path of a 1-GPU run with a slice-sized pinned buffer and with a pinned
# ring instead (bench/e2e.sh's rows beside the fastest raw copy).
add_executable(bench_staged_io ${CMAKE_CURRENT_SOURCE_DIR}/staged_io.cu)
target_link_libraries(bench_staged_io PRIVATE CUDA::cudart h5g_base h5g_test_support)
# bench_nccl_alltoall: NCCL's all-to-all between the GPUs, the bound for h5gsort's exchange.
if(H5G_HAVE_NCCL)
  add_executable(bench_nccl_alltoall ${CMAKE_CURRENT_SOURCE_DIR}/nccl_alltoall.cu)
  target_include_directories(bench_nccl_alltoall PRIVATE ${H5G_NCCL_INCLUDE_DIR})
  target_link_libraries(bench_nccl_alltoall PRIVATE MPI::MPI_C CUDA::cudart ${H5G_NCCL_LIBRARY} h5g_test_support)
endif()
