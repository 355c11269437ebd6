# tests/gpu.cmake
