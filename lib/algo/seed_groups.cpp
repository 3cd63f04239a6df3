#include "algo/seed_groups.hpp"

#include <cmath>
#include <set>
#include <vector>

#include "algo/agreement.hpp"
#include "algo/collective_call.hpp"
#include "algo/collectives.hpp"
#include "base/enum_value.hpp"
#include "host_device/philox.hpp"

namespace zfc {
namespace {

int rounded_log(double g, double base) {
  const long r = std::lround(std::log(g) / std::log(base));
  return r < 1 ? 1 : static_cast<int>(r);
}

}  // namespace

Status seed_group_count(zfcSeedPolicy_t policy_arg, double alpha, int ranks, int* count) {
  const int policy = enum_value(policy_arg);
  const double g = ranks;
  int s = 0;
  switch (policy) {
    case zfcSeedPower:
      if (!std::isfinite(alpha) || alpha < 0) {
        return error(zfcInvalidArgument, "alpha %g must be finite and >= 0 for zfcSeedPower",
                     alpha);
      }
      // The small tolerance keeps exact powers (G^alpha an integer) from rounding up.
      s = static_cast<int>(std::ceil(std::pow(g, alpha) - 1e-9));
      break;
    case zfcSeedLog2: s = rounded_log(g, 2.0); break;
    case zfcSeedLn: s = rounded_log(g, std::exp(1.0)); break;
    case zfcSeedLog10: s = rounded_log(g, 10.0); break;
    case zfcSeedAllSame: s = 1; break;
    case zfcSeedAllDistinct: s = ranks; break;
    case zfcSeedExplicit: s = 0; break;
    default:
      return error(zfcInvalidArgument, "seed policy %d is not a zfcSeedPolicy_t", policy);
  }
  if (policy != zfcSeedExplicit) s = s < 1 ? 1 : (s > ranks ? ranks : s);
  *count = s;
  return Status::Ok();
}

int seed_group_of(int rank, int ranks, int count) {
  return static_cast<int>(static_cast<int64_t>(rank) * count / ranks);
}

uint64_t step_seed(uint64_t base_seed, int group, uint64_t step) {
  return kernels::philox64(base_seed, step, static_cast<uint64_t>(group) + 1);
}

Status seed_group_create(zfcComm& comm, zfcSeedPolicy_t policy, double alpha,
                         int explicit_group, uint64_t base_seed,
                         std::unique_ptr<zfcSeedGroup>* out) {
  int count = 0;
  Status local = seed_group_count(policy, alpha, comm.size(), &count);
  if (local.ok() && policy == zfcSeedExplicit && explicit_group < 0) {
    local = error(zfcInvalidArgument, "explicit_group %d must be >= 0", explicit_group);
  }
  // The header carries what must match (policy, alpha, seed), in fields the generic
  // agreement leaves alone so that the messages below can name them, and this rank's
  // explicit group.
  LocalHeader mine{make_header(OpKind::kSeedGroup)};
  mine.key = static_cast<int32_t>(policy);
  mine.count = static_cast<int64_t>(base_seed);
  std::memcpy(&mine.capacity, &alpha, sizeof alpha);
  mine.color = explicit_group;
  header_fail(&mine, local);
  report_async_errors(comm, &mine);
  Agreed agreed;
  ZFC_RETURN_IF_ERROR(exchange_headers(*comm.transport, comm.workspace, mine, nullptr, 0,
                                       &agreed));
  ZFC_RETURN_IF_ERROR(agree(agreed.headers, comm.size(), agreed.messages));
  const OpHeader* all = agreed.headers;
  for (int r = 1; r < comm.size(); ++r) {
    if (all[r].key != all[0].key) {
      return error(zfcMismatch, "seed policy differs across ranks: rank 0 has %d, rank %d "
                   "has %d", all[0].key, r, all[r].key);
    }
    if (all[r].count != all[0].count) {
      return error(zfcMismatch, "base_seed differs across ranks: rank 0 has %llu, rank %d "
                   "has %llu", static_cast<unsigned long long>(all[0].count), r,
                   static_cast<unsigned long long>(all[r].count));
    }
    if (policy == zfcSeedPower && all[r].capacity != all[0].capacity) {
      double a0, ar;
      std::memcpy(&a0, &all[0].capacity, sizeof a0);
      std::memcpy(&ar, &all[r].capacity, sizeof ar);
      return error(zfcMismatch, "alpha differs across ranks: rank 0 has %g, rank %d has %g",
                   a0, r, ar);
    }
  }
  auto group = std::make_unique<zfcSeedGroup>();
  group->base_seed = base_seed;
  if (policy == zfcSeedExplicit) {
    std::set<int> named;
    for (int r = 0; r < comm.size(); ++r) named.insert(all[r].color);
    group->count = static_cast<int>(named.size());
    group->id = static_cast<int>(std::distance(named.begin(), named.find(explicit_group)));
  } else {
    group->count = count;
    group->id = seed_group_of(comm.rank(), comm.size(), count);
  }
  ZFC_RETURN_IF_ERROR(comm_split(comm, group->id, comm.rank(), &group->comm));
  *out = std::move(group);
  return Status::Ok();
}

}  // namespace zfc
