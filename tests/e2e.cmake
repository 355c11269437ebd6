# tests/e2e.cmake: end-to-end tests (label e2e) and bad-input tests (label badinput).
# Outputs are checked by h5gsort_check, which shares no code with h5gsort's transforms or sorts.
# check_common: numpy order and attribute comparison shared by the checkers (tests/check/).
add_library(h5g_check_common STATIC ${CMAKE_CURRENT_SOURCE_DIR}/check/check_common.c)
target_link_libraries(h5g_check_common PUBLIC h5g_hdf5 m)
add_executable(h5gsort_check ${CMAKE_CURRENT_SOURCE_DIR}/check/h5gsort_check.c)
target_link_libraries(h5gsort_check PRIVATE h5g_check_common)
add_executable(h5gsort_fixtures ${CMAKE_CURRENT_SOURCE_DIR}/check/h5gsort_fixtures.c)
target_link_libraries(h5gsort_fixtures PRIVATE h5g_hdf5 h5g_test_support m)

set(H5G_E2E_DIR ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
set(H5G_BIN_DIR ${CMAKE_BINARY_DIR}/bin)
if(H5G_HAVE_CUDA)
  set(H5G_E2E_HAVE_CUDA 1)
else()
  set(H5G_E2E_HAVE_CUDA 0)
endif()

set(H5G_E2E_CASES
    bigendian dists sizes layouts groups descending force inplace attrs verify_report out_of_core
    small_messages backend gen_ranks checker io_paths progress_report progress_heartbeat device_memory_floor
    io_multinode io_multinode_chunked io_policy timeline mpi_settings failed_runs
    unmoved_warning)
foreach(type u1 u2 u4 u8 i1 i2 i4 i8 f4 f8)
  add_test(NAME e2e.type_${type}
           COMMAND bash ${H5G_E2E_DIR}/e2e.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" type ${type})
  set_tests_properties(e2e.type_${type} PROPERTIES LABELS e2e TIMEOUT 300)
endforeach()
foreach(case ${H5G_E2E_CASES})
  add_test(NAME e2e.${case}
           COMMAND bash ${H5G_E2E_DIR}/e2e.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" ${case})
  set_tests_properties(e2e.${case} PROPERTIES LABELS e2e TIMEOUT 300
                       ENVIRONMENT H5G_HAVE_CUDA=${H5G_E2E_HAVE_CUDA})
endforeach()

set(H5G_BADINPUT_CASES
    missing_input not_hdf5 truncated missing_dataset dataset_is_group twod scalar string vlstring
    compound enum opaque vlen out_exists inplace_without_force out_dir_missing out_dir_is_file report_dir_missing
    unknown_option missing_dataset_option bad_option_value write_failure help version
    report_is_input bad_paths dotdot_paths special_files input_named_stale key_field_integer
    long_output_names long_carry_path
    truncated_metadata control_chars compressed_write_limit written_is_source unreadable_input)
# (unreadable_input skips, exit 77, as root; full_disk is in faults.cmake, beside its shim)
foreach(case ${H5G_BADINPUT_CASES})
  add_test(NAME badinput.${case}
           COMMAND bash ${H5G_E2E_DIR}/badinput.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" ${case})
  set_tests_properties(badinput.${case} PROPERTIES LABELS badinput TIMEOUT 120
                       SKIP_RETURN_CODE 77)
endforeach()
# --version names the build as CMake found it (badinput.sh, case_version)
string(REPLACE ";" "," h5g_cuda_architectures "${CMAKE_CUDA_ARCHITECTURES}")
set_tests_properties(badinput.version PROPERTIES ENVIRONMENT
  "H5G_HAVE_CUDA=${H5G_E2E_HAVE_CUDA};H5G_HAVE_NCCL=${H5G_HAVE_NCCL};H5G_CUDA_VERSION=${CUDAToolkit_VERSION_MAJOR}.${CUDAToolkit_VERSION_MINOR};H5G_CUDA_ARCHITECTURES=${h5g_cuda_architectures};H5G_HDF5_VERSION=${HDF5_VERSION};H5G_MPI_FLAVOR=${H5G_MPI_FLAVOR}")
