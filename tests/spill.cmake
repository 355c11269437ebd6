# tests/spill.cmake: spilling to scratch (label spill, issue 54): a share larger than the host
# memory a rank may use sorts with its buffers in scratch files, each output the same as the run
# in memory; --plan of such a run; what refuses it; scratch without room (a small file system in
# a mount namespace of its own) and a real memory cgroup (each skipped, 77, where the machine
# makes none; the cgroup also under the sanitizers); spill.gpu the same on the GPU.
foreach(case keys features plan refused scratch_full cgroup resume gpu)
  add_test(NAME spill.${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/spill/spill.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" ${case})
  set_tests_properties(spill.${case} PROPERTIES LABELS spill TIMEOUT 600 SKIP_RETURN_CODE 77
                       ENVIRONMENT H5G_SANITIZE=${H5G_SANITIZE})
endforeach()
# the GPU variant: runs sorted on the GPU, spilled and resumed (skipped, 77, without a GPU)
set_tests_properties(spill.gpu PROPERTIES LABELS "spill;gpu")
