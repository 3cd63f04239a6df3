// The C API's answers to the calls the Python tests make (tests/mpi/test_c_api_identity.py),
// on the same inputs (tests/inputs.py builds them from the same formulas), written as raw
// files <dir>/<name>.r<rank>.bin for the tests to compare bit for bit.
//   mpirun -np G zfc_py_reference DIR
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "zipfcoll/zipfcoll.h"

namespace {

constexpr int64_t kVocab = 1000;
constexpr size_t kDim = 5;
constexpr size_t kDense = 1001;

std::string g_dir;
int g_rank = 0;

void require(zfcResult_t r, const char* what, zfcComm_t comm) {
  if (r == zfcSuccess) return;
  std::fprintf(stderr, "rank %d: %s: %s\n", g_rank, what, zfcGetLastError(comm));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

template <class T>
void save(const std::string& name, const T* data, size_t n) {
  const std::string path = g_dir + "/" + name + ".r" + std::to_string(g_rank) + ".bin";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(data, sizeof(T), n, f) != n || std::fclose(f) != 0) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}
template <class T>
void save(const std::string& name, const std::vector<T>& v) { save(name, v.data(), v.size()); }

// The inputs, as tests/inputs.py writes them.
size_t token_count(int r) { return 257 + 31 * static_cast<size_t>(r); }
std::vector<int32_t> indices(int r) {
  std::vector<int32_t> v(token_count(r));
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    v[i] = static_cast<int32_t>(((i * i + 3 * r * i + 7 * r) % 911) % (40 + i));
  }
  return v;
}
std::vector<float> rows(int r, size_t count) {
  std::vector<float> v(count * kDim);
  for (size_t i = 0; i < count; ++i) {
    for (size_t j = 0; j < kDim; ++j) {
      const auto v61 = static_cast<int64_t>((i * 31 + j * 17 + r * 7) % 61);
      v[i * kDim + j] = static_cast<float>(v61 - 30) / 8.0f;
    }
  }
  return v;
}
std::vector<float> dense_values(int r) {
  std::vector<float> v(kDense);
  for (size_t n = 0; n < kDense; ++n) {
    v[n] = static_cast<float>(static_cast<int64_t>((n * 13 + r * 5) % 37) - 18) / 4.0f;
  }
  return v;
}

void allreduces(zfcComm_t comm, int size) {
  const std::vector<float> x = dense_values(g_rank);
  const struct { const char* name; zfcCompression_t how; } kinds[] = {
      {"none", {zfcCompressNone, 1.0f}}, {"fp16", {zfcCompressFp16, 4.0f}},
      {"bf16", {zfcCompressBf16, 1.0f}}, {"int8", {zfcCompressInt8, 1.0f}},
      {"fp8_e4m3", {zfcCompressFp8E4M3, 1.0f}}};
  for (const auto& k : kinds) {
    std::vector<float> out(kDense);
    int over = -1;
    require(zfcAllReduce(comm, x.data(), out.data(), kDense, zfcFloat32, &k.how, &over,
                         nullptr), "zfcAllReduce", comm);
    save(std::string("allreduce_") + k.name, out);
    save(std::string("allreduce_") + k.name + "_overflow", &over, 1);
  }
  std::vector<float> big = x;
  if (g_rank == size - 1) big[3] = 1e30f;
  const zfcCompression_t fp16{zfcCompressFp16, 1.0f};
  int over = -1;
  require(zfcAllReduce(comm, big.data(), big.data(), kDense, zfcFloat32, &fp16, &over, nullptr),
          "zfcAllReduce", comm);
  save("allreduce_overflow_flag", &over, 1);
}

