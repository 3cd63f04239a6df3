#include "bootstrap/launch_env.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace zfc {
namespace {

// A variable's names: ZIPFCOLL_<name>, torchrun's <name>, then the launcher's, if any.
struct Names {
  const char* name;
  std::vector<const char*> launchers;
};
const Names kAddr{"MASTER_ADDR", {}};
const Names kPort{"MASTER_PORT", {}};

// A launcher's own names for the rank, the number of ranks and the local rank. The family is
// the first whose rank variable is set (and its `needs`), and all three come from it alone, so
// that one launcher's rank never pairs with another's size: Open MPI's (mpirun, inside a Slurm
// allocation too), Slurm's (srun's tasks carry SLURM_STEP_ID; a batch script's own
// SLURM_PROCID and SLURM_NTASKS, without it, are not a launch of tasks), PMIx's (prterun; srun
// --mpi=pmix sets Slurm's as well, which come first, so that its node list is read).
struct Family {
  const char* launcher;
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* needs;
};
const Family kFamilies[] = {
    {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     nullptr},
    {"srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_STEP_ID"},
    {"pmix", "PMIX_RANK", nullptr, nullptr, nullptr},
};

Names with_launcher(const char* name, const char* launcher_name) {
  Names n{name, {}};
  if (launcher_name != nullptr) n.launchers.push_back(launcher_name);
  return n;
}

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

const Family* family_of(const Lookup& env) {
  for (const Family& f : kFamilies) {
    if (env.value(f.rank) != nullptr && (f.needs == nullptr || env.value(f.needs) != nullptr)) {
      return &f;
    }
  }
  return nullptr;
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
  const Family* family = family_of(env);
  const Names size = with_launcher("WORLD_SIZE", family ? family->size : nullptr);
  const Names rank = with_launcher("RANK", family ? family->rank : nullptr);
  const Names local = with_launcher("LOCAL_RANK", family ? family->local_rank : nullptr);
  std::string rank_used;
  ZFC_RETURN_IF_ERROR(read_int(env, size, true, 1, 1 << 20, &info.size));
  ZFC_RETURN_IF_ERROR(read_int(env, rank, true, 0, info.size - 1, &info.rank, &rank_used));
  ZFC_RETURN_IF_ERROR(read_int(env, local, false, 0, info.size - 1, &info.local_rank));
  // The rank's own launcher meets as it says; a rank given as RANK or ZIPFCOLL_RANK is
  // torchrun's or the caller's, which give the meeting point too.
  const bool from_family = family != nullptr && rank_used == family->rank;
  info.launcher = from_family ? family->launcher : "torchrun";
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
