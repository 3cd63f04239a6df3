// Seed groups for sampled softmax: how many groups a policy asks for, which group a rank
// joins, and the group's communicator and per-step seeds.
#pragma once

#include <cstdint>
#include <memory>

#include "core/comm.hpp"

struct zfcSeedGroup {
  int id = 0;
  int count = 1;
  uint64_t base_seed = 0;
  std::unique_ptr<zfcComm> comm;
};

namespace zfc {

// S for `policy` on `ranks` ranks (explicit: not decided here, 0). zfcInvalidArgument for an
// unknown policy or, for zfcSeedPower, an alpha that is not finite and >= 0.
Status seed_group_count(zfcSeedPolicy_t policy, double alpha, int ranks, int* count);

// The group of rank r of G ranks in S groups: floor(r * S / G).
int seed_group_of(int rank, int ranks, int count);

// Collective: agrees on the arguments, assigns this rank's group and splits the communicator.
Status seed_group_create(zfcComm& comm, zfcSeedPolicy_t policy, double alpha,
                         int explicit_group, uint64_t base_seed,
                         std::unique_ptr<zfcSeedGroup>* out);

uint64_t step_seed(uint64_t base_seed, int group, uint64_t step);

}  // namespace zfc
