# tests/unit.cmake
