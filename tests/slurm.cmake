# tests/slurm.cmake
