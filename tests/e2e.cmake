# tests/e2e.cmake
