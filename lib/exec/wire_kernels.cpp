#include "exec/wire_kernels.hpp"

#include "kernels/cast.hpp"

namespace zfc {

Status HostWireKernels::scratch(Slot slot, size_t bytes, void** out) {
  *out = ws_.get<char>(slot, bytes);
  return Status::Ok();
}

Status HostWireKernels::encode(const float* src, size_t n, zfcDataType_t wire, float scale,
                               void* dst) {
  kernels::encode(src, n, wire, scale, dst);
  return Status::Ok();
}

Status HostWireKernels::sum_blocks(const void* blocks, int nblocks, size_t n,
                                   zfcDataType_t wire, float* acc) {
  kernels::sum_blocks(blocks, nblocks, n, wire, acc);
  return Status::Ok();
}

Status HostWireKernels::add_to(const void* src, zfcDataType_t wire, size_t n, float* acc) {
  kernels::add_to(src, wire, n, acc);
  return Status::Ok();
}

Status HostWireKernels::decode(const void* src, size_t n, zfcDataType_t wire, float scale,
                               float* dst) {
  if (!kernels::decode(src, n, wire, scale, dst)) finite_ = false;
  return Status::Ok();
}

Status HostWireKernels::check_finite(const float* v, size_t n) {
  if (!kernels::all_finite(v, n)) finite_ = false;
  return Status::Ok();
}

Status WireKernels::encode_rows(const kernels::WireFormat& f, const float* src, size_t rows,
                                size_t dim, float scale, void* dst, const kernels::Rounding& r) {
  if (!f.element_only() || r.stochastic) {
    return error(zfcUnsupported, "wire format %s%s has no device kernels in this version",
                 f.name, r.stochastic ? " with stochastic rounding" : "");
  }
  return encode(src, rows * dim, f.element, f.value_scale(scale), dst);
}

Status HostWireKernels::encode_rows(const kernels::WireFormat& f, const float* src,
                                    size_t rows, size_t dim, float scale, void* dst,
                                    const kernels::Rounding& r) {
  f.encode_rows(src, rows, dim, scale, dst, r);
  return Status::Ok();
}

Status HostWireKernels::all_finite(bool* out) {
  *out = finite_;
  return Status::Ok();
}

}  // namespace zfc
