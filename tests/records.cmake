# tests/records.cmake: record sorts (label records): --carry, --index-out, --stable, --key-field.
# Outputs are checked by h5gsort_check_records, which shares no code with h5gsort.
# Needs e2e.cmake first (h5g_check_common, H5G_BIN_DIR).
add_executable(h5gsort_check_records ${CMAKE_CURRENT_SOURCE_DIR}/check/h5gsort_check_records.c)
target_link_libraries(h5gsort_check_records PRIVATE h5g_check_common)
