// The calls zipfcoll.torch's hook makes, from C++: a communicator made on the main thread;
// each step's collectives (two sparse tables and a dense buffer, as DDP hands over its
// buckets) made by one worker thread, in order, while the main thread goes on computing; and
// between steps a call of the main thread's own (the loss). Every result must have the bits
// of the same calls made by the main thread alone, and the run must be clean under
// ThreadSanitizer (the build-tsan part of scripts/run-tests.sh). One process per rank, over
// UCX, started as srun starts tasks (tests/launchers/srun_like.sh).
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "workload/random.hpp"
#include "workload/zipf.hpp"
#include "zipfcoll/zipfcoll.h"

namespace {

constexpr int kSteps = 4;
constexpr int64_t kVocab = 5000;
constexpr size_t kDim = 16, kTokens = 300, kDense = 20000;

// One worker thread running jobs first in, first out, as the hook's queue does.
class Worker {
 public:
  Worker() : thread_([this] { loop(); }) {}
  ~Worker() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  std::future<zfcResult_t> submit(std::function<zfcResult_t()> job) {
    std::packaged_task<zfcResult_t()> task(std::move(job));
    std::future<zfcResult_t> f = task.get_future();
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(std::move(task));
    }
    cv_.notify_one();
    return f;
  }

 private:
  void loop() {
    for (;;) {
      std::packaged_task<zfcResult_t()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return done_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        task = std::move(jobs_.front());
        jobs_.pop_front();
      }
      task();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<zfcResult_t()>> jobs_;
  bool done_ = false;
  std::thread thread_;
};

// A step's inputs on one rank, and what its calls return (copied out of the plans).
struct Step {
  std::vector<int64_t> ids[2];
  std::vector<float> rows[2], dense, loss;
  std::vector<int64_t> got_ids[2];
  std::vector<float> got_rows[2];
};

void make_inputs(int rank, int step, Step* s) {
  const zfc::workload::ZipfDistribution zipf(1.1, kVocab);
  for (int t = 0; t < 2; ++t) {
    const uint64_t seed = zfc::workload::mix_seed(100 + step, t, static_cast<uint64_t>(rank));
    const std::vector<int32_t> ids = zipf.draw(kTokens, seed);
    s->ids[t].assign(ids.begin(), ids.end());
    zfc::workload::SplitMix64 rng(seed);
    s->rows[t].resize(kTokens * kDim);
    for (float& x : s->rows[t]) x = static_cast<float>(rng.uniform() * 2 - 1);
  }
  zfc::workload::SplitMix64 rng(zfc::workload::mix_seed(7, step, static_cast<uint64_t>(rank)));
  s->dense.resize(kDense);
  for (float& x : s->dense) x = static_cast<float>(rng.uniform());
  s->loss = {static_cast<float>(rank + step), 1.0f};
}

zfcResult_t reduce(zfcSparsePlan_t plan, Step* s, int t) {
  zfcSparseResult_t r = ZFC_SPARSE_RESULT_INITIALIZER;
  const zfcResult_t e =
      zfcSparseReduce(plan, s->ids[t].data(), kTokens, s->rows[t].data(), &r, nullptr);
  if (e != zfcSuccess) return e;
  const auto* ids = static_cast<const int64_t*>(r.indices);
  s->got_ids[t].assign(ids, ids + r.num_unique);
  s->got_rows[t].assign(r.rows, r.rows + r.num_unique * kDim);
  return zfcSuccess;
}

zfcResult_t allreduce(zfcComm_t comm, std::vector<float>* v) {
  return zfcAllReduce(comm, v->data(), v->data(), v->size(), zfcFloat32, nullptr, nullptr,
                      nullptr);
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

bool same(const Step& a, const Step& b) {
  for (int t = 0; t < 2; ++t) {
    if (a.got_ids[t] != b.got_ids[t] || !same_bits(a.got_rows[t], b.got_rows[t])) return false;
  }
  return same_bits(a.dense, b.dense) && same_bits(a.loss, b.loss);
}

// The main thread's busy work while the worker communicates: the next step's inputs.
double compute(int rank, int step) {
  Step next;
  make_inputs(rank, step + 1, &next);
  double sum = 0;
  for (float x : next.dense) sum += x;
  return sum;
}

}  // namespace

int main() {
  zfcComm_t comm = nullptr;
  if (zfcCommInitFromEnv(&comm, nullptr) != zfcSuccess) {
    std::fprintf(stderr, "async_path: %s\n", zfcGetLastError(nullptr));
    return 1;
  }
  int rank = 0;
  zfcCommRank(comm, &rank);
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = kDim;
  cfg.vocab_size = kVocab;
  cfg.index_type = zfcInt64;
  zfcSparsePlan_t plans[2] = {nullptr, nullptr};
  for (zfcSparsePlan_t& p : plans) {
    if (zfcSparsePlanCreate(comm, &cfg, &p) != zfcSuccess) return 1;
  }
  auto fail = [&](const char* what) {
    std::fprintf(stderr, "async_path: rank %d: %s: %s\n", rank, what, zfcGetLastError(comm));
    return 1;
  };
  // The reference: every call on the main thread.
  std::vector<Step> want(kSteps);
  for (int step = 0; step < kSteps; ++step) {
    Step& s = want[step];
    make_inputs(rank, step, &s);
    if (reduce(plans[0], &s, 0) != zfcSuccess || reduce(plans[1], &s, 1) != zfcSuccess ||
        allreduce(comm, &s.dense) != zfcSuccess || allreduce(comm, &s.loss) != zfcSuccess) {
      return fail("a call on the main thread failed");
    }
  }
  // The same calls, the step's on the worker while the main thread computes.
  double busy = 0;
  {
    Worker worker;
    for (int step = 0; step < kSteps; ++step) {
      Step s;
      make_inputs(rank, step, &s);
      std::vector<std::future<zfcResult_t>> pending;
      pending.push_back(worker.submit([&] { return reduce(plans[0], &s, 0); }));
      pending.push_back(worker.submit([&] { return reduce(plans[1], &s, 1); }));
      pending.push_back(worker.submit([&] { return allreduce(comm, &s.dense); }));
      busy += compute(rank, step);
      for (std::future<zfcResult_t>& f : pending) {
        if (f.get() != zfcSuccess) return fail("a call on the worker failed");
      }
      // The loss: the main thread's own call, once the worker's are done.
      if (allreduce(comm, &s.loss) != zfcSuccess) return fail("the loss's allreduce failed");
      if (!same(s, want[step])) {
        std::fprintf(stderr, "async_path: rank %d: step %d differs from the main thread's\n",
                     rank, step);
        return 1;
      }
    }
  }
  for (zfcSparsePlan_t p : plans) zfcSparsePlanDestroy(p);
  if (zfcCommDestroy(comm) != zfcSuccess) return fail("zfcCommDestroy failed");
  std::printf("async_path: rank %d: %d steps on the worker, the same bits as on the main "
              "thread (which computed %.1f meanwhile)\n", rank, kSteps, busy);
  return 0;
}
