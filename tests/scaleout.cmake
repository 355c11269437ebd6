# tests/scaleout.cmake: scale-out (label scaleout, issue 29 #4): every storage kind (contiguous,
# chunked, gzip, scale-offset, n-bit, big-endian conversions) sorted on 1 to 8 ranks, and in the
# forced I/O modes, gives the 1-rank output (bit-identical data, same file or same chunks); one
# test at 32 ranks, oversubscribed. Needs e2e.cmake first (H5G_BIN_DIR, the checker).
foreach(case contiguous chunked gzip scaleoffset nbit bigendian bigendian_gzip gzip_out ranks32)
  add_test(NAME scaleout.${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scaleout/scaleout.sh ${H5G_BIN_DIR}
                   "${H5G_MPIEXEC_STR}" ${case})
  set_tests_properties(scaleout.${case} PROPERTIES LABELS scaleout TIMEOUT 300)
endforeach()
