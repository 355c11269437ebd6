# tests/multinode.cmake: h5gsort across two hosts (label multinode): two network namespaces with
# their own hostnames on a veth pair, made and removed by tests/multinode/cluster.sh; Open MPI over
# TCP between them. Needs root and iproute2; skipped (exit 77) where namespaces are not permitted.
# Needs e2e.cmake first (H5G_BIN_DIR, the checkers).
foreach(case e2e records faults spill)
  add_test(NAME multinode.${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/multinode/multinode.sh ${H5G_BIN_DIR}
                   "${H5G_MPIEXEC_STR}" ${case})
  set_tests_properties(multinode.${case} PROPERTIES LABELS multinode TIMEOUT 600
                       SKIP_RETURN_CODE 77)
endforeach()