void sparse_reduces(zfcComm_t comm, const std::vector<int32_t>& idx, const std::vector<float>& r) {
  const char* algos[] = {"allgather",         "unique_allreduce", "unique_allgather",
                         "owner_partitioned", "dense_vocab",      "key_routed"};
  const int codes[] = {zfcAlgoAllGather,        zfcAlgoUniqueAllReduce, zfcAlgoUniqueAllGather,
                       zfcAlgoOwnerPartitioned, zfcAlgoDenseVocab,      zfcAlgoKeyRouted};
  for (int a = 0; a < 6; ++a) {
    for (int c = 0; c < 2; ++c) {
      zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
      cfg.dim = kDim;
      cfg.vocab_size = kVocab;
      cfg.algorithm = codes[a];
      cfg.compression = c == 0 ? zfcCompressNone : zfcCompressFp16;
      cfg.compress_scale = 2.0f;
      zfcSparsePlan_t plan = nullptr;
      require(zfcSparsePlanCreate(comm, &cfg, &plan), "zfcSparsePlanCreate", comm);
      zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
      require(zfcSparseReduce(plan, idx.data(), idx.size(), r.data(), &out, nullptr),
              "zfcSparseReduce", comm);
      const std::string name = std::string("sparse_") + algos[a] + (c == 0 ? "_none" : "_fp16");
      save(name + "_indices", static_cast<const int32_t*>(out.indices), out.num_unique);
      save(name + "_rows", out.rows, out.num_unique * kDim);
      zfcStats_t s = ZFC_STATS_INITIALIZER;
      require(zfcCommGetStats(comm, &s), "zfcCommGetStats", comm);
      const uint64_t bytes[3] = {s.last.bytes_sent, s.last.bytes_received,
                                 s.last.peak_workspace_bytes};
      save(name + "_stats", bytes, 3);
      if (codes[a] == zfcAlgoUniqueAllReduce && c == 0) {
        std::vector<float> table(kVocab * kDim, 0.5f);
        require(zfcApplyRows(table.data(), kVocab, kDim, out.indices, zfcInt32, out.rows,
                             out.num_unique, -0.25f, nullptr), "zfcApplyRows", nullptr);
        save("apply_rows_table", table);
      }
      zfcSparsePlanDestroy(plan);
    }
  }
}

void seeds_and_samples(zfcComm_t comm, const std::vector<int32_t>& idx) {
  std::vector<int64_t> targets(idx.begin(), idx.begin() + 10);
  std::vector<int64_t> samples(50);
  std::vector<float> expected(50), target_expected(10);
  uint64_t draws = 0;
  require(zfcSampleLogUniform(1234 + g_rank, kVocab, 50, 1, samples.data(), expected.data(),
                              targets.data(), targets.size(), target_expected.data(), &draws),
          "zfcSampleLogUniform", nullptr);
  save("sampler_samples", samples);
  save("sampler_expected", expected);
  save("sampler_target_expected", target_expected);
  save("sampler_draws", &draws, 1);
  zfcSeedGroup_t group = nullptr;
  require(zfcSeedGroupCreate(comm, zfcSeedPower, 0.64, -1, 99, &group), "zfcSeedGroupCreate",
          comm);
  int info[2] = {0, 0};
  zfcSeedGroupInfo(group, &info[0], &info[1], nullptr);
  save("seed_group_info", info, 2);
  uint64_t seed = 0;
  zfcSeedGroupStepSeed(group, 7, &seed);
  save("seed_group_step_seed", &seed, 1);
  zfcSeedGroupDestroy(group);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: zfc_py_reference DIR\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  g_dir = argv[1];
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm world = MPI_COMM_WORLD;
  zfcComm_t comm = nullptr;
  require(zfcCommInitMpi(&comm, &world, nullptr), "zfcCommInitMpi", nullptr);

  const std::vector<int32_t> idx = indices(g_rank);
  const std::vector<float> r = rows(g_rank, idx.size());
  std::vector<int32_t> unique(kVocab), positions(idx.size());
  size_t num_unique = 0;
  require(zfcUniqueMerge(comm, idx.data(), zfcInt32, idx.size(), kVocab, unique.data(),
                         unique.size(), &num_unique, positions.data(), nullptr),
          "zfcUniqueMerge", comm);
  save("unique_merge_unique", unique.data(), num_unique);
  save("unique_merge_positions", positions);
  std::vector<float> dense(num_unique * kDim);
  require(zfcScatterToDense(r.data(), zfcFloat32, positions.data(), idx.size(), kDim,
                            dense.data(), num_unique, nullptr), "zfcScatterToDense", nullptr);
  save("scatter_to_dense", dense);
  allreduces(comm, size);
  sparse_reduces(comm, idx, r);
  seeds_and_samples(comm, idx);
  require(zfcCommDestroy(comm), "zfcCommDestroy", nullptr);
  MPI_Finalize();
  return 0;
}
