# How the tests, examples and demo launch several ranks: ZIPFCOLL_MPIEXEC and its flags.
# Open MPI refuses root and more ranks than cores unless told; both are normal in CI.
find_program(ZIPFCOLL_MPIEXEC NAMES ${MPIEXEC_EXECUTABLE} mpiexec mpirun)
if(NOT ZIPFCOLL_MPIEXEC)
  message(FATAL_ERROR "no mpiexec/mpirun found to run the multi-rank tests")
endif()
execute_process(COMMAND ${ZIPFCOLL_MPIEXEC} --version OUTPUT_VARIABLE zipfcoll_mpiexec_version
  ERROR_QUIET)
set(ZIPFCOLL_MPIEXEC_FLAGS ${MPIEXEC_PREFLAGS})
if(zipfcoll_mpiexec_version MATCHES "Open MPI|OpenRTE")
  list(APPEND ZIPFCOLL_MPIEXEC_FLAGS --allow-run-as-root --oversubscribe)
endif()
