#include "algo/error_feedback.hpp"

#include <algorithm>
#include <cstring>

#include "algo/call_rounding.hpp"
#include "kernels/cast.hpp"
#include "kernels/wire_format.hpp"

namespace zfc {

void add_residual(const float* send, const float* residual, size_t n, float* fed) {
  for (size_t i = 0; i < n; ++i) fed[i] = send[i] + residual[i];
}

void left_by_encode(Workspace& ws, const Compression& c, int rank, size_t row_values,
                    float* fed, size_t n) {
  if (n == 0) return;
  const kernels::WireFormat& f = kernels::wire_format(c.kind);
  const kernels::Rounding r = call_rounding(c, rank);
  float* back = ws.get<float>(Slot::kPartial, std::max(n, row_values));
  if (f.element_only()) {
    // As algo/allreduce.cpp encodes: scaled, and rounded at the values' places.
    if (f.element == zfcFloat32) {
      std::fill(fed, fed + n, 0.0f);  // fp32 leaves nothing out
      return;
    }
    const float scale = f.value_scale(c.scale);
    char* wire = ws.get<char>(Slot::kWireSend, n * f.element_bytes);
    if (c.stochastic) {
      kernels::encode_stochastic_span(fed, n, 0, row_values, f.element, scale, r, wire);
    } else {
      kernels::encode(fed, n, f.element, scale, wire);
    }
    kernels::decode(wire, n, f.element, scale, back);
  } else {
    // As algo/allreduce_rows.cpp encodes: rows of row_values, the last padded with zeros.
    const size_t full = n / row_values, tail = n - full * row_values;
    char* wire = ws.get<char>(Slot::kWireSend, f.row_bytes(row_values) * (full + 1));
    f.encode_rows(fed, full, row_values, 1.0f, wire, r);
    f.decode_rows(wire, full, row_values, 1.0f, back);
    if (tail > 0) {
      float* pad = ws.get<float>(Slot::kNodeSum, row_values);
      std::memcpy(pad, fed + full * row_values, tail * sizeof(float));
      std::fill(pad + tail, pad + row_values, 0.0f);
      f.encode_rows(pad, 1, row_values, 1.0f, wire, r.from_row(full));
      f.decode_rows(wire, 1, row_values, 1.0f, pad);
      std::memcpy(back + full * row_values, pad, tail * sizeof(float));
    }
  }
  for (size_t i = 0; i < n; ++i) fed[i] -= back[i];
}

}  // namespace zfc
