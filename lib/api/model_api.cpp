// The cost model through the C API.
#include <cstddef>
#include <cstring>

#include "algo/cost_model.hpp"
#include "api/api_guard.hpp"
#include "core/comm.hpp"
#include "kernels/cast.hpp"
#include "kernels/wire_format.hpp"

using zfc::error;
using zfc::Status;

namespace {

// The layouts of zfcMachineModel_t, oldest first: 0.4.0's ended before ranks_per_core.
const size_t kModelLayouts[] = {offsetof(zfcMachineModel_t, ranks_per_core),
                                sizeof(zfcMachineModel_t)};

// The caller's model in the current layout (a 0.4.0 one reads as one rank per core).
Status read_model(const zfcMachineModel_t& user, zfcMachineModel_t* full) {
  *full = ZFC_MACHINE_MODEL_INITIALIZER;
  return zfc::copy_versioned(&user, user.size, kModelLayouts,
                             sizeof kModelLayouts / sizeof kModelLayouts[0], "machine model",
                             "ZFC_MACHINE_MODEL_INITIALIZER", full, sizeof *full);
}

// The layouts of zfcStepShape_t, oldest first: the one before 0.6.0 ended before
// stream_chunk_bytes.
const size_t kShapeLayouts[] = {offsetof(zfcStepShape_t, stream_chunk_bytes),
                                sizeof(zfcStepShape_t)};

// The prediction has one layout so far; a wrong size is a struct not
// made with its initializer (or from a header this library does not know).
Status check_size(size_t size, size_t expected, const char* what, const char* initializer) {
  if (size == expected) return Status::Ok();
  return error(zfcInvalidUsage, "%s size %zu, expected %zu: initialise it with %s", what, size,
               expected, initializer);
}

Status check_shape(const zfcStepShape_t& s) {
  if (s.ranks < 1 || s.nodes < 1 || s.nodes > s.ranks) {
    return error(zfcInvalidArgument, "shape has %d ranks on %d nodes: need 1 <= nodes <= ranks",
                 s.ranks, s.nodes);
  }
  const double values[] = {s.tokens, s.max_tokens, s.local_unique, s.max_local_unique,
                           s.global_unique};
  for (double v : values) {
    if (!(v >= 0.0 && v < 1e18)) {
      return error(zfcInvalidArgument, "shape sizes must be finite and >= 0, not %g", v);
    }
  }
  if (s.dim == 0 || s.vocab_size <= 0) {
    return error(zfcInvalidArgument, "shape dim %zu and vocab_size %lld must be > 0", s.dim,
                 static_cast<long long>(s.vocab_size));
  }
  if (s.row_type != zfcFloat32 && s.row_type != zfcFloat16 && s.row_type != zfcBFloat16) {
    return error(zfcInvalidArgument, "shape row_type %d is not a float type",
                 static_cast<int>(s.row_type));
  }
  if (s.compression < 0 ||
      zfc::kernels::find_wire_format(s.compression & ~ZFC_COMPRESS_STOCHASTIC) == nullptr) {
    return error(zfcInvalidArgument, "shape compression %d is not a zfcCompressionKind_t",
                 static_cast<int>(s.compression));
  }
  return Status::Ok();
}

// The checked machine model and step sizes of a prediction (the prediction's size too).
Status read_prediction_inputs(const zfcMachineModel_t* model, const zfcStepShape_t* shape,
                              const zfcPrediction_t* prediction, zfc::MachineModel* m,
                              zfc::CostInputs* out) {
  if (model == nullptr) return zfc::null_handle("model");
  if (shape == nullptr) return zfc::null_handle("shape");
  if (prediction == nullptr) return zfc::null_handle("prediction");
  zfcMachineModel_t given;
  ZFC_RETURN_IF_ERROR(read_model(*model, &given));
  zfcStepShape_t full = ZFC_STEP_SHAPE_INITIALIZER;
  ZFC_RETURN_IF_ERROR(zfc::copy_versioned(shape, shape->size, kShapeLayouts,
                                          sizeof kShapeLayouts / sizeof kShapeLayouts[0],
                                          "step shape", "ZFC_STEP_SHAPE_INITIALIZER", &full,
                                          sizeof full));
  ZFC_RETURN_IF_ERROR(check_size(prediction->size, sizeof(zfcPrediction_t), "prediction",
                                 "ZFC_PREDICTION_INITIALIZER"));
  ZFC_RETURN_IF_ERROR(check_shape(full));
  if (!(given.ranks_per_core == 0.0 ||
        (given.ranks_per_core >= 1.0 && given.ranks_per_core < 1e6))) {
    return error(zfcInvalidArgument, "machine model ranks_per_core %g: give 0 or 1 and more",
                 given.ranks_per_core);
  }
  *m = zfc::model_from_figures({given.intra_node.latency_us, given.intra_node.bandwidth_gbs,
                                given.inter_node.latency_us, given.inter_node.bandwidth_gbs,
                                given.local_gbs, given.ranks_per_core});
  zfc::CostInputs& in = *out;
  in.ranks = full.ranks;
  in.nodes = full.nodes;
  in.tokens = static_cast<uint64_t>(full.tokens);
  in.max_tokens = static_cast<uint64_t>(full.max_tokens);
  in.local_unique = static_cast<uint64_t>(full.local_unique);
  in.max_local_unique = static_cast<uint64_t>(full.max_local_unique);
  in.global_unique = static_cast<uint64_t>(full.global_unique);
  in.vocab = full.vocab_size;
  in.dim = full.dim;
  in.key_bytes = static_cast<uint64_t>(full.vocab_size) <= (uint64_t{1} << 32) ? 4 : 8;
  in.row_bytes = zfc::kernels::wire_format(static_cast<zfcCompressionKind_t>(
                                               full.compression & ~ZFC_COMPRESS_STOCHASTIC))
                     .value_bytes(full.dim);
  in.input_bytes = zfc::kernels::float_type_bytes(full.row_type);
  in.stream_chunk = full.stream_chunk_bytes;
  return Status::Ok();
}

void write_prediction(const zfc::Prediction& p, zfcPrediction_t* out) {
  *out = {sizeof(zfcPrediction_t), p.seconds, p.bytes, p.internode_bytes, p.workspace_bytes};
}

}  // namespace

