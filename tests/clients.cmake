# tests/clients.cmake: outputs every client reads (label clients, issue 27): netCDF-4, h5py
# dimension scales and references, hard links and PyTables files, made by those libraries, sorted
# as a new OUTPUT, with --whole-file and in place, at 1 and 3 ranks, and read back by ncdump,
# netCDF4, xarray, h5py, PyTables and h5diff (tests/clients/clients.py).
set(H5G_CLIENTS_DIR ${CMAKE_CURRENT_SOURCE_DIR}/clients)
foreach(case nc4 nc4fixed scales scales_tracked links pytables hostile)
  foreach(np 1 3)
    add_test(NAME clients.${case}_np${np}
             COMMAND bash ${H5G_CLIENTS_DIR}/clients.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" ${np} ${case})
    set_tests_properties(clients.${case}_np${np} PROPERTIES LABELS clients TIMEOUT 300)
  endforeach()
  # the same on the GPU backend (label gpu; skipped where no GPU is visible)
  if(H5G_HAVE_CUDA)
    add_test(NAME gpu.clients_${case}
             COMMAND bash ${H5G_CLIENTS_DIR}/clients.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" 2 ${case})
    set_tests_properties(gpu.clients_${case} PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT H5G_TEST_BACKEND=cuda)
  endif()
endforeach()
