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
//        zfc_fault_trial --help
//
// Exit status: 0 when the communicator stayed whole (every call succeeded, or every rank
// reached the same zfcMismatch); the zfcResult_t of the failed call when a peer was lost (the
// rank has reported it and ends by itself); 64 for a bad command line; 65 when the
// communicator could not be made.
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/free_port.hpp"
#include "core/fault_hook.hpp"
#include "zipfcoll/zipfcoll.h"

namespace {

constexpr int kBadCommandLine = 64;
constexpr int kInitFailed = 65;

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

enum class Mode { kTrial, kFreePort, kNow };

// Fills *t from the command line. Returns -1 to run, else the status to exit with (0 after
// --help; kBadCommandLine after an error, which CLI11 prints naming the option).
int parse(int argc, char** argv, Trial* t, Mode* mode) {
  CLI::App app{"One fault trial of zipfcoll's fused sparse reduce (see fault_trials.sh)"};
  bool free_port = false, now = false;
  auto* fp = app.add_flag("--free-port", free_port, "print a free TCP port and exit");
  auto* nw = app.add_flag("--now", now, "print the steady clock the reports use (ns)");
  app.add_option("--launch", t->launch, "mpi: under mpirun; env: ranks started by a script")
      ->check(CLI::IsMember({"mpi", "env"}));
  app.add_option("--fault", t->fault, "what happens to the victim")
      ->check(CLI::IsMember({"kill", "stop", "exit", "extra", "none"}));
  app.add_option("--victim", t->victim, "the rank hit")->check(CLI::Range(0, 1 << 20));
  app.add_option("--call", t->call, "the call (0-based) in which it is hit")
      ->check(CLI::Range(0, 1000));
  app.add_option("--phase", t->phase, "the zfcPhase_t at whose start it is hit")
      ->check(CLI::Range(0, zfcNumPhases - 1));
  app.add_option("--algorithm", t->algorithm, "the zfcAlgorithm_t of the plan")
      ->check(CLI::Range(0, zfcNumAlgorithms - 1));
  // A trial must end: 0 (wait as long as the transport does) is refused.
  app.add_option("--timeout-ms", t->timeout_ms, "the communicator's timeout_ms")
      ->check(CLI::Range(1, 3600 * 1000));
  app.add_option("--report", t->report, "the folder the reports go to")
      ->check(CLI::ExistingDirectory);
  fp->excludes(nw);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kBadCommandLine;
  }
  *mode = free_port ? Mode::kFreePort : now ? Mode::kNow : Mode::kTrial;
  t->calls = t->call + 4;
  return -1;
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

// Writes this rank's report: what the calls returned, when, and what a call after a failure
// returns.
void report(zfcComm_t comm, const Trial& t, int rank, zfcResult_t r, int at) {
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
}

// Makes the communicator; on failure prints why, naming this process's rank where known.
zfcComm_t make_comm(const Trial& t, bool mpi) {
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.timeout_ms = t.timeout_ms;
  zfcComm_t comm = nullptr;
  MPI_Comm world = MPI_COMM_WORLD;
  const zfcResult_t made =
      mpi ? zfcCommInitMpi(&comm, &world, &cfg) : zfcCommInitFromEnv(&comm, &cfg);
  if (made == zfcSuccess) return comm;
  int rank = -1;
  if (mpi) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "zfc_fault_trial: rank %d: init failed: %s\n", rank,
               zfcGetLastError(nullptr));
  return nullptr;
}

int run_trial(const Trial& t) {
  const bool mpi = t.launch == "mpi";
  if (mpi) MPI_Init(nullptr, nullptr);
  zfcComm_t comm = make_comm(t, mpi);
  if (comm == nullptr) {
    std::fflush(nullptr);
    _exit(kInitFailed);  // MPI_Finalize would wait for ranks whose init went on
  }
  int rank = 0, size = 0;
  zfcCommRank(comm, &rank);
  zfcCommCount(comm, &size);
  if (t.victim >= size) {
    std::fprintf(stderr, "zfc_fault_trial: rank %d: --victim %d is not a rank of these %d\n",
                 rank, t.victim, size);
    zfcCommDestroy(comm);
    if (mpi) MPI_Finalize();
    return kBadCommandLine;
  }
  Striker striker{&t};
  if (rank == t.victim && t.fault != "extra" && t.fault != "none") {
    zfc::set_fault_hook(&strike, &striker);
  }
  int at = -1;
  const zfcResult_t r = run_calls(comm, t, rank, &at);
  report(comm, t, rank, r, at);
  if (r == zfcSuccess || r == zfcMismatch) {
    // The communicator is still whole: every rank reached the same verdict.
    zfcCommDestroy(comm);
    if (mpi) MPI_Finalize();
    return 0;
  }
  zfcCommAbort(comm);
  if (mpi) {
    // A peer is gone or stalled, and Open MPI 4.1 cannot leave it behind: MPI_Finalize
    // would wait for it. The report is written; the status says what was reported.
    std::fflush(nullptr);
    _exit(static_cast<int>(r));
  }
  return static_cast<int>(r);
}

}  // namespace

int main(int argc, char** argv) {
  Trial t;
  Mode mode = Mode::kTrial;
  const int parsed = parse(argc, argv, &t, &mode);
  if (parsed >= 0) return parsed;
  if (mode == Mode::kFreePort) return zfc::test::print_free_port();
  if (mode == Mode::kNow) {
    std::printf("%lld\n", static_cast<long long>(now_ns()));
    return 0;
  }
  return run_trial(t);
}
