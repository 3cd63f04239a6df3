# The plugins the shared library loads on first use: libzipfcoll-<kind>.so beside it, each
# built from the same sources as the code the static library links in, and each exporting
# only its table (plugin.map). The global property ZIPFCOLL_PLUGIN_TARGETS lists them for the
# installs (the project's, and the Python package's, which includes this project from above).

# zipfcoll_add_plugin(<kind> SOURCES <files>... LIBS <libraries>...)
function(zipfcoll_add_plugin kind)
  cmake_parse_arguments(P "" "" "SOURCES;LIBS" ${ARGN})
  set(target zipfcoll_plugin_${kind})
  add_library(${target} MODULE ${P_SOURCES}
    ${PROJECT_SOURCE_DIR}/common/host_device/status.cpp)
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME zipfcoll-${kind}
    PREFIX lib
    SUFFIX .so
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    # The transport's own libraries (libnccl in the CUDA toolkit's folder) stay findable
    # from an installed plugin.
    INSTALL_RPATH_USE_LINK_PATH ON)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/include
    ${ZIPFCOLL_GENERATED_INCLUDE} ${CMAKE_CURRENT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/common)
  target_compile_options(${target} PRIVATE
    $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wno-unused-parameter>)
  target_compile_definitions(${target} PRIVATE ${ZIPFCOLL_HAVE_DEFINITIONS})
  target_link_libraries(${target} PRIVATE ${P_LIBS})
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    target_link_options(${target} PRIVATE
      "LINKER:--version-script=${CMAKE_CURRENT_SOURCE_DIR}/plugin.map")
    if(NOT ZIPFCOLL_SANITIZE)
      target_link_options(${target} PRIVATE "LINKER:--no-undefined")
    endif()
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS
      "${CMAKE_CURRENT_SOURCE_DIR}/plugin.map")
  endif()
  # A program linked with the shared library finds its plugins when it is built.
  add_dependencies(zipfcoll ${target})
  set_property(GLOBAL APPEND PROPERTY ZIPFCOLL_PLUGIN_TARGETS ${target})
endfunction()

if(ZIPFCOLL_HAVE_MPI)
  zipfcoll_add_plugin(mpi
    SOURCES transport/mpi/mpi_transport.cpp transport/mpi/mpi_plugin.cpp transport/transport.cpp
    LIBS MPI::MPI_C)
endif()
if(ZIPFCOLL_HAVE_UCX)
  zipfcoll_add_plugin(ucx
    SOURCES transport/ucx/ucx_transport.cpp transport/ucx/ucx_world.cpp transport/ucx/ucx_plugin.cpp
      transport/peer_exit_watch.cpp transport/transport.cpp
    LIBS PkgConfig::UCX)
endif()
if(ZIPFCOLL_HAVE_NCCL)
  zipfcoll_add_plugin(nccl
    SOURCES transport/nccl/nccl_transport.cpp transport/nccl/nccl_plugin.cpp
      transport/transport.cpp ${PROJECT_SOURCE_DIR}/cuda/device_runtime.cpp
    LIBS zipfcoll_nccl_dep CUDA::cudart_static)
  target_include_directories(zipfcoll_plugin_nccl PRIVATE ${PROJECT_SOURCE_DIR}/cuda
    ${CUDAToolkit_INCLUDE_DIRS})
endif()
if(ZIPFCOLL_HAVE_HWLOC)
  zipfcoll_add_plugin(hwloc
    SOURCES topo/topology.cpp topo/topology_hwloc.cpp topo/hwloc_plugin.cpp
    LIBS PkgConfig::HWLOC ${ZIPFCOLL_CUDA_LIBS})
  if(ZIPFCOLL_HAVE_CUDA)
    target_include_directories(zipfcoll_plugin_hwloc PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  endif()
endif()
