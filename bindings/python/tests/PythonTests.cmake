# The Python tests (included from bindings/python/CMakeLists.txt when tests are built):
#   python_api_np{2,3}   pytest under mpirun: results identical to the C API's (checked
#                        against zfc_py_reference, run first on the same ranks), no copies,
#                        one raised class per error a caller can cause;
#   python_local         pytest in one process: errors of ranks that never arrive or vanish,
#                        the stream rules of device views, the blocked order of sums;
#   python_demo_np3      python -m zipfcoll.demo against zfc_demo: the same exact figures;
#   python_example_*     the README's examples run (PyTorch's where it is installed).
#   python_wheel         the sdist and wheel of `python -m build`, the wheel run from a venv.
# Running them needs NumPy, pytest and mpi4py for the same Python: when it lacks them the
# tests are left out (with ZIPFCOLL_BUILD_PYTHON=ON that is an error).
execute_process(COMMAND ${Python3_EXECUTABLE} -c "import numpy, pytest, mpi4py"
  RESULT_VARIABLE zipfcoll_py_modules ERROR_VARIABLE zipfcoll_py_missing
  OUTPUT_QUIET ERROR_STRIP_TRAILING_WHITESPACE)
if(NOT zipfcoll_py_modules EQUAL 0)
  string(CONCAT why "${Python3_EXECUTABLE} cannot import numpy, pytest and mpi4py (python3-numpy, "
          "python3-pytest, python3-mpi4py; choose another with -DPython3_EXECUTABLE=...): "
          "${zipfcoll_py_missing}")
  if(ZIPFCOLL_BUILD_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "zipfcoll: Python tests: ${why}")
  endif()
  message(WARNING "zipfcoll: Python tests left out: ${why}")
  return()
endif()
if(NOT ZIPFCOLL_HAVE_MPI)
  message(STATUS "zipfcoll: the Python tests need the MPI transport; left out")
  return()
endif()

# Every entry checks its command's exit status; those that check a printed line too go
# through zipfcoll_add_test (tests/common/ZipfcollTest.cmake), never PASS_REGULAR_EXPRESSION.
include(${CMAKE_CURRENT_LIST_DIR}/../../../tests/common/ZipfcollTest.cmake)

set(tests_dir "${CMAKE_CURRENT_SOURCE_DIR}/tests")
add_executable(zfc_py_reference tests/c_reference.cpp)
target_link_libraries(zfc_py_reference PRIVATE zipfcoll MPI::MPI_C)
target_compile_definitions(zfc_py_reference PRIVATE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)

# ZIPFCOLL_ROUTE=direct: the C reference and the Python run count the same bytes whatever
# machine model each measures (the route is otherwise the cost model's choice).
set(py_env "PYTHONPATH=${ZIPFCOLL_PYTHON_DIR}" "PYTHONDONTWRITEBYTECODE=1"
  "OPENBLAS_NUM_THREADS=1" "ZIPFCOLL_ROUTE=direct")
set(pytest ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider --color=no)
foreach(np 2 3)
  set(ref "${CMAKE_CURRENT_BINARY_DIR}/c_reference_np${np}")
  add_test(NAME python_reference_np${np}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${ref})
  add_test(NAME python_reference_run_np${np}
    COMMAND ${ZIPFCOLL_MPIEXEC} ${ZIPFCOLL_MPIEXEC_FLAGS} ${MPIEXEC_NUMPROC_FLAG} ${np}
            $<TARGET_FILE:zfc_py_reference> ${ref})
  set_tests_properties(python_reference_np${np} PROPERTIES FIXTURES_SETUP py_ref_dir_np${np})
  set_tests_properties(python_reference_run_np${np} PROPERTIES TIMEOUT 120 PROCESSORS ${np}
    FIXTURES_REQUIRED py_ref_dir_np${np} FIXTURES_SETUP py_ref_np${np})
  add_test(NAME python_api_np${np}
    COMMAND ${ZIPFCOLL_MPIEXEC} ${ZIPFCOLL_MPIEXEC_FLAGS} ${MPIEXEC_NUMPROC_FLAG} ${np}
            ${pytest} ${tests_dir}/mpi)
  set_tests_properties(python_api_np${np} PROPERTIES TIMEOUT 300 PROCESSORS ${np}
    FIXTURES_REQUIRED py_ref_np${np}
    ENVIRONMENT "${py_env};ZIPFCOLL_PY_REFERENCE=${ref}")
endforeach()

add_test(NAME python_local COMMAND ${pytest} ${tests_dir}/local)
set_tests_properties(python_local PROPERTIES TIMEOUT 300 ENVIRONMENT "${py_env}")

if(TARGET zfc_demo)
  zipfcoll_add_test(NAME python_demo_np3 LINE "the same figures"
    COMMAND bash ${tests_dir}/compare_demo.sh $<TARGET_FILE:zfc_demo> ${Python3_EXECUTABLE}
            ${ZIPFCOLL_MPIEXEC} ${ZIPFCOLL_MPIEXEC_FLAGS} ${MPIEXEC_NUMPROC_FLAG} 3)
  set_tests_properties(python_demo_np3 PROPERTIES TIMEOUT 300 PROCESSORS 3
    ENVIRONMENT "${py_env}")
