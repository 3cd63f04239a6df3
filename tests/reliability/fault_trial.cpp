// One fault trial: the ranks run fused sparse reduces; one rank (the victim) is killed,
// stopped, ends its process, or calls an extra collective, at a chosen phase of a chosen
// call. Every rank that is still running writes what its collective returned, and when,
// to REPORT_DIR/rank<R>.txt; the victim writes its fault's time to REPORT_DIR/fault.txt just
// before it acts. tests/reliability/fault_trials.sh runs the trials and judges them.
//
// usage: zfc_fault_trial --launch mpi|env --fault kill|stop|exit|extra|none --victim R
//                        --call C --phase P --algorithm A --timeout-ms T --report DIR
//        zfc_fault_trial --free-port   (a free TCP port, for ranks started without mpirun)
//        zfc_fault_trial --now         (the steady clock the reports use, in ns)
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/free_port.hpp"
#include "core/fault_hook.hpp"
#include "zipfcoll/zipfcoll.h"

namespace {

struct Trial {
  std::string launch = "mpi";
  std::string fault = "none";
  int victim = 1;
  int call = 1;      // the victim's fault comes in this call (0-based) ...
  int phase = 0;     // ... as this zfcPhase_t begins
  int algorithm = zfcAlgoUniqueAllReduce;
  int timeout_ms = 2000;
  int calls = 6;
  std::string report = ".";
};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void write_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return;
  std::fputs(text.c_str(), f);
  std::fclose(f);
  std::rename(tmp.c_str(), path.c_str());  // the harness never reads half a line
}

// The victim's hook: counts calls by their zfcPhaseTotal, and at the chosen phase of the
// chosen call records the moment and strikes.
struct Striker {
  const Trial* trial;
  int calls_started = 0;
  bool struck = false;
};

void strike(zfcPhase_t phase, void* arg) {
  auto* s = static_cast<Striker*>(arg);
  if (phase == zfcPhaseTotal) ++s->calls_started;
  const Trial& t = *s->trial;
  if (s->struck || s->calls_started != t.call + 1 || phase != t.phase) return;
  s->struck = true;
  write_file(t.report + "/fault.txt", std::to_string(now_ns()) + " " +
                                          std::to_string(getpid()) + "\n");
  if (t.fault == "kill") raise(SIGKILL);
  if (t.fault == "stop") raise(SIGSTOP);
  if (t.fault == "exit") _exit(0);
}

bool parse(int argc, char** argv, Trial* t) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--launch") t->launch = v;
    else if (k == "--fault") t->fault = v;
    else if (k == "--victim") t->victim = std::atoi(v.c_str());
    else if (k == "--call") t->call = std::atoi(v.c_str());
    else if (k == "--phase") t->phase = std::atoi(v.c_str());
    else if (k == "--algorithm") t->algorithm = std::atoi(v.c_str());
    else if (k == "--timeout-ms") t->timeout_ms = std::atoi(v.c_str());
    else if (k == "--report") t->report = v;
    else return false;
  }
  t->calls = t->call + 4;
  return true;
}

// One step's indices: a skewed draw, different on every rank and call.
std::vector<int32_t> step_indices(int rank, int call, int64_t vocab) {
  std::vector<int32_t> idx(512);
  uint64_t x = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(rank * 131 + call + 1);
  for (auto& v : idx) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const double u = static_cast<double>(x % 1000003) / 1000003.0;
    v = static_cast<int32_t>(static_cast<double>(vocab) * u * u * u);
  }
  return idx;
}

// Runs the calls until one fails; returns it (zfcSuccess when all ran). *at is the call.
zfcResult_t run_calls(zfcComm_t comm, const Trial& t, int rank, int* at) {
  zfcSparsePlanConfig_t pc = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  pc.dim = 16;
  pc.vocab_size = 5000;
  pc.algorithm = t.algorithm;
  zfcSparsePlan_t plan = nullptr;
  zfcResult_t r = zfcSparsePlanCreate(comm, &pc, &plan);
  for (int c = 0; c < t.calls && r == zfcSuccess; ++c) {
    *at = c;
    if (t.fault == "extra" && rank == t.victim && c == t.call) {
      // A collective the other ranks do not make, here.
      float v = 1.0f, sum = 0.0f;
      r = zfcAllReduce(comm, &v, &sum, 1, zfcFloat32, nullptr, nullptr, nullptr);
      if (r != zfcSuccess) break;
    }
    const std::vector<int32_t> idx = step_indices(rank, c, pc.vocab_size);
    const std::vector<float> rows(idx.size() * pc.dim, 0.25f);
    zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
    r = zfcSparseReduce(plan, idx.data(), idx.size(), rows.data(), &out, nullptr);
  }
  zfcSparsePlanDestroy(plan);  // local, also after a failure
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--free-port") == 0) {
    return zfc::test::print_free_port();
  }
  if (argc == 2 && std::strcmp(argv[1], "--now") == 0) {
    std::printf("%lld\n", static_cast<long long>(now_ns()));
    return 0;
  }
  Trial t;
  if (!parse(argc, argv, &t)) {
    std::fprintf(stderr, "zfc_fault_trial: bad arguments\n");
    return 2;
  }
  const bool mpi = t.launch == "mpi";
  if (mpi) MPI_Init(&argc, &argv);
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.timeout_ms = t.timeout_ms;
  zfcComm_t comm = nullptr;
  MPI_Comm world = MPI_COMM_WORLD;
  const zfcResult_t made =
      mpi ? zfcCommInitMpi(&comm, &world, &cfg) : zfcCommInitFromEnv(&comm, &cfg);
  if (made != zfcSuccess) {
    std::fprintf(stderr, "init: %s\n", zfcGetLastError(nullptr));
    return 1;
  }
  int rank = 0;
  zfcCommRank(comm, &rank);
  Striker striker{&t};
  if (rank == t.victim && t.fault != "extra" && t.fault != "none") {
    zfc::set_fault_hook(&strike, &striker);
  }
  int at = -1;
  const zfcResult_t r = run_calls(comm, t, rank, &at);
  const int64_t when = now_ns();
  const std::string message = zfcGetLastError(comm);
  // After a failure that may have left peers mid-call, the communicator refuses more work
  // (zfcInvalidUsage) instead of waiting again.
  int then = zfcSuccess;
  if (r != zfcSuccess && r != zfcMismatch) {
    float v = 1.0f, sum = 0.0f;
    then = zfcAllReduce(comm, &v, &sum, 1, zfcFloat32, nullptr, nullptr, nullptr);
  }
  char line[768];
  // code, time (ns), call, the code of a call after it, then the text:
  // "8 1234 call 2 then 2 timeout: rank 0: ..."
  std::snprintf(line, sizeof line, "%d %lld call %d then %d %s: %s\n", static_cast<int>(r),
                static_cast<long long>(when), at, then, zfcGetErrorString(r), message.c_str());
  write_file(t.report + "/rank" + std::to_string(rank) + ".txt", line);
  if (r == zfcSuccess || r == zfcMismatch) {
    // The communicator is still whole: every rank reached the same verdict.
    zfcCommDestroy(comm);
    if (mpi) MPI_Finalize();
    return 0;
  }
  zfcCommAbort(comm);
  if (mpi) {
    // Under mpirun, a process that ends now would have the job torn down before the other
    // survivors report; the harness ends the job once every survivor has reported.
    sleep(static_cast<unsigned>(t.timeout_ms / 1000 + 30));
    return 1;
  }
  return 0;
}
