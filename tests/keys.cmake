# tests/keys.cmake: sorts by several keys (label keys): several -d, --key-field a,b of a compound
# table, --key-column J,K of a 2-D dataset, --order asc|desc per key, with --carry and
# --index-out; --check and --verify of such outputs; bad key combinations.
# Outputs are checked by h5gsort_check_keys (numpy.lexsort order with a stable sort, computed on
# its own), which shares no code with h5gsort; the --na-position cases (na_*) by
# tests/keys/na_position.py (numpy's stable sort with the NaNs at the end asked for, compared with
# pandas' sort_values). Needs e2e.cmake first (h5g_check_common, H5G_BIN_DIR). H5G_TEST_BACKEND (cpu, the default, or cuda) picks the backend the sorts run on.
add_executable(h5gsort_check_keys ${CMAKE_CURRENT_SOURCE_DIR}/check/h5gsort_check_keys.c)
target_link_libraries(h5gsort_check_keys PRIVATE h5g_check_common)

set(H5G_KEYS_DIR ${CMAKE_CURRENT_SOURCE_DIR}/keys)
set(H5G_KEYS_CASES
    two_ints int_float three_keys fields columns edge out_of_core top unique wide check_mode
    verify checker na_single na_keys na_fields na_top na_unique na_check na_integer
    na_out_of_core)
set(H5G_KEYS_BAD_CASES
    lengths twod_without_column column_out_of_range column_on_1d order_count
    output_dataset_two_d na_position)
foreach(case ${H5G_KEYS_CASES})
  add_test(NAME keys.${case}
           COMMAND bash ${H5G_KEYS_DIR}/keys.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" ${case})
  set_tests_properties(keys.${case} PROPERTIES LABELS keys TIMEOUT 300)
endforeach()
foreach(case ${H5G_KEYS_BAD_CASES})
  add_test(NAME keys.bad_${case}
           COMMAND bash ${H5G_KEYS_DIR}/keys.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" bad_${case})
  set_tests_properties(keys.bad_${case} PROPERTIES LABELS keys TIMEOUT 120)
endforeach()
# The sorting cases again on the GPU backend (label gpu; skipped, exit 77, where no GPU is usable).
if(H5G_HAVE_CUDA)
  foreach(case two_ints int_float three_keys fields columns edge out_of_core top unique wide
               check_mode verify na_single na_keys na_fields na_top na_unique na_check
               na_integer na_out_of_core)
    add_test(NAME gpu.keys_${case}
             COMMAND bash ${H5G_KEYS_DIR}/keys.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" ${case})
    set_tests_properties(gpu.keys_${case} PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT H5G_TEST_BACKEND=cuda)
  endforeach()
endif()
