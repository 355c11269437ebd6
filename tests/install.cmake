# tests/install.cmake: what cmake --install gives (label install, issue 31).
add_test(NAME install.prefix COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install/install.sh ${CMAKE_BINARY_DIR})
set_tests_properties(install.prefix PROPERTIES LABELS install TIMEOUT 300)
