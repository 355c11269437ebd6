# tests/records.cmake: record sorts (label records): --carry, --index-out, --stable, --key-field.
# Outputs are checked by h5gsort_check_records, which shares no code with h5gsort.
# Needs e2e.cmake first (h5g_check_common, H5G_BIN_DIR).
add_executable(h5gsort_check_records ${CMAKE_CURRENT_SOURCE_DIR}/check/h5gsort_check_records.c)
target_link_libraries(h5gsort_check_records PRIVATE h5g_check_common)

set(H5G_RECORDS_DIR ${CMAKE_CURRENT_SOURCE_DIR}/records)
foreach(type u1 u2 u4 u8 i1 i2 i4 i8 f4 f8)
  add_test(NAME records.type_${type}
           COMMAND bash ${H5G_RECORDS_DIR}/records.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" type ${type})
  set_tests_properties(records.type_${type} PROPERTIES LABELS records TIMEOUT 300)
endforeach()
# Tables: TYPE:DIST:FIELD of the sort field.
foreach(spec i4:few:tick f8:special:energy)
  string(REPLACE ":" "_" name ${spec})
  add_test(NAME records.table_${name}
           COMMAND bash ${H5G_RECORDS_DIR}/records.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" table ${spec})
  set_tests_properties(records.table_${name} PROPERTIES LABELS records TIMEOUT 300)
endforeach()
foreach(case stable sizes descending index output_dataset inplace out_of_core small_messages gen_ranks
             checker batches)
  add_test(NAME records.${case}
           COMMAND bash ${H5G_RECORDS_DIR}/records.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" ${case})
  set_tests_properties(records.${case} PROPERTIES LABELS records TIMEOUT 300)
endforeach()

set(H5G_RECORDS_BAD_CASES
    carry_length carry_missing carry_string carry_not_numeric carry_scalar
    carry_the_keys index_is_keys carry_same_name key_field_not_compound key_field_unknown
    key_field_string)
foreach(case ${H5G_RECORDS_BAD_CASES})
  add_test(NAME records.bad_${case}
           COMMAND bash ${H5G_RECORDS_DIR}/badinput.sh ${H5G_BIN_DIR} "${H5G_MPIEXEC_STR}" ${case})
  set_tests_properties(records.bad_${case} PROPERTIES LABELS records TIMEOUT 120)
endforeach()
