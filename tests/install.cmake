# tests/install.cmake: what cmake --install gives (label install, issue 31).
add_test(NAME install.prefix COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install/install.sh ${CMAKE_BINARY_DIR})
set_tests_properties(install.prefix PROPERTIES LABELS install TIMEOUT 300)
# The man pages' sections, exit codes, variables and files against the code, their examples run
# (issue 55).
add_test(NAME install.man_pages
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install/man_pages.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
                 "${H5G_MPIEXEC_STR}")
set_tests_properties(install.man_pages PROPERTIES LABELS install TIMEOUT 120)
