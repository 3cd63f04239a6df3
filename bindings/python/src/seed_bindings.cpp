// Seed groups and the log-uniform candidate sampler of sampled softmax.
#include <pybind11/numpy.h>

#include "arrays.hpp"
#include "config.hpp"
#include "errors.hpp"
#include "group_calls.hpp"
#include "handles.hpp"
#include "refusals.hpp"

namespace zfcpy {

zfcSeedGroup_t SeedGroup::get() const {
  if (handle_ == nullptr) raise_error(zfcInvalidUsage, "the seed group was destroyed");
  return handle_;
}

SeedGroup::~SeedGroup() {
  forget_comm_group();
  zfcSeedGroupDestroy(handle_);
}

// Before zfcSeedGroupDestroy, not after (as Comm::abort does): failing the Pendings may
// free a plan recorded in the group, which must happen while its communicator still exists
// (the library then refuses to free it, and it leaks, instead of touching freed memory).
void SeedGroup::forget_comm_group() {
  zfcComm_t c = nullptr;
  if (handle_ != nullptr && zfcSeedGroupInfo(handle_, nullptr, nullptr, &c) == zfcSuccess) {
    forget_group(c, "the seed group that owned the communicator was destroyed before the "
                 "communicator's group ended");
  }
}

void SeedGroup::destroy() {
  forget_comm_group();
  check(zfcSeedGroupDestroy(handle_), nullptr);
  handle_ = nullptr;
}

namespace {

std::unique_ptr<SeedGroup> make_group(py::object comm, py::object policy, double alpha,
                                      int explicit_group, uint64_t base_seed) {
  if (!py::isinstance<Comm>(comm)) raise_invalid("comm must be a zipfcoll.Comm");
  zfcComm_t c = comm.cast<Comm&>().get();
  zfcSeedPolicy_t p = zfcSeedAllSame;
  zfcSeedGroup_t g = nullptr;
  const Refusal how{c, "SeedGroup", false, [&] {
    return zfcSeedGroupCreate(c, p, alpha, explicit_group, base_seed, &g);
  }};
  py::object refused;
  checks_pass(how, [&] { p = seed_policy_of(policy); }, &refused);  // raised when refused
  zfcResult_t r;
  {
    py::gil_scoped_release unlocked;
    r = zfcSeedGroupCreate(c, p, alpha, explicit_group, base_seed, &g);
  }
  check(r, c);
  return std::make_unique<SeedGroup>(std::move(comm), g);
}

std::pair<int, int> info(const SeedGroup& g) {
  int id = 0, count = 0;
  check(zfcSeedGroupInfo(g.get(), &id, &count, nullptr), nullptr);
  return {id, count};
}

py::object group_comm(py::object self) {
  zfcComm_t c = nullptr;
  check(zfcSeedGroupInfo(self.cast<SeedGroup&>().get(), nullptr, nullptr, &c), nullptr);
  return py::cast(std::make_unique<Comm>(c, self));
}

py::object sample(uint64_t seed, int64_t vocab_size, size_t num_samples, bool unique,
                  py::handle targets) {
  py::array_t<int64_t> samples(static_cast<ssize_t>(num_samples));
  py::array_t<float> sample_expected(static_cast<ssize_t>(num_samples));
  std::unique_ptr<Array> t;
  py::object target_expected = py::none();
  if (!targets.is_none()) {
    t = borrow(targets, "targets", Access::kRead, nullptr);
    if (t->device) raise_invalid("targets must be host memory");
    if (t->dtype != Dtype::kInt64) raise_invalid("targets must hold int64 ids");
    target_expected = py::array_t<float>(static_cast<ssize_t>(t->size()));
  }
  float* te = t ? static_cast<float*>(target_expected.cast<py::array_t<float>>().mutable_data())
                : nullptr;
  uint64_t draws = 0;
  zfcResult_t r;
  {
    py::gil_scoped_release unlocked;
    r = zfcSampleLogUniform(seed, vocab_size, num_samples, unique ? 1 : 0,
                            samples.mutable_data(), sample_expected.mutable_data(),
                            t ? static_cast<const int64_t*>(t->data) : nullptr,
                            t ? t->size() : 0, te, &draws);
  }
  check(r, nullptr);
  return result_type("Samples")(samples, sample_expected, target_expected, draws);
}

}  // namespace

void bind_seed_groups(py::module_& m) {
  py::class_<SeedGroup>(m, "SeedGroup",
      "Ranks of one seed group draw the same sampled-softmax candidates each step, so the\n"
      "output embedding's gradient rows coincide across them and the unique exchange pays\n"
      "off for that table too.")
      .def(py::init(&make_group), py::arg("comm"), py::arg("policy") = "power",
           py::arg("alpha") = 0.64, py::kw_only(), py::arg("explicit_group") = -1,
           py::arg("base_seed") = 0,
           "Collective. Splits comm into S groups: policy 'power' (S = ceil(G^alpha)),\n"
           "'log2', 'ln', 'log10', 'all_same', 'all_distinct', or 'explicit' (each rank\n"
           "names its group in explicit_group). Rank r joins group floor(r * S / G).")
      .def_property_readonly("id", [](const SeedGroup& g) { return info(g).first; },
                             "This rank's group, in [0, count).")
      .def_property_readonly("count", [](const SeedGroup& g) { return info(g).second; },
                             "The number of groups S.")
      .def_property_readonly("comm", &group_comm,
                             "A Comm over this group's ranks (owned by the group).")
      .def("step_seed", [](const SeedGroup& g, uint64_t step) {
        uint64_t seed = 0;
        check(zfcSeedGroupStepSeed(g.get(), step, &seed), nullptr);
        return seed;
      }, py::arg("step"), "The group's sampler seed for `step`: equal on its ranks.")
      .def("destroy", &SeedGroup::destroy, "Local. Frees the group and its communicator.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](SeedGroup& g, py::object, py::object, py::object) {
        if (g.alive()) g.destroy();
      });
  m.def("step_seed", &zfcStepSeed, py::arg("base_seed"), py::arg("group"), py::arg("step"),
        "The seed of `step` for `group` of a run seeded with base_seed (Philox4x32-10).");
  m.def("sample_log_uniform", &sample, py::arg("seed"), py::arg("vocab_size"),
        py::arg("num_samples"), py::kw_only(), py::arg("unique") = true,
        py::arg("targets") = py::none(),
        "Local. num_samples ids from P(k) = log((k+2)/(k+1)) / log(V+1) (distinct with\n"
        "unique=True). Returns Samples(samples, sample_expected, target_expected,\n"
        "num_draws): the expected count of each sampled id and of each int64 target id.");
}

}  // namespace zfcpy
