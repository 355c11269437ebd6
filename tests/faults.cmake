# tests/faults.cmake: fault injection (label `faults`): killed ranks, write failure, corrupted
# output (also one --verify reads back across its pieces), in-place runs killed mid-way, a
# 20-run load test, signals, an input changed mid-run, closed or broken standard streams, MPI
# failing to start, a small stack, the sweep of files killed runs left.
# CPU backend (load, interrupt, input_changes; the others --backend auto).
foreach(case kill write corrupt verify_pieces inplace load interrupt input_changes streams mpi_init_fails
             small_stack stale_sweep)
  add_test(NAME faults.${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/faults/faults.sh ${CMAKE_BINARY_DIR}/bin
                   "${H5G_MPIEXEC_STR}" ${case})
  set_tests_properties(faults.${case} PROPERTIES LABELS faults TIMEOUT 600)
endforeach()
# Signals: alone, since mpirun sends SIGKILL soon after the SIGTERM it forwards, and a rank 0 not
# scheduled in that time (CI ran this beside faults.load's 20 concurrent runs) dies without its
# error line.
set_tests_properties(faults.interrupt PROPERTIES RUN_SERIAL TRUE)
# Signals and an input changed mid-run again on the GPU backend (label gpu; skipped where no GPU
# is usable).
if(H5G_HAVE_CUDA)
  foreach(case interrupt input_changes)
    add_test(NAME gpu.faults_${case}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/faults/faults.sh ${CMAKE_BINARY_DIR}/bin
                     "${H5G_MPIEXEC_STR}" ${case})
    set_tests_properties(gpu.faults_${case} PROPERTIES LABELS gpu TIMEOUT 600 SKIP_RETURN_CODE 77
                         ENVIRONMENT H5G_TEST_BACKEND=cuda)
  endforeach()
endif()

# Allocation failures (label `faults`): an LD_PRELOAD shim (faults/fail_alloc.c) fails the k-th
# allocation made by the executable itself on rank 1 of 3, for every k (or a spread of them);
# every run must end, with the same exit code on every rank, one error line and no output or
# temporary file. Under H5G_SANITIZE the tests skip (exit 77): ASan must be the first library
# to interpose malloc, so a preloaded malloc shim either is refused at start-up or hides the
# allocations from ASan; the agreement logic tested here does not change with the sanitizers.
# The shims are plain shared libraries, built without the sanitizer options.
# An OUTPUT made during the run (issue 56 item 1) is never replaced without --force, whichever
# way the commit takes: renameat2, or where a file system lacks RENAME_NOREPLACE a hard link, or
# where it has no hard links either a check and a rename (the shim faults/no_renameat2.c takes
# the first away, and the second with H5G_SHIM_NO_LINK; under the sanitizers only renameat2 is
# tested). A disk that fills while OUTPUT is written (issue 55): the shim faults/full_disk.c
# fails the temporary file's writes with ENOSPC (badinput.full_disk, label badinput).
if(NOT H5G_SANITIZE)
  foreach(shim fail_alloc no_renameat2 full_disk)
    add_library(h5g_${shim} SHARED ${CMAKE_CURRENT_SOURCE_DIR}/faults/${shim}.c)
    target_link_libraries(h5g_${shim} PRIVATE ${CMAKE_DL_LIBS})
    set_target_properties(h5g_${shim} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
  endforeach()
  set(H5G_FAIL_ALLOC_SHIM $<TARGET_FILE:h5g_fail_alloc>)
  set(H5G_NO_RENAMEAT2_SHIM $<TARGET_FILE:h5g_no_renameat2>)
  set(H5G_FULL_DISK_SHIM $<TARGET_FILE:h5g_full_disk>)
else()
  set(H5G_FAIL_ALLOC_SHIM sanitize)
  set(H5G_NO_RENAMEAT2_SHIM sanitize)
  set(H5G_FULL_DISK_SHIM sanitize)
endif()
add_test(NAME badinput.full_disk
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/badinput.sh ${CMAKE_BINARY_DIR}/bin
                 "${H5G_MPIEXEC_STR}" full_disk)
set_tests_properties(badinput.full_disk PROPERTIES LABELS badinput TIMEOUT 300 SKIP_RETURN_CODE 77
                     ENVIRONMENT H5G_FULL_DISK_SHIM=${H5G_FULL_DISK_SHIM})
add_test(NAME faults.output_appears
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/faults/faults.sh ${CMAKE_BINARY_DIR}/bin
                 "${H5G_MPIEXEC_STR}" output_appears ${H5G_NO_RENAMEAT2_SHIM})
set_tests_properties(faults.output_appears PROPERTIES LABELS faults TIMEOUT 600)

foreach(case h5gsort_keys h5gsort_records gen)
  add_test(NAME faults.alloc_${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/faults/alloc_failure.sh ${CMAKE_BINARY_DIR}/bin
                   "${H5G_MPIEXEC_STR}" ${case} ${H5G_FAIL_ALLOC_SHIM})
  set_tests_properties(faults.alloc_${case} PROPERTIES LABELS faults TIMEOUT 300
                       SKIP_RETURN_CODE 77)
endforeach()
