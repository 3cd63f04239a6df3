// What the library's cost model predicted for the steps zfc_perf timed: the same inputs the
// library's zfcAlgoAuto sees (every rank's K and U_i, the step's U_g) and the communicator's
// agreed machine model, through zfcPredictSparseReduce.
#include <algorithm>

#include "perf_common.hpp"

int node_count(const PerfContext& ctx, zfcComm_t comm) {
  const int per_node = ctx.options.ranks_per_node;
  if (per_node > 0) return (ctx.ranks + per_node - 1) / per_node;
  int local = 1;
  zfcCommLocalRank(comm, nullptr, &local);
  return std::max(1, ctx.ranks / std::max(local, 1));
}

ModelRun predicted_seconds(const PerfContext& ctx, zfcComm_t comm, const std::vector<int>& ran,
                           const std::vector<double>& ui, const std::vector<double>& ug,
                           size_t tokens, zfcCompressionKind_t wire) {
  std::vector<double> sum = ui, most = ui;
  MPI_Allreduce(MPI_IN_PLACE, sum.data(), static_cast<int>(sum.size()), MPI_DOUBLE, MPI_SUM,
                MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, most.data(), static_cast<int>(most.size()), MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
  zfcMachineModel_t model = ZFC_MACHINE_MODEL_INITIALIZER;
  zfcResult_t r = zfcCommGetMachineModel(comm, &model);
  if (r != zfcSuccess) perf_fail("zfcCommGetMachineModel", r, comm);
  std::vector<double> seconds;
  for (size_t s = 0; s < ran.size(); ++s) {
    zfcStepShape_t shape = ZFC_STEP_SHAPE_INITIALIZER;
    shape.ranks = ctx.ranks;
    shape.nodes = node_count(ctx, comm);
    shape.tokens = static_cast<double>(tokens) * ctx.ranks;
    shape.max_tokens = static_cast<double>(tokens);
    shape.local_unique = sum[s];
    shape.max_local_unique = most[s];
    shape.global_unique = ug[s];
    shape.vocab_size = ctx.options.vocab;
    shape.dim = ctx.options.dim;
    shape.row_type = zfcFloat32;
    shape.compression = wire;
    zfcPrediction_t p = ZFC_PREDICTION_INITIALIZER;
    r = zfcPredictSparseReduce(&model, &shape, ran[s], &p);
    if (r != zfcSuccess) perf_fail("zfcPredictSparseReduce", r, comm);
    seconds.push_back(p.seconds);
  }
  ModelRun run;
  run.seconds = median(seconds);
  run.unique_sum = median(sum);
  run.unique_max = median(most);
  run.ranks_per_core = model.ranks_per_core;
  return run;
}
