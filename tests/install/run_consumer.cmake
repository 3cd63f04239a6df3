# cmake -P script: install, build the consumer both ways, run it.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message("${out}")
endfunction()

if(CONFIG STREQUAL "")
  set(CONFIG Release)
endif()
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}" --config ${CONFIG})

# The installed shared library exports nothing but the C API.
file(GLOB libs "${prefix}/lib*/libzipfcoll.so")
list(GET libs 0 lib)
execute_process(COMMAND nm -D --defined-only "${lib}" OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(rc EQUAL 0)
  string(REGEX MATCHALL "[^\n]+" lines "${symbols}")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES " zfc[A-Za-z]+$")
      message(FATAL_ERROR "libzipfcoll.so exports a symbol outside the C API: ${line}")
    endif()
  endforeach()
endif()

# Every plugin of the build (PLUGINS, comma-separated file names) is installed beside the
# library, where it looks for them; the consumer below asks each installed one to load
# (zfcQueryTransport).
get_filename_component(libdir "${lib}" DIRECTORY)
string(REPLACE "," ";" built_plugins "${PLUGINS}")
set(ENV{ZIPFCOLL_EXPECT_TRANSPORTS} "")
foreach(name IN LISTS built_plugins)
  if(NOT EXISTS "${libdir}/${name}")
    message(FATAL_ERROR "${name} is not installed beside libzipfcoll.so in ${libdir}")
  endif()
  string(REGEX REPLACE "^libzipfcoll-(.*)\\.so$" "\\1" kind "${name}")
  if(NOT kind STREQUAL "hwloc")
    set(ENV{ZIPFCOLL_EXPECT_TRANSPORTS} "$ENV{ZIPFCOLL_EXPECT_TRANSPORTS}${kind} ")
  endif()
endforeach()
message("installed transports: $ENV{ZIPFCOLL_EXPECT_TRANSPORTS}")

# The installed programs start from the prefix, finding the installed library through
# their RPATH (no LD_LIBRARY_PATH): each answers --help.
file(GLOB programs "${prefix}/bin/*")
foreach(program IN LISTS programs)
  execute_process(COMMAND "${program}" --help RESULT_VARIABLE rc OUTPUT_QUIET
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "installed ${program} --help failed (${rc}): ${err}")
  endif()
  message("installed ${program} starts")
endforeach()

# 1. find_package(zipfcoll CONFIG)
run(${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/cmake-build" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/cmake-build")
run("${WORK_DIR}/cmake-build/consumer")

# 2. pkg-config, compiling the consumer as C.
find_program(PKG_CONFIG pkg-config)
find_program(CC NAMES cc gcc)
if(PKG_CONFIG AND CC)
  file(GLOB pcdirs "${prefix}/lib*/pkgconfig")
  set(ENV{PKG_CONFIG_PATH} "${pcdirs}")
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs zipfcoll OUTPUT_VARIABLE flags
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config does not know zipfcoll")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(${CC} -std=c99 -Wall -Werror "${CONSUMER_DIR}/consumer.c" ${flags}
      "-Wl,-rpath,${libdir}" -o "${WORK_DIR}/consumer_pc")
  run("${WORK_DIR}/consumer_pc")
endif()
