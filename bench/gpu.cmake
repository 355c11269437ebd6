# bench/gpu.cmake
