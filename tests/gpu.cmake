# GPU tests (label gpu): each kernel of kernels/ against a CPU reference, and the CUDA backend
# through base/backend.h. Built wherever nvcc is (CI compiles them); where no GPU is visible a
# test prints "SKIP: no CUDA device" and exits 77, which CTest reports as skipped.
if(H5G_HAVE_CUDA)
  foreach(name sort transform scan_merge backend pairs fused)
    add_executable(test_gpu_${name} ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_gpu_${name}.cu)
    target_link_libraries(test_gpu_${name} PRIVATE h5g_cuda h5g_test_support)
    add_test(NAME gpu.${name} COMMAND test_gpu_${name})
    set_tests_properties(gpu.${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600)
  endforeach()
  # The map the kernels fuse, against base/keys.c on the host: runs without a GPU.
  add_executable(test_key_map ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_key_map.cu)
  target_link_libraries(test_key_map PRIVATE h5g_cuda h5g_test_support)
  add_test(NAME gpu.key_map COMMAND test_key_map)
  set_tests_properties(gpu.key_map PROPERTIES LABELS gpu TIMEOUT 600)
  # Holds GPU memory for gpu_e2e.sh's "another process on the GPU" cases.
  add_executable(hold_gpu_memory ${CMAKE_CURRENT_SOURCE_DIR}/gpu/hold_gpu_memory.cu)
  # 2^28 keys (two onesweep portions for 32-bit and 128-bit keys): needs ~9 GB of device memory
  # (the 128-bit keys and their ping-pong buffer) and ~9 GB of host memory.
  add_test(NAME gpu.large COMMAND test_gpu_sort large)
  set_tests_properties(gpu.large PROPERTIES LABELS "gpu;gpu_large" SKIP_RETURN_CODE 77 TIMEOUT 600)
  # Raw float32 keys over two onesweep portions and raw int64 keys, transforms fused (~3 GB of
  # device memory, ~6 GB of host memory).
  add_test(NAME gpu.fused_large COMMAND test_gpu_fused large)
  set_tests_properties(gpu.fused_large PROPERTIES LABELS "gpu;gpu_large" SKIP_RETURN_CODE 77
                       TIMEOUT 600)
endif()
