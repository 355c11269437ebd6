# tests/io.cmake: io/'s collective transfers in pieces (label `io`) at 1, 2, 3 and 4 ranks. The
# test makes its files under the build tree (argument: a path prefix) and removes them.
add_executable(test_io_pieces ${CMAKE_CURRENT_SOURCE_DIR}/io/test_io_pieces.c)
target_link_libraries(test_io_pieces PRIVATE h5g_io h5g_mpi h5g_base h5g_test_support)
foreach(np 1 2 3 4)
  add_test(NAME io.pieces_np${np}
           COMMAND ${H5G_MPIEXEC} ${np} $<TARGET_FILE:test_io_pieces> ${CMAKE_CURRENT_BINARY_DIR}/io_pieces_np${np})
  set_tests_properties(io.pieces_np${np} PROPERTIES LABELS io TIMEOUT 300
                       ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endforeach()

# io/filters.c against serial HDF5 (sec2): HDF5's chunks decoded, ours read back by HDF5, corrupt
# chunks refused. Argument: a path prefix for its file, removed at the end.
add_executable(test_filters ${CMAKE_CURRENT_SOURCE_DIR}/io/test_filters.c)
target_link_libraries(test_filters PRIVATE h5g_io h5g_base h5g_test_support)
add_test(NAME io.filters COMMAND $<TARGET_FILE:test_filters> ${CMAKE_CURRENT_BINARY_DIR}/io_filters)
set_tests_properties(io.filters PROPERTIES LABELS io TIMEOUT 300)

# io/direct.c on its own: pwrite, mapped and SHARED (multi-node) writes read back at unaligned
# offsets and awkward sizes, a mapping whose file is cut short (SIGBUS) fails cleanly, SHARED
# writes aligned to their unit (fake block sizes). Argument: a path prefix.
add_executable(test_direct ${CMAKE_CURRENT_SOURCE_DIR}/io/test_direct.c)
target_link_libraries(test_direct PRIVATE h5g_io h5g_base h5g_test_support)
add_test(NAME io.direct COMMAND $<TARGET_FILE:test_direct> ${CMAKE_CURRENT_BINARY_DIR}/io_direct)
set_tests_properties(io.direct PROPERTIES LABELS io TIMEOUT 300)

# io/filter_scaleoffset.c, io/filter_nbit.c and io/convert.c against serial HDF5's own reads
# (tests/io/test_filter_codecs.c). Argument: a path prefix for its file, removed at the end.
add_executable(test_filter_codecs ${CMAKE_CURRENT_SOURCE_DIR}/io/test_filter_codecs.c)
target_link_libraries(test_filter_codecs PRIVATE h5g_io h5g_base h5g_test_support m)
add_test(NAME io.filter_codecs COMMAND $<TARGET_FILE:test_filter_codecs>
                                       ${CMAKE_CURRENT_BINARY_DIR}/io_filter_codecs)
set_tests_properties(io.filter_codecs PROPERTIES LABELS io TIMEOUT 300)
# The plugin filters bzip2 and lz4 decoded by their plugins (skipped, 77, where HDF5 finds none).
add_test(NAME io.filter_plugins COMMAND $<TARGET_FILE:test_filter_codecs>
                                        ${CMAKE_CURRENT_BINARY_DIR}/io_filter_plugins --plugins)
set_tests_properties(io.filter_plugins PROPERTIES LABELS io TIMEOUT 300 SKIP_RETURN_CODE 77
                     ENVIRONMENT "HDF5_PLUGIN_PATH=${H5G_TEST_PLUGIN_PATH}")
# Szip decoded by libsz, loaded by h5gsort (skipped, 77, where HDF5 has no szip encoder).
add_test(NAME io.filter_szip COMMAND $<TARGET_FILE:test_filter_codecs>
                                     ${CMAKE_CURRENT_BINARY_DIR}/io_filter_szip --szip)
set_tests_properties(io.filter_szip PROPERTIES LABELS io TIMEOUT 300 SKIP_RETURN_CODE 77)
