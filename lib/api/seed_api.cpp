// Seed groups and the candidate sampler.
#include <algorithm>
#include <vector>

#include "algo/call_group.hpp"
#include "algo/seed_groups.hpp"
#include "api/api_guard.hpp"
#include "kernels/log_uniform.hpp"

using zfc::error;
using zfc::Status;

extern "C" {

zfcResult_t zfcSeedGroupCreate(zfcComm_t comm, zfcSeedPolicy_t policy, double alpha,
                               int explicit_group, uint64_t base_seed, zfcSeedGroup_t* group) {
  return zfc::guarded(comm, [&]() -> Status {
    if (comm == nullptr) return zfc::null_handle("comm");
    if (comm->group_depth > 0) return zfc::refuse_in_group(*comm, "zfcSeedGroupCreate");
    std::unique_ptr<zfcSeedGroup> created;
    // A NULL `group` is refused after the collective part, so every rank fails alike.
    ZFC_RETURN_IF_ERROR(
        zfc::seed_group_create(*comm, policy, alpha, explicit_group, base_seed, &created));
    if (group == nullptr) return zfc::null_handle("group");
    *group = created.release();
    return Status::Ok();
  });
}

zfcResult_t zfcSeedGroupInfo(zfcSeedGroup_t group, int* id, int* count,
                             zfcComm_t* group_comm) {
  return zfc::guarded(nullptr, [&]() -> Status {
    if (group == nullptr) return zfc::null_handle("group");
    if (id != nullptr) *id = group->id;
    if (count != nullptr) *count = group->count;
    if (group_comm != nullptr) *group_comm = group->comm.get();
    return Status::Ok();
  });
}

uint64_t zfcStepSeed(uint64_t base_seed, int group, uint64_t step) {
  return zfc::step_seed(base_seed, group, step);
}

zfcResult_t zfcSeedGroupStepSeed(zfcSeedGroup_t group, uint64_t step, uint64_t* seed) {
  return zfc::guarded(nullptr, [&] {
    if (group == nullptr) return zfc::null_handle("group");
    if (seed == nullptr) return zfc::null_handle("seed");
    *seed = zfc::step_seed(group->base_seed, group->id, step);
    return Status::Ok();
  });
}

zfcResult_t zfcSeedGroupDestroy(zfcSeedGroup_t group) {
  delete group;
  return zfcSuccess;
}

zfcResult_t zfcSampleLogUniform(uint64_t seed, int64_t vocab_size, size_t num_samples,
                                int unique, int64_t* samples, float* sample_expected,
                                const int64_t* targets, size_t num_targets,
                                float* target_expected, uint64_t* num_draws) {
  return zfc::guarded(nullptr, [&]() -> Status {
    if (vocab_size < 1) {
      return error(zfcInvalidArgument, "vocab_size %lld must be >= 1",
                   static_cast<long long>(vocab_size));
    }
    if (num_samples > 0 && samples == nullptr) return zfc::null_handle("samples");
    if (unique && num_samples > static_cast<uint64_t>(vocab_size)) {
      return error(zfcInvalidArgument, "%zu unique samples from a vocabulary of %lld",
                   num_samples, static_cast<long long>(vocab_size));
    }
    if (num_targets > 0 && target_expected != nullptr && targets == nullptr) {
      return zfc::null_handle("targets");
    }
    for (size_t t = 0; t < num_targets && target_expected != nullptr; ++t) {
      if (targets[t] < 0 || targets[t] >= vocab_size) {
        return error(zfcInvalidArgument, "targets[%zu] = %lld is outside [0, %lld)", t,
                     static_cast<long long>(targets[t]), static_cast<long long>(vocab_size));
      }
    }
    std::vector<uint8_t> seen(unique ? static_cast<size_t>(vocab_size) : 0);
    std::vector<int64_t> drawn(num_samples);
    uint64_t draws = 0;
    zfc::kernels::log_uniform_sample(seed, vocab_size, num_samples, unique != 0, drawn.data(),
                                     &draws, seen.data());
    // Outputs only on success: everything is computed before anything is written.
    std::copy(drawn.begin(), drawn.end(), samples);
    for (size_t i = 0; i < num_samples && sample_expected != nullptr; ++i) {
      sample_expected[i] = static_cast<float>(
          zfc::kernels::log_uniform_expected_count(drawn[i], vocab_size, draws, unique != 0));
    }
    for (size_t t = 0; t < num_targets && target_expected != nullptr; ++t) {
      target_expected[t] = static_cast<float>(
          zfc::kernels::log_uniform_expected_count(targets[t], vocab_size, draws, unique != 0));
    }
    if (num_draws != nullptr) *num_draws = draws;
    return Status::Ok();
  });
}

}  // extern "C"
