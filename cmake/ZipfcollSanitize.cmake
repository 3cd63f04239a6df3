# ZIPFCOLL_SANITIZE: sanitizers for every C and C++ target of the build, e.g.
# "address;undefined" or "thread". Undefined behaviour is made fatal so that a test that
# meets it fails. Device code (nvcc) is left alone: the sanitizers do not cover it.
set(ZIPFCOLL_SANITIZE "" CACHE STRING
    "Sanitizers for the host code: a list of address, undefined, leak, thread")
if(ZIPFCOLL_SANITIZE)
  foreach(s IN LISTS ZIPFCOLL_SANITIZE)
    if(NOT s MATCHES "^(address|undefined|leak|thread)$")
      message(FATAL_ERROR "ZIPFCOLL_SANITIZE: unknown sanitizer '${s}' "
                          "(use address, undefined, leak or thread)")
    endif()
  endforeach()
  if("thread" IN_LIST ZIPFCOLL_SANITIZE AND "address" IN_LIST ZIPFCOLL_SANITIZE)
    message(FATAL_ERROR "ZIPFCOLL_SANITIZE: thread and address cannot be combined")
  endif()
  list(JOIN ZIPFCOLL_SANITIZE "," zipfcoll_sanitizers)
  set(zipfcoll_sanitize_flags -fsanitize=${zipfcoll_sanitizers} -fno-omit-frame-pointer)
  if("undefined" IN_LIST ZIPFCOLL_SANITIZE)
    list(APPEND zipfcoll_sanitize_flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${zipfcoll_sanitize_flags}>")
  add_link_options(-fsanitize=${zipfcoll_sanitizers})
  message(STATUS "zipfcoll: sanitizers ${zipfcoll_sanitizers}")
endif()

# The fuzz targets (tests/fuzz) need libFuzzer, which comes with clang, and a sanitizer
# runtime for the coverage hooks that every object then carries.
if(ZIPFCOLL_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ZIPFCOLL_BUILD_FUZZERS needs clang (CXX=clang++); "
                        "the compiler is ${CMAKE_CXX_COMPILER_ID}")
  endif()
  if(NOT ZIPFCOLL_SANITIZE)
    message(FATAL_ERROR "ZIPFCOLL_BUILD_FUZZERS needs ZIPFCOLL_SANITIZE "
                        "(e.g. address;undefined)")
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>")
endif()
