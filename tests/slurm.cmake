# tests/slurm.cmake: the job scripts of jobs/ on a real single-node Slurm cluster that the test
# brings up on localhost (tests/slurm/slurm_cluster_test.sh). Needs root and Debian's munge and
# slurm-wlm packages; skipped (exit 77) without them. RUN_SERIAL: it runs up to 4 MPI ranks.
add_test(NAME slurm.cluster
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/slurm/slurm_cluster_test.sh
                 ${CMAKE_SOURCE_DIR} ${CMAKE_RUNTIME_OUTPUT_DIRECTORY})
set_tests_properties(slurm.cluster PROPERTIES
                     LABELS slurm TIMEOUT 600 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
# The same jobs on a two-node cluster: two network namespaces (tests/multinode/cluster.sh), one
# slurmd each (label multinode too); skipped where namespaces are not permitted.
add_test(NAME slurm.two_nodes
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/slurm/slurm_cluster_test.sh
                 ${CMAKE_SOURCE_DIR} ${CMAKE_RUNTIME_OUTPUT_DIRECTORY} 2)
set_tests_properties(slurm.two_nodes PROPERTIES
                     LABELS "slurm;multinode" TIMEOUT 600 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
