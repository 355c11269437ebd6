# tests/layers.cmake: the build refuses layer violations (label unit). Each probe is a library
# with the dependencies of the layer it pretends to be in, built on its own: the control must
# compile, every violation must fail to.
function(h5g_layer_probe name source deps expect_failure)
  add_library(layer_probe_${name} STATIC EXCLUDE_FROM_ALL ${CMAKE_CURRENT_SOURCE_DIR}/layers/${source})
  target_link_libraries(layer_probe_${name} PRIVATE ${deps})
  add_test(NAME unit.layers_${name}
           COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target layer_probe_${name})
  set_tests_properties(unit.layers_${name} PROPERTIES LABELS unit TIMEOUT 300
                       WILL_FAIL ${expect_failure} RESOURCE_LOCK layer_probes)
endfunction()
h5g_layer_probe(io_uses_base io_uses_base.c "h5g_base;h5g_hdf5;h5g_io" FALSE)
h5g_layer_probe(io_uses_pipeline io_uses_pipeline.c "h5g_base;h5g_hdf5;h5g_io" TRUE)
h5g_layer_probe(mpi_uses_kernels mpi_uses_kernels.c "h5g_base;MPI::MPI_C;h5g_mpi" TRUE)
if(H5G_HAVE_CUDA)
  h5g_layer_probe(kernels_uses_mpi kernels_uses_mpi.cu "CUDA::cudart;h5g_base" TRUE)
  h5g_layer_probe(kernels_uses_hdf5 kernels_uses_hdf5.cu "CUDA::cudart;h5g_base" TRUE)
endif()
