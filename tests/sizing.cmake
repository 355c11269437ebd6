# tests/sizing.cmake: sizing a job (label sizing, issue 31): the host memory check before any
# read (exit 1, one line, nothing written) and --plan against the arithmetic and real runs.
# small_chunks and carried_peak compare a run's peak resident memory with the plan: skipped (77) under the
# sanitizers, whose shadow memory is no part of the run's. estimate checks only what a shared
# machine's timings cannot blur (case estimate_timed, run by hand, holds it to real runs).
foreach(case refused plan small_chunks carried_peak hint estimate)
  add_test(NAME sizing.${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/sizing/sizing.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" ${case})
  set_tests_properties(sizing.${case} PROPERTIES LABELS sizing TIMEOUT 300 SKIP_RETURN_CODE 77
                       ENVIRONMENT H5G_SANITIZE=${H5G_SANITIZE})
endforeach()
