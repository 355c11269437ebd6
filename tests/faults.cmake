# tests/faults.cmake: fault injection (label `faults`): killed ranks, write failure, corrupted
# output, in-place runs killed mid-way, and a 20-run load test. CPU backend.
foreach(case kill write corrupt inplace load)
  add_test(NAME faults.${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/faults/faults.sh ${CMAKE_BINARY_DIR}/bin
                   "${H5G_MPIEXEC_STR}" ${case})
  set_tests_properties(faults.${case} PROPERTIES LABELS faults TIMEOUT 600)
endforeach()
