# tests/mpi.cmake: multi-rank tests of mpi/ (label `mpi`), at 1, 2, 3 and 4 ranks.
add_executable(test_splitters ${CMAKE_CURRENT_SOURCE_DIR}/mpi/test_splitters.c)
target_link_libraries(test_splitters PRIVATE h5g_mpi h5g_test_support)
foreach(np 1 2 3 4)
  add_test(NAME mpi.splitters_np${np} COMMAND ${H5G_MPIEXEC} ${np} $<TARGET_FILE:test_splitters>)
  set_tests_properties(mpi.splitters_np${np} PROPERTIES LABELS mpi TIMEOUT 300
                       ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endforeach()

# The connection to Open MPI's PMIx server sends without delay (mpi/launch.h).
add_executable(test_pmix_nodelay ${CMAKE_CURRENT_SOURCE_DIR}/mpi/test_pmix_nodelay.c)
target_link_libraries(test_pmix_nodelay PRIVATE h5g_mpi h5g_test_support)
foreach(np 1 2)
  add_test(NAME mpi.pmix_nodelay_np${np} COMMAND ${H5G_MPIEXEC} ${np} $<TARGET_FILE:test_pmix_nodelay>)
  set_tests_properties(mpi.pmix_nodelay_np${np} PROPERTIES LABELS mpi TIMEOUT 120
                       ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endforeach()

# Rows moved by source index between the ranks (mpi/gather_rows.h).
add_executable(test_gather_rows ${CMAKE_CURRENT_SOURCE_DIR}/mpi/test_gather_rows.c)
target_link_libraries(test_gather_rows PRIVATE h5g_mpi h5g_test_support)
foreach(np 1 2 3 4)
  add_test(NAME mpi.gather_rows_np${np} COMMAND ${H5G_MPIEXEC} ${np} $<TARGET_FILE:test_gather_rows>)
  set_tests_properties(mpi.gather_rows_np${np} PROPERTIES LABELS mpi TIMEOUT 120
                       ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endforeach()
