# Runs tests/reliability/fault_trials.sh for ctest and passes only when the script exits
# with status 0 AND its summary says that every trial survived: either alone could be
# satisfied by a script that went wrong (a summary printed before a failing step, or a status
# of 0 from a run that tried nothing).
# cmake -DSCRIPT=... -DPROGRAM=... -DLAUNCH=mpi|ucx -DFAULT=... -DTRIALS=N -DTIMEOUT_MS=T
#       -DSEED=S -P check_fault_trials.cmake
foreach(var SCRIPT PROGRAM LAUNCH FAULT TRIALS TIMEOUT_MS SEED)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_fault_trials.cmake: -D${var}=... is missing")
  endif()
endforeach()
execute_process(
  COMMAND bash "${SCRIPT}" "${PROGRAM}" "${LAUNCH}" "${FAULT}" "${TRIALS}" "${TIMEOUT_MS}"
          "${SEED}"
  RESULT_VARIABLE status
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out)
message("${out}")
if(NOT status STREQUAL "0")
  message(FATAL_ERROR "fault_trials.sh exited with status ${status}")
endif()
if(NOT out MATCHES "${LAUNCH} ${FAULT}: survived ${TRIALS}/${TRIALS},")
  message(FATAL_ERROR "fault_trials.sh printed no \"survived ${TRIALS}/${TRIALS}\" summary")
endif()