endif()
# Started by another launcher (torchrun's variables, no mpirun), the demo refuses with exit
# status 2 and says why, instead of running one-rank jobs side by side.
zipfcoll_add_test(NAME python_demo_refuses_foreign_launch STATUS 2
  LINE "by a launcher other than mpirun"
  COMMAND env RANK=0 WORLD_SIZE=2 ${Python3_EXECUTABLE} -m zipfcoll.demo -n 1)
set_tests_properties(python_demo_refuses_foreign_launch PROPERTIES TIMEOUT 120
  ENVIRONMENT "${py_env}")

# The same under a real torchrun, where the Python has torch (skipped otherwise):
# torchrun_launch.sh checks that every rank exited with status 2 and exits 0 itself.
zipfcoll_add_test(NAME torchrun_python_demo_refuses LINE "every rank refused the launch"
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/torchrun/torchrun_launch.sh ${Python3_EXECUTABLE}
          refuses 2 ${Python3_EXECUTABLE} -m zipfcoll.demo -n 1)
set_tests_properties(torchrun_python_demo_refuses PROPERTIES TIMEOUT 120 PROCESSORS 2
  ENVIRONMENT "${py_env}" SKIP_RETURN_CODE 77)

# The README's examples (examples/python): NumPy always; PyTorch where it is installed.
set(examples "${PROJECT_SOURCE_DIR}/examples/python")
zipfcoll_add_test(NAME python_example_numpy_np3 LINE "rank 2 step 2: [0-9]+ of 1920 rows"
  COMMAND ${ZIPFCOLL_MPIEXEC} ${ZIPFCOLL_MPIEXEC_FLAGS} ${MPIEXEC_NUMPROC_FLAG} 3
          ${Python3_EXECUTABLE} ${examples}/embedding_sync_numpy.py)
set_tests_properties(python_example_numpy_np3 PROPERTIES TIMEOUT 120 PROCESSORS 3
  ENVIRONMENT "${py_env}")
zipfcoll_add_test(NAME python_example_torch_np2 LINE "step 2: [0-9]+ rows"
  NEEDS_PYTHON_MODULE ${Python3_EXECUTABLE} torch
  COMMAND ${ZIPFCOLL_MPIEXEC} ${ZIPFCOLL_MPIEXEC_FLAGS} ${MPIEXEC_NUMPROC_FLAG} 2
          ${Python3_EXECUTABLE} ${examples}/embedding_sync_torch.py)
set_tests_properties(python_example_torch_np2 PROPERTIES TIMEOUT 120 PROCESSORS 2
  ENVIRONMENT "${py_env}" SKIP_RETURN_CODE 77)

# zipfcoll.torch under a real torchrun, against torch's own collectives (a gloo process group)
# on the same gradients. Its communicators start over UCX.
if(ZIPFCOLL_HAVE_UCX)
  set(no_torch "echo 'skipped: PyTorch is not installed for ${Python3_EXECUTABLE}'; exit 77")
  foreach(np 1 2 3)
    add_test(NAME python_torch_np${np}
      COMMAND bash -c "${Python3_EXECUTABLE} -c 'import torch' 2>/dev/null || { ${no_torch}; }; OMP_NUM_THREADS=1 exec ${Python3_EXECUTABLE} -m torch.distributed.run --standalone --nproc-per-node=${np} -m pytest -q -p no:cacheprovider --color=no ${tests_dir}/torch")
    set_tests_properties(python_torch_np${np} PROPERTIES TIMEOUT 300 PROCESSORS ${np}
      ENVIRONMENT "${py_env}" SKIP_RETURN_CODE 77)
  endforeach()
  # The PyTorch comparison's short form (bench/run_torch.sh --short): the example under a
  # real torchrun at 2 ranks, DDP over gloo, DDP with the hook and a ShardedEmbedding, fp32
  # and fp16; the parameters of DDP and of the hook agree after 20 steps.
  zipfcoll_add_test(NAME python_torch_comparison_short_np2
    LINE "torch and the hook's parameters agree"
    COMMAND bash ${PROJECT_SOURCE_DIR}/bench/run_torch.sh --short --build ${CMAKE_BINARY_DIR}
            --python ${Python3_EXECUTABLE} --data "${PROJECT_SOURCE_DIR}/../shared/data")
  set_tests_properties(python_torch_comparison_short_np2 PROPERTIES TIMEOUT 600 PROCESSORS 2
    SKIP_RETURN_CODE 77)
endif()

# The packages: python -m build makes the sdist and the wheel from this checkout, and the
# wheel, installed into a fresh virtual environment, imports and runs two ranks over UCX.
if(ZIPFCOLL_HAVE_UCX)
  zipfcoll_add_test(NAME python_wheel LINE "the wheel installs and runs"
    COMMAND bash ${tests_dir}/wheel_install.sh ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}
            ${CMAKE_CURRENT_BINARY_DIR}/wheel ${zipfcoll_VERSION})
  set_tests_properties(python_wheel PROPERTIES TIMEOUT 900 PROCESSORS 2 SKIP_RETURN_CODE 77)
endif()
