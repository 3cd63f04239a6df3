# zipfcoll_add_test: the one way a test that checks a printed line is registered.
#
#   zipfcoll_add_test(NAME <name> [LINE <regex>] [STATUS <n>] [NEEDS_DIR <dir>]
#                     [NEEDS_PYTHON_MODULE <python> <module>] COMMAND <command> [<arg>...])
#
# The command runs under tests/common/expect_line.sh, which shows its output and passes only
# when the exit status is STATUS (0 unless given) and, with LINE, the output matches LINE
# (an extended regular expression over the whole output; "\n" in it is a newline). ctest's
# PASS_REGULAR_EXPRESSION is not used: with it ctest ignores the exit status, and a program
# that prints its line and then crashes or aborts at teardown passes. A command that exits
# 77 is passed through as a skip (set SKIP_RETURN_CODE 77 where a skip is allowed); with
# NEEDS_DIR or NEEDS_PYTHON_MODULE the test skips (77), saying why, when the directory is
# missing or the module does not import. Other properties (TIMEOUT, PROCESSORS,
# ENVIRONMENT, ...) are set by the caller as for add_test. LINE may hold a semicolon; the
# command's arguments go through a CMake list, so none of them may.
#
# Every directory that includes this file or calls zipfcoll_add_test refuses, at the end of
# its configuration, a test of its own that sets PASS_REGULAR_EXPRESSION.

set(ZIPFCOLL_EXPECT_LINE "${CMAKE_CURRENT_LIST_DIR}/expect_line.sh")

function(zipfcoll_add_test)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME;LINE;STATUS;NEEDS_DIR"
                        "NEEDS_PYTHON_MODULE;COMMAND")
  if(NOT ARG_NAME OR NOT ARG_COMMAND)
    message(FATAL_ERROR "zipfcoll_add_test: NAME and COMMAND are required")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "zipfcoll_add_test(${ARG_NAME}): unknown arguments "
                        "${ARG_UNPARSED_ARGUMENTS}")
  endif()
  set(checks)
  if(DEFINED ARG_STATUS)
    if(NOT ARG_STATUS MATCHES "^[0-9]+$")
      message(FATAL_ERROR "zipfcoll_add_test(${ARG_NAME}): STATUS '${ARG_STATUS}' is not a "
                          "number")
    endif()
    list(APPEND checks --status ${ARG_STATUS})
  endif()
  if(DEFINED ARG_NEEDS_DIR)
    list(APPEND checks --needs-dir "${ARG_NEEDS_DIR}")
  endif()
  if(DEFINED ARG_NEEDS_PYTHON_MODULE)
    list(LENGTH ARG_NEEDS_PYTHON_MODULE n)
    if(NOT n EQUAL 2)
      message(FATAL_ERROR "zipfcoll_add_test(${ARG_NAME}): NEEDS_PYTHON_MODULE takes a "
                          "Python and a module")
    endif()
    list(APPEND checks --needs-python-module ${ARG_NEEDS_PYTHON_MODULE})
  endif()
  zipfcoll_check_directory_tests()
  # LINE is passed as one quoted argument, so a semicolon in it stays in it.
  if(DEFINED ARG_LINE)
    add_test(NAME ${ARG_NAME} COMMAND bash ${ZIPFCOLL_EXPECT_LINE} ${checks} --line "${ARG_LINE}"
             -- ${ARG_COMMAND})
  else()
    add_test(NAME ${ARG_NAME} COMMAND bash ${ZIPFCOLL_EXPECT_LINE} ${checks} -- ${ARG_COMMAND})
  endif()
  if(DEFINED ARG_NEEDS_DIR OR DEFINED ARG_NEEDS_PYTHON_MODULE)
    set_tests_properties(${ARG_NAME} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
endfunction()


# Run at the end of each including directory: a test there that passes on a line alone is a
# configuration error, naming it.
function(zipfcoll_refuse_line_only_tests)
  get_property(tests DIRECTORY PROPERTY TESTS)
  set(bad)
  foreach(t IN LISTS tests)
    get_test_property(${t} PASS_REGULAR_EXPRESSION line)
    if(line)
      list(APPEND bad ${t})
    endif()
  endforeach()
  if(bad)
    string(REPLACE ";" ", " bad "${bad}")
    message(FATAL_ERROR "${CMAKE_CURRENT_SOURCE_DIR}: ${bad} set PASS_REGULAR_EXPRESSION, "
      "which makes ctest ignore the exit status; register them with zipfcoll_add_test "
      "(tests/common/ZipfcollTest.cmake) and its LINE")
  endif()
endfunction()

# Schedules zipfcoll_refuse_line_only_tests once at the end of the current directory.
macro(zipfcoll_check_directory_tests)
  get_property(zipfcoll_checked DIRECTORY PROPERTY ZIPFCOLL_TESTS_CHECKED SET)
  if(NOT zipfcoll_checked)
    set_property(DIRECTORY PROPERTY ZIPFCOLL_TESTS_CHECKED 1)
    cmake_language(DEFER CALL zipfcoll_refuse_line_only_tests)
  endif()
endmacro()
zipfcoll_check_directory_tests()
