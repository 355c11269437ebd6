# tests/gpu_e2e.cmake: h5gsort end to end on GPUs (label gpu; skipped where no GPU is visible).
# The cases where another process holds the GPU's memory run alone (RUN_SERIAL): the holder
# takes all but 1.5 GiB, then all of it, and a GPU test beside it could not allocate.
if(H5G_HAVE_CUDA)
  add_test(NAME gpu.e2e COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu_e2e/gpu_e2e.sh
                                ${CMAKE_BINARY_DIR}/bin "${H5G_MPIEXEC_STR}" main)
  add_test(NAME gpu.e2e_held_memory COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu_e2e/gpu_e2e.sh
                                            ${CMAKE_BINARY_DIR}/bin "${H5G_MPIEXEC_STR}" held)
  set_tests_properties(gpu.e2e gpu.e2e_held_memory PROPERTIES LABELS gpu SKIP_RETURN_CODE 77
                                                             TIMEOUT 600)
  set_tests_properties(gpu.e2e_held_memory PROPERTIES RUN_SERIAL TRUE)
endif()
# Record sorts (--carry, --index-out, --stable, --key-field) on the CUDA backend, each output
# byte-identical to the CPU backend's.
if(H5G_HAVE_CUDA)
  add_test(NAME gpu.records COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu_e2e/gpu_records.sh
                                    ${CMAKE_BINARY_DIR}/bin "${H5G_MPIEXEC_STR}")
  set_tests_properties(gpu.records PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()
