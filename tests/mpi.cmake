# tests/mpi.cmake: multi-rank tests of mpi/ (label `mpi`), at 1 to 4 ranks.
# NAME SOURCE TIMEOUT RANKS...: the test mpi.NAME_npP of tests/mpi/SOURCE at each of RANKS.
function(h5g_mpi_test name source timeout)
  add_executable(test_${name} ${CMAKE_CURRENT_SOURCE_DIR}/mpi/${source})
  target_link_libraries(test_${name} PRIVATE h5g_mpi h5g_test_support)
  foreach(np ${ARGN})
    add_test(NAME mpi.${name}_np${np} COMMAND ${H5G_MPIEXEC} ${np} $<TARGET_FILE:test_${name}>)
    set_tests_properties(mpi.${name}_np${np} PROPERTIES LABELS mpi TIMEOUT ${timeout}
                         ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
  endforeach()
endfunction()

h5g_mpi_test(splitters test_splitters.c 300 1 2 3 4)
# The connection to Open MPI's PMIx server sends without delay (mpi/launch.h).
h5g_mpi_test(pmix_nodelay test_pmix_nodelay.c 120 1 2)
# Rows moved by source index between the ranks (mpi/gather_rows.h).
h5g_mpi_test(gather_rows test_gather_rows.c 120 1 2 3 4)
