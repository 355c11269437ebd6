# tests/storage.cmake: output storage (label storage): --layout, --chunk, --compress keep the
# input's chunks and filters or make the ones asked for; --whole-file; group attributes. Outputs
# checked by h5gsort_check / h5gsort_check_records, storage by h5dump -p, the rest by h5diff.
add_executable(h5gsort_group_attrs ${CMAKE_CURRENT_SOURCE_DIR}/storage/group_attrs.c)
target_link_libraries(h5gsort_group_attrs PRIVATE h5g_hdf5)

foreach(case keep contiguous chunked gzip none usage carry whole_file group_attrs)
  add_test(NAME storage.${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/storage/storage.sh ${H5G_BIN_DIR}
                   "${H5G_MPIEXEC_STR}" ${case})
  set_tests_properties(storage.${case} PROPERTIES LABELS storage TIMEOUT 300)
endforeach()
# Issue 32: many chunks read (#4) and written by several ranks (#5), each run timed by the script;
# attributes over 64 KiB (#7).
foreach(case many_chunks tiny_chunks large_attrs)
  add_test(NAME storage.${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/storage/storage.sh ${H5G_BIN_DIR}
                   "${H5G_MPIEXEC_STR}" ${case})
  set_tests_properties(storage.${case} PROPERTIES LABELS storage TIMEOUT 180)
endforeach()
# Issue 29 #2: scale-offset, n-bit and big-endian inputs read by the I/O threads, outputs equal to
# HDF5's reads (tests/storage/threaded_reads.sh; about 35 s on 2 cores).
add_test(NAME storage.threaded_reads
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/storage/threaded_reads.sh ${H5G_BIN_DIR}
                 "${H5G_MPIEXEC_STR}")
set_tests_properties(storage.threaded_reads PROPERTIES LABELS storage TIMEOUT 180)
# The same for inputs of the plugin filters bzip2 and lz4 (skipped, 77, where HDF5 finds none).
add_test(NAME storage.threaded_plugin_reads
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/storage/threaded_reads.sh ${H5G_BIN_DIR}
                 "${H5G_MPIEXEC_STR}" plugins)
set_tests_properties(storage.threaded_plugin_reads PROPERTIES LABELS storage TIMEOUT 180
                     SKIP_RETURN_CODE 77 ENVIRONMENT "HDF5_PLUGIN_PATH=${H5G_TEST_PLUGIN_PATH}")
# The same for szip inputs, decoded by libsz (skipped, 77, where h5py cannot write szip).
add_test(NAME storage.threaded_reads_szip
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/storage/threaded_reads.sh ${H5G_BIN_DIR}
                 "${H5G_MPIEXEC_STR}" szip)
set_tests_properties(storage.threaded_reads_szip PROPERTIES LABELS storage TIMEOUT 180
                     SKIP_RETURN_CODE 77)
# The cases that sort again on the GPU backend (label gpu; skipped where no GPU is usable).
if(H5G_HAVE_CUDA)
  foreach(case keep contiguous chunked gzip none carry whole_file group_attrs)
    add_test(NAME gpu.storage_${case}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/storage/storage.sh ${H5G_BIN_DIR}
                     "${H5G_MPIEXEC_STR}" ${case})
    set_tests_properties(gpu.storage_${case} PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT H5G_TEST_BACKEND=cuda)
  endforeach()
endif()
