# tests/records.cmake
