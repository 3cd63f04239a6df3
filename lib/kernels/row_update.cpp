#include "kernels/row_update.hpp"

#include <cmath>
#include <cstring>

namespace zfc {
namespace kernels {

const char* update_kind_name(int kind) {
  switch (kind) {
    case zfcUpdateAdd: return "add";
    case zfcUpdateSgd: return "sgd";
    case zfcUpdateAdagrad: return "adagrad";
  }
  return "unknown";
}

uint64_t pack_update_values(const RowUpdate& u) {
  uint32_t a, e;
  std::memcpy(&a, &u.alpha, sizeof a);
  std::memcpy(&e, &u.epsilon, sizeof e);
  return uint64_t{a} | uint64_t{e} << 32;
}

RowUpdate unpack_update(int kind, uint64_t values) {
  RowUpdate u;
  u.kind = static_cast<zfcUpdateKind_t>(kind);
  const uint32_t a = static_cast<uint32_t>(values), e = static_cast<uint32_t>(values >> 32);
  std::memcpy(&u.alpha, &a, sizeof a);
  std::memcpy(&u.epsilon, &e, sizeof e);
  return u;
}

Status parse_row_update(const zfcRowUpdate_t* user, RowUpdate* out) {
  if (user == nullptr) return error(zfcInvalidArgument, "update is NULL");
  if (user->size != sizeof(zfcRowUpdate_t)) {
    return error(zfcInvalidUsage, "update has size %zu, expected %zu: initialise it with "
                 "ZFC_ROW_UPDATE_INITIALIZER", user->size, sizeof(zfcRowUpdate_t));
  }
  if (user->kind < zfcUpdateAdd || user->kind > zfcUpdateAdagrad) {
    return error(zfcInvalidArgument, "update kind %d is not a zfcUpdateKind_t", user->kind);
  }
  if (!std::isfinite(user->alpha)) {
    return error(zfcInvalidArgument, "update alpha %g is not finite",
                 static_cast<double>(user->alpha));
  }
  if (user->kind == zfcUpdateAdagrad && !(std::isfinite(user->epsilon) && user->epsilon >= 0)) {
    return error(zfcInvalidArgument, "Adagrad epsilon %g must be finite and >= 0",
                 static_cast<double>(user->epsilon));
  }
  out->kind = static_cast<zfcUpdateKind_t>(user->kind);
  out->alpha = user->alpha;
  out->epsilon = user->kind == zfcUpdateAdagrad ? user->epsilon : 0.0f;
  return Status::Ok();
}

void update_row(float* w, float* s, const float* g, size_t dim, const RowUpdate& u) {
  const float a = u.alpha;
  switch (u.kind) {
    case zfcUpdateAdd:
      for (size_t k = 0; k < dim; ++k) w[k] += a * g[k];
      return;
    case zfcUpdateSgd:
      for (size_t k = 0; k < dim; ++k) w[k] -= a * g[k];
      return;
    case zfcUpdateAdagrad:
      for (size_t k = 0; k < dim; ++k) {
        s[k] += g[k] * g[k];
        w[k] -= a * (g[k] / (std::sqrt(s[k]) + u.epsilon));
      }
      return;
  }
}

namespace {
template <class I>
void update_typed(float* table, float* state, size_t dim, const I* idx, const float* rows,
                  size_t n, const RowUpdate& u) {
  const bool with_state = update_has_state(u);
  for (size_t p = 0; p < n; ++p) {
    const size_t at = static_cast<size_t>(idx[p]) * dim;
    update_row(table + at, with_state ? state + at : nullptr, rows + p * dim, dim, u);
  }
}
}  // namespace

void update_rows(float* table, float* state, size_t dim, const void* idx,
                 zfcDataType_t index_type, const float* rows, size_t n, const RowUpdate& u) {
  if (index_type == zfcInt32) {
    update_typed(table, state, dim, static_cast<const int32_t*>(idx), rows, n, u);
  } else {
    update_typed(table, state, dim, static_cast<const int64_t*>(idx), rows, n, u);
  }
}

}  // namespace kernels
}  // namespace zfc
