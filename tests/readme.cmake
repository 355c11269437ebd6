# tests/readme.cmake: the README's recipes run as written (label readme, issue 55). Every fenced
# block marked `<!-- recipe: NAME -->` in README.md is the test readme.NAME, found when CMake
# configures (README.md is a configure dependency: a new recipe is a new test);
# tests/readme/recipe.sh makes its input files, runs it and checks its outputs against numpy.
set(H5G_README ${PROJECT_SOURCE_DIR}/README.md)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${H5G_README})
file(STRINGS ${H5G_README} h5g_readme_marks REGEX "^<!-- recipe: [a-z0-9_]+ -->$")
if(NOT h5g_readme_marks)
  message(FATAL_ERROR "README.md marks no recipe (<!-- recipe: NAME -->): tests/readme.cmake")
endif()
foreach(mark ${h5g_readme_marks})
  string(REGEX REPLACE "^<!-- recipe: ([a-z0-9_]+) -->$" "\\1" recipe "${mark}")
  add_test(NAME readme.${recipe}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/readme/recipe.sh ${recipe}
                   ${CMAKE_BINARY_DIR}/bin "${H5G_MPIEXEC_STR}")
  set_tests_properties(readme.${recipe} PROPERTIES LABELS readme TIMEOUT 300)
endforeach()
