# bench/cpu.cmake
