// The Python objects around the C API's handles. A communicator made by the module is
// owned by its Comm; one that a seed group owns is shown through a Comm that keeps the
// group alive instead. Garbage collection never communicates: an owned communicator that
// was not destroyed (or aborted) is freed locally with zfcCommAbort.
#pragma once

#include <pybind11/pybind11.h>

#include <vector>

#include "zipfcoll/zipfcoll.h"

namespace py = pybind11;

namespace zfcpy {

class SparsePlan;

class Comm {
 public:
  Comm(zfcComm_t handle, py::object keeper) : handle_(handle), keeper_(std::move(keeper)) {}
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm();

  // The live handle; InvalidUsageError once destroyed or aborted.
  zfcComm_t get() const;
  bool owned() const { return keeper_.is_none(); }
  // Collective. Frees the plans made on it first (unless a result view of one is alive:
  // InvalidUsageError, nothing freed), so that a communicator and its plans may be destroyed
  // in either order.
  void destroy();
  void abort();    // local
  bool alive() const { return handle_ != nullptr; }
  int rank() const;
  // The plans made on it and not yet freed (SparsePlan registers itself).
  void add_plan(SparsePlan* p) { plans_.push_back(p); }
  void drop_plan(SparsePlan* p);

 private:
  zfcComm_t handle_;
  py::object keeper_;  // None, or the seed group that owns the communicator
  std::vector<SparsePlan*> plans_;
};

class SparsePlan {
 public:
  SparsePlan(py::object comm, const zfcSparsePlanConfig_t& config);
  SparsePlan(const SparsePlan&) = delete;
  SparsePlan& operator=(const SparsePlan&) = delete;
  ~SparsePlan();

  zfcSparsePlan_t get() const;
  Comm& comm() const { return comm_.cast<Comm&>(); }
  const zfcSparsePlanConfig_t& config() const { return config_; }
  // Frees the plan, or, while views of its results are alive, as soon as the last goes:
  // they point into its buffers.
  void destroy();
  // The owner of one result's views: counts as a live view until it is collected.
  static py::capsule view_owner(py::object plan);
  int live_views() const { return live_views_; }
  // Freed by its communicator's destroy: later calls say so, destroy() is a no-op.
  void free_with_comm();

 private:
  void release();
  py::object comm_;  // keeps the communicator alive for as long as the plan
  zfcSparsePlanConfig_t config_;
  zfcSparsePlan_t handle_ = nullptr;
  int live_views_ = 0;
  bool destroyed_ = false;
};

class SeedGroup {
 public:
  SeedGroup(py::object comm, zfcSeedGroup_t handle) : comm_(std::move(comm)), handle_(handle) {}
  SeedGroup(const SeedGroup&) = delete;
  SeedGroup& operator=(const SeedGroup&) = delete;
  ~SeedGroup();

  zfcSeedGroup_t get() const;
  bool alive() const { return handle_ != nullptr; }
  void destroy();

 private:
  void forget_comm_group();  // the group's communicator goes with it
  py::object comm_;
  zfcSeedGroup_t handle_;
};

void bind_comm(py::module_& m);
void bind_collectives(py::class_<Comm>& comm, py::module_& m);
void bind_groups(py::class_<Comm>& comm, py::module_& m);
void bind_plan(py::module_& m);
// After bind_plan: SparsePlan's table updates and the shard layout.
void bind_tables(py::module_& m);
void bind_seed_groups(py::module_& m);
void bind_workload(py::module_& m);

// The namedtuple types of zipfcoll/_results.py.
py::object result_type(const char* name);

}  // namespace zfcpy
