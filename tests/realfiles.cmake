# tests/realfiles.cmake: real files (label realfiles, issue 16): every storage h5py reads, inputs
# that cannot be read (exit 2 naming the cause), long paths, and corrupted files that must never
# hang. Needs e2e.cmake and records.cmake first (the checkers, h5gsort_fixtures, H5G_BIN_DIR).
set(H5G_REALFILES_DIR ${CMAKE_CURRENT_SOURCE_DIR}/realfiles)
# A filter plugin (filter 32000, a passthrough) in a folder of its own, for HDF5_PLUGIN_PATH.
add_library(h5g_test_plugin MODULE ${H5G_REALFILES_DIR}/passthrough_plugin.c)
target_link_libraries(h5g_test_plugin PRIVATE h5g_hdf5)
set_target_properties(h5g_test_plugin PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/plugins)
foreach(case layouts partial bitfields padded links plugin unavailable_filter dangling_soft_link
             external_missing_file external_missing_object virtual_missing_source held_open paths)
  add_test(NAME realfiles.${case}
           COMMAND bash ${H5G_REALFILES_DIR}/realfiles.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" ${case})
  set_tests_properties(realfiles.${case} PROPERTIES LABELS realfiles TIMEOUT 300)
endforeach()
# Corrupted inputs: the shared cases that hung at 2 ranks, and mutations of small fixtures.
foreach(case hangs mutations_keys mutations_records)
  add_test(NAME realfiles.${case}
           COMMAND bash ${H5G_REALFILES_DIR}/mutate.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" ${case})
  set_tests_properties(realfiles.${case} PROPERTIES LABELS realfiles TIMEOUT 400)
endforeach()
# The readable cases again on the GPU backend (label gpu; skipped where no GPU is visible).
if(H5G_HAVE_CUDA)
  foreach(case layouts partial bitfields padded links)
    add_test(NAME gpu.realfiles_${case}
             COMMAND bash ${H5G_REALFILES_DIR}/realfiles.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" ${case})
    set_tests_properties(gpu.realfiles_${case} PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT H5G_TEST_BACKEND=cuda)
  endforeach()
endif()
