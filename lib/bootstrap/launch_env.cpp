#include "bootstrap/launch_env.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace zfc {
namespace {

// The names each launcher gives a variable, after ZIPFCOLL_<name> and torchrun's <name>, in
// the order they are tried: Open MPI's (mpirun, also under Slurm), PMIx's (Open MPI 5's
// prterun, srun --mpi=pmix), Slurm's (srun).
struct Names {
  const char* name;
  std::vector<const char*> launchers;
};
const Names kRank{"RANK", {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"}};
const Names kSize{"WORLD_SIZE", {"OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "SLURM_NPROCS"}};
const Names kLocalRank{"LOCAL_RANK", {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"}};
const Names kAddr{"MASTER_ADDR", {}};
const Names kPort{"MASTER_PORT", {}};

struct Lookup {
  EnvLookup get;
  void* context;
  const char* value(const std::string& name) const {
    const char* v = get(name.c_str(), context);
    return v != nullptr && *v != '\0' ? v : nullptr;
  }
  // The first of ZIPFCOLL_<name>, <name> and the launchers' names that is set; *used names it
  // (or is <name> when none is).
  const char* find(const Names& n, std::string* used) const {
    std::vector<std::string> all{std::string("ZIPFCOLL_") + n.name, n.name};
    for (const char* l : n.launchers) all.emplace_back(l);
    for (const std::string& name : all) {
      if (const char* v = value(name)) {
        *used = name;
        return v;
      }
    }
    *used = n.name;
    return nullptr;
  }
};

Status parse_int(const std::string& used, const char* v, long lo, long hi, int* out) {
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

Status read_int(const Lookup& env, const Names& n, bool required, long lo, long hi, int* out,
                std::string* used_out = nullptr) {
  std::string used;
  const char* v = env.find(n, &used);
  if (used_out != nullptr) *used_out = v != nullptr ? used : "";
  if (v == nullptr) {
    if (!required) return Status::Ok();
    return error(zfcInvalidUsage, "%s is not set: launch with torchrun, srun or mpirun, or set "
                 "torchrun's variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) or "
                 "ZIPFCOLL_-prefixed ones", n.name);
  }
  return parse_int(used, v, lo, hi, out);
}

// Which launcher started the process, from the variable its rank came from.
const char* launcher_of(const std::string& rank_variable) {
  if (rank_variable.rfind("OMPI_", 0) == 0) return "mpirun";
  if (rank_variable.rfind("PMIX_", 0) == 0) return "pmix";
  if (rank_variable.rfind("SLURM_", 0) == 0) return "srun";
  return "torchrun";
}

// A port every rank of one launch derives alike from its job's name: in [10000, 30000), below
// Linux's ephemeral ports (32768 up), so that no rank's own outgoing connection holds it.
int port_of_job(const std::string& job) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char ch : job) h = (h ^ ch) * 16777619u;
  return 10000 + static_cast<int>(h % 20000u);
}

// Where the ranks meet when MASTER_ADDR is not given: the launcher's first host when it says
// which host holds rank 0 (Slurm places task 0 on the step's first node), the loopback when
// all ranks share one host; "" when neither can be known.
std::string launcher_addr(const Lookup& env, const std::string& launcher, int size) {
  if (launcher == "srun") {
    for (const char* list : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
      if (const char* v = env.value(list)) return first_slurm_host(v);
    }
    return "";
  }
  if (launcher == "mpirun" || launcher == "pmix") {
    int local = 0;
    const char* v = env.value("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (v != nullptr && parse_int("", v, 1, 1 << 20, &local).ok() && local == size) {
      return "127.0.0.1";
    }
  }
  return "";
}

// The job's name, from which every rank derives the same port; "" when the launcher has none.
std::string launcher_job(const Lookup& env, const std::string& launcher) {
  if (launcher == "srun") {
    const char* job = env.value("SLURM_JOB_ID");
    const char* step = env.value("SLURM_STEP_ID");
    return job == nullptr ? "" : std::string("slurm:") + job + "." + (step ? step : "");
  }
  if (launcher == "mpirun" || launcher == "pmix") {
    for (const char* name : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"}) {
      if (const char* v = env.value(name)) return std::string("pmix:") + v;
    }
  }
  return "";
}

Status read_meeting_point(const Lookup& env, const std::string& launcher, LaunchInfo* info,
                          std::string* addr_used, std::string* port_used) {
  const char* addr = env.find(kAddr, addr_used);
  if (addr != nullptr) {
    info->master_addr = addr;
  } else {
    info->master_addr = launcher_addr(env, launcher, info->size);
    *addr_used = "";
    if (info->master_addr.empty()) {
      return error(zfcInvalidUsage, "MASTER_ADDR is not set: the host of rank 0, where the "
                   "ranks meet (with MASTER_PORT)%s", launcher == "torchrun" ? "" :
                   "; the launcher does not say which host runs rank 0 when the ranks span "
                   "several hosts");
    }
  }
  if (env.find(kPort, port_used) != nullptr || launcher == "torchrun") {
    return read_int(env, kPort, true, 1, 65535, &info->master_port);
  }
  const std::string job = launcher_job(env, launcher);
  if (job.empty()) {
    return error(zfcInvalidUsage, "MASTER_PORT is not set and %s names no job to derive one "
                 "from: set MASTER_PORT (or ZIPFCOLL_MASTER_PORT) alike on every rank",
                 launcher.c_str());
  }
  info->master_port = port_of_job(job);
  *port_used = "";
  return Status::Ok();
}

const char* from_process(const char* name, void*) { return std::getenv(name); }

}  // namespace

std::string first_slurm_host(const std::string& list) {
  std::string host;
  for (size_t i = 0; i < list.size() && list[i] != ','; ++i) {
    if (list[i] != '[') {
      host += list[i];
      continue;
    }
    // A range list "01-04,07": its first number, its zero padding kept.
    const size_t close = list.find(']', i);
    const std::string ranges = list.substr(i + 1, close == std::string::npos ? std::string::npos
                                                                            : close - i - 1);
    host += ranges.substr(0, ranges.find_first_of(",-"));
    if (close == std::string::npos) break;
    i = close;
  }
  return host;
}

Status read_launch_env(EnvLookup get, void* context, LaunchInfo* out) {
  const Lookup env{get, context};
  LaunchInfo info;
  std::string rank_used;
  ZFC_RETURN_IF_ERROR(read_int(env, kSize, true, 1, 1 << 20, &info.size));
  ZFC_RETURN_IF_ERROR(read_int(env, kRank, true, 0, info.size - 1, &info.rank, &rank_used));
  ZFC_RETURN_IF_ERROR(read_int(env, kLocalRank, false, 0, info.size - 1, &info.local_rank));
  info.launcher = launcher_of(rank_used);
  std::string addr_used, port_used;
  ZFC_RETURN_IF_ERROR(read_meeting_point(env, info.launcher, &info, &addr_used, &port_used));
  // torchrun writes str(True); any other value is a launcher that serves no store. A meeting
  // point of the caller's own (ZIPFCOLL_MASTER_ADDR or _PORT) is not the agent's store.
  const char* agent = get("TORCHELASTIC_USE_AGENT_STORE", context);
  info.agent_store = agent != nullptr && std::string(agent) == "True" &&
                     addr_used == "MASTER_ADDR" && port_used == "MASTER_PORT";
  if (info.agent_store) {
    const char* run = get("TORCHELASTIC_RUN_ID", context);
    info.run_id = run != nullptr && *run != '\0' ? run : "none";
    ZFC_RETURN_IF_ERROR(read_int(env, Names{"TORCHELASTIC_RESTART_COUNT", {}}, false, 0,
                                 1 << 30, &info.restart_count));
  }
  *out = info;
  return Status::Ok();
}

Status read_launch_env(LaunchInfo* out) { return read_launch_env(from_process, nullptr, out); }

}  // namespace zfc