extern "C" {

zfcResult_t zfcCommGetMachineModel(zfcComm_t comm, zfcMachineModel_t* model) {
  return zfc::guarded(comm, [&] {
    if (comm == nullptr) return zfc::null_handle("comm");
    if (model == nullptr) return zfc::null_handle("model");
    zfcMachineModel_t full;
    ZFC_RETURN_IF_ERROR(read_model(*model, &full));
    const zfc::ModelFigures& f = comm->machine_figures;
    full.intra_node = {f.intra_latency_us, f.intra_gbs};
    full.inter_node = {f.inter_latency_us, f.inter_gbs};
    full.local_gbs = f.local_gbs;
    full.ranks_per_core = f.ranks_per_core;
    std::memcpy(model, &full, model->size);  // the fields of the caller's layout
    return Status::Ok();
  });
}

zfcResult_t zfcPredictSparseReduce(const zfcMachineModel_t* model, const zfcStepShape_t* shape,
                                   int algorithm, zfcPrediction_t* prediction) {
  return zfc::guarded(nullptr, [&]() -> Status {
    zfc::MachineModel m;
    zfc::CostInputs in;
    ZFC_RETURN_IF_ERROR(read_prediction_inputs(model, shape, prediction, &m, &in));
    if (algorithm <= zfcAlgoAuto || algorithm >= zfcNumAlgorithms) {
      return error(zfcInvalidArgument, "algorithm %d: name one (not auto or default)",
                   algorithm);
    }
    write_prediction(zfc::predict(static_cast<zfcAlgorithm_t>(algorithm), in, m), prediction);
    return Status::Ok();
  });
}

zfcResult_t zfcPredictShardedStep(const zfcMachineModel_t* model, const zfcStepShape_t* shape,
                                  zfcPrediction_t* prediction) {
  return zfc::guarded(nullptr, [&]() -> Status {
    zfc::MachineModel m;
    zfc::CostInputs in;
    ZFC_RETURN_IF_ERROR(read_prediction_inputs(model, shape, prediction, &m, &in));
    write_prediction(zfc::predict_sharded(in, m), prediction);
    return Status::Ok();
  });
}

}  // extern "C"
