#include "bootstrap/launch_env.hpp"

#include <cerrno>
#include <cstdlib>
#include <string>

namespace zfc {
namespace {

struct Lookup {
  EnvLookup get;
  void* context;
  // The first of ZIPFCOLL_<name>, <name>, then the alternative (mpirun's) name that is set.
  const char* find(const char* name, const char* alternative, std::string* used) const {
    const std::string prefixed = std::string("ZIPFCOLL_") + name;
    for (const std::string& n : {prefixed, std::string(name),
                                 std::string(alternative != nullptr ? alternative : "")}) {
      if (n.empty()) continue;
      const char* v = get(n.c_str(), context);
      if (v != nullptr && *v != '\0') {
        *used = n;
        return v;
      }
    }
    *used = name;
    return nullptr;
  }
};

Status read_int(const Lookup& env, const char* name, const char* alternative, bool required,
                long lo, long hi, int* out) {
  std::string used;
  const char* v = env.find(name, alternative, &used);
  if (v == nullptr) {
    if (!required) return Status::Ok();
    return error(zfcInvalidUsage, "%s is not set: launch with torchrun-style variables (RANK, "
                 "WORLD_SIZE, MASTER_ADDR, MASTER_PORT) or ZIPFCOLL_-prefixed ones", name);
  }
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || x < lo || x > hi) {
    return error(zfcInvalidUsage, "%s='%s' is not an integer in [%ld, %ld]", used.c_str(), v, lo,
                 hi);
  }
  *out = static_cast<int>(x);
  return Status::Ok();
}

const char* from_process(const char* name, void*) { return std::getenv(name); }

}  // namespace

Status read_launch_env(EnvLookup get, void* context, LaunchInfo* out) {
  const Lookup env{get, context};
  LaunchInfo info;
  ZFC_RETURN_IF_ERROR(
      read_int(env, "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", true, 1, 1 << 20, &info.size));
  ZFC_RETURN_IF_ERROR(
      read_int(env, "RANK", "OMPI_COMM_WORLD_RANK", true, 0, info.size - 1, &info.rank));
  ZFC_RETURN_IF_ERROR(read_int(env, "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", false, 0,
                               info.size - 1, &info.local_rank));
  ZFC_RETURN_IF_ERROR(read_int(env, "MASTER_PORT", nullptr, true, 1, 65535, &info.master_port));
  std::string used;
  const char* addr = env.find("MASTER_ADDR", nullptr, &used);
  if (addr == nullptr) {
    return error(zfcInvalidUsage, "MASTER_ADDR is not set: the host of rank 0, where the ranks "
                 "meet (with MASTER_PORT)");
  }
  info.master_addr = addr;
  const bool own_address = used != "MASTER_ADDR";
  env.find("MASTER_PORT", nullptr, &used);
  // torchrun writes str(True); any other value is a launcher that serves no store. A meeting
  // point of the caller's own (ZIPFCOLL_MASTER_ADDR or _PORT) is not the agent's store.
  const char* agent = get("TORCHELASTIC_USE_AGENT_STORE", context);
  info.agent_store = agent != nullptr && std::string(agent) == "True" && !own_address &&
                     used == "MASTER_PORT";
  if (info.agent_store) {
    const char* run = get("TORCHELASTIC_RUN_ID", context);
    info.run_id = run != nullptr && *run != '\0' ? run : "none";
    ZFC_RETURN_IF_ERROR(read_int(env, "TORCHELASTIC_RESTART_COUNT", nullptr, false, 0, 1 << 30,
                                 &info.restart_count));
  }
  *out = info;
  return Status::Ok();
}

Status read_launch_env(LaunchInfo* out) { return read_launch_env(from_process, nullptr, out); }

}  // namespace zfc
