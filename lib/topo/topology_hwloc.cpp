// The topology as hwloc reads it: in the static library, or in the plugin libzipfcoll-hwloc.so
// that the shared library loads on first use.
#include <hwloc.h>

#include "topo/topology.hpp"
#if ZIPFCOLL_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <hwloc/cudart.h>
#endif

namespace zfc {
namespace {

// "; GPU 0 near cores 0-15 (NUMA 0)" for the current CUDA device, or "" without one.
std::string gpu_locality(hwloc_topology_t topo) {
#if ZIPFCOLL_HAVE_CUDA
  int device = -1, count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 ||
      cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  hwloc_bitmap_t near = hwloc_bitmap_alloc();
  std::string out;
  if (hwloc_cudart_get_device_cpuset(topo, device, near) == 0) {
    std::vector<int> cores, numa;
    const int n_cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    for (int c = 0; c < n_cores; ++c) {
      hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(c));
      if (core != nullptr && hwloc_bitmap_intersects(core->cpuset, near)) cores.push_back(c);
    }
    const int n_numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    for (int n = 0; n < n_numa; ++n) {
      hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(n));
      if (node != nullptr && hwloc_bitmap_intersects(node->cpuset, near)) numa.push_back(n);
    }
    out = "; GPU " + std::to_string(device) + " near cores " + index_ranges(cores) + " (NUMA " +
          index_ranges(numa) + ")";
  }
  hwloc_bitmap_free(near);
  return out;
#else
  (void)topo;
  return "";
#endif
}

}  // namespace

bool read_hwloc_topology(int local_rank, int local_size, bool bind, Topology* out) {
  Topology& t = *out;
  t = Topology();
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0) {
    t.summary = "topology unknown: hwloc could not load this machine's topology";
    return true;
  }
  t.cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  t.hardware_threads = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  t.numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  if (t.cores <= 0) t.cores = t.hardware_threads;
  t.rank_cores = share_cores(t.cores, local_rank, local_size);
  hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
  for (int c : t.rank_cores) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(c));
    if (core == nullptr) core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(c));
    if (core != nullptr) hwloc_bitmap_or(cpus, cpus, core->cpuset);
  }
  for (int n = 0; n < t.numa_nodes; ++n) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(n));
    if (node != nullptr && hwloc_bitmap_intersects(node->cpuset, cpus)) t.rank_numa.push_back(n);
  }
  const std::string gpu = gpu_locality(topo);
  if (bind && !hwloc_bitmap_iszero(cpus)) {
    t.bound = hwloc_set_cpubind(topo, cpus, HWLOC_CPUBIND_PROCESS) == 0;
  }
  hwloc_bitmap_free(cpus);
  hwloc_topology_destroy(topo);
  t.summary = describe_topology(t, local_rank, local_size, "hwloc") + gpu;
  return true;
}

bool hwloc_available() { return true; }

}  // namespace zfc
