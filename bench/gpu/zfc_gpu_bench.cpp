// zfc_gpu_bench: the CUDA kernels of one rank's local pipeline, timed with CUDA events on
// the sizes a step has, against a device-to-device copy measured in the same run.
//
//   zfc_gpu_bench [-K 1e4,1e5,1e6,4e6] [-D 512,1024] [--vocab 100000] [-n 20] [-J FILE]
//
// Per size: local unique with positions (keys/s, and µs), scatter-to-dense of the N x D
// rows into the U x D matrix (scatter, which sorts the positions as zfcScatterToDense does;
// scatter_grouped, over the order the unique kept, as a step runs it; and scatter_uniform,
// the sorting scatter with positions spread evenly over the U rows: what a Zipf head id
// still costs), fp32 -> fp16 encode with scale and back, and the whole local pipeline
// (unique + positions + grouped scatter + encode), each as bandwidth (bytes read + written)
// and as a fraction of the copy's. bench/gpu/torch_pipeline.py times the same pipeline in
// PyTorch on the same sizes for comparison.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "device_kernels.hpp"
#include "device_runtime.hpp"
#include "kernels/radix_sort.hpp"
#include "tools/json_writer.hpp"
#include "tools/tool_options.hpp"
#include "workload/random.hpp"
#include "workload/zipf.hpp"

namespace {

struct Options {
  std::vector<size_t> sizes = {10000, 100000, 1000000, 4000000};
  std::vector<size_t> dims = {512, 1024};
  int64_t vocab = 100000;
  int iters = 20;
  std::string json;  // -J, --output_file
};

// Parses argv into *o. Returns -1 to go on, else the status to exit with (0: --help).
int parse(int argc, char** argv, Options* o) {
  CLI::App app("the CUDA kernels of one rank's local pipeline against a device copy\n"
               "run as: zfc_gpu_bench [options]",
               "zfc_gpu_bench");
  app.footer("exit status: 0 done (and after --help), 1 no GPU or a failed call, 2 a bad "
             "option");
  zfc::tools::add_int_list<size_t>(app, "-K,--tokens", &o->sizes,
                                   "comma list of token counts N (1e6 forms taken)", 1);
  zfc::tools::add_int_list<size_t>(app, "-D,--dim", &o->dims, "comma list of row widths", 1);
  zfc::tools::add_int<int64_t>(app, "--vocab", &o->vocab, "ids drawn below V", 2, INT32_MAX);
  zfc::tools::add_int(app, "-n,--iters", &o->iters, "timed runs per kernel (the median)", 1,
                      1000000);
  zfc::tools::add_output_file(app, &o->json, "also write every row as JSON");
  return zfc::tools::parse_command_line(app, argc, argv, true);
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "zfc_gpu_bench: %s\n", what.c_str());
  std::exit(1);
}

void check(const zfc::Status& s) {
  if (!s.ok()) die(s.message());
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) die(std::string(what) + ": " + cudaGetErrorString(e));
}

// Median milliseconds of `iters` runs of `body` after two warm-ups, timed with events.
double time_ms(int iters, const std::function<void()>& body) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  for (int w = 0; w < 2; ++w) body();
  std::vector<float> ms(static_cast<size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    check(cudaEventRecord(a, nullptr), "cudaEventRecord");
    body();
    check(cudaEventRecord(b, nullptr), "cudaEventRecord");
    check(cudaEventSynchronize(b), "cudaEventSynchronize");
    check(cudaEventElapsedTime(&ms[static_cast<size_t>(i)], a, b), "cudaEventElapsedTime");
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

template <class T>
T* device_copy(const std::vector<T>& host, zfc::cuda::DeviceBuffer* buf) {
  check(buf->reserve(host.size() * sizeof(T) + 1));
  check(zfc::cuda::copy_to_device(buf->data(), host.data(), host.size() * sizeof(T), nullptr));
  return static_cast<T*>(buf->data());
}

struct Row {
  std::string kernel;
  size_t n, dim, unique;
  double ms, bytes, copy_gbps;
};

// One size: every kernel and the whole pipeline.
void run_size(const Options& o, const zfc::workload::ZipfDistribution& zipf, size_t n,
              size_t dim, std::vector<Row>* rows) {
  using namespace zfc;
  const std::vector<int32_t> ids = zipf.draw(n, 1);
  const std::vector<uint32_t> keys(ids.begin(), ids.end());
  std::vector<float> grad(n * dim);
  workload::SplitMix64 rng(2);
  for (float& f : grad) f = static_cast<float>(rng.uniform() * 2 - 1);
  cuda::DeviceBuffer b_keys, b_grad, b_uniq, b_inv, b_num, b_pos, b_dense, b_wire, b_temp;
  cuda::DeviceBuffer b_order;
  cuda::DeviceBuffer b_copy;
  uint32_t* d_keys = device_copy(keys, &b_keys);
  float* d_grad = device_copy(grad, &b_grad);
  check(b_uniq.reserve(n * 4 + 4));
  check(b_inv.reserve(n * 4 + 4));
  check(b_num.reserve(8));
  check(b_pos.reserve(n * 4 + 4));
  check(b_order.reserve(n * 4 + 4));
  const uint32_t nn = static_cast<uint32_t>(n);
  const int bits = kernels::key_bits_for_bound(static_cast<uint64_t>(o.vocab));
  auto* d_uniq = static_cast<uint32_t*>(b_uniq.data());
  auto* d_inv = static_cast<int32_t*>(b_inv.data());
  auto* d_num = static_cast<uint32_t*>(b_num.data());
  auto* d_pos = static_cast<int32_t*>(b_pos.data());
  // The unique keeps its sort's order, as the step's does, for the grouped scatter.
  auto* d_order = static_cast<uint32_t*>(b_order.data());
  size_t unique_bytes = 0, scatter_bytes = 0, grouped_bytes = 0;
  check(cuda::unique_with_inverse<uint32_t>(nullptr, &unique_bytes, d_keys, nn, bits, d_uniq,
                                            d_inv, d_num, d_order, nullptr));
  check(b_temp.reserve(unique_bytes + 1));
  auto unique = [&] {
    check(cuda::unique_with_inverse(b_temp.data(), &unique_bytes, d_keys, nn, bits, d_uniq, d_inv,
                                    d_num, d_order, nullptr));
  };
  // U is read back once, as the fused call must do to size the dense matrix.
  uint32_t u = 0;
  auto read_u = [&] { check(cuda::copy_to_host(&u, d_num, sizeof u, nullptr)); };
  unique();
  read_u();
  check(cuda::scatter_to_dense(nullptr, &scatter_bytes, d_grad, zfcFloat32, d_inv, nn, dim,
                               nullptr, u, nullptr));
  check(cuda::scatter_to_dense_grouped(nullptr, &grouped_bytes, d_grad, zfcFloat32, d_inv,
                                       d_order, nn, dim, nullptr, u, nullptr));
  check(b_temp.reserve(std::max({unique_bytes, scatter_bytes, grouped_bytes}) + 1));
  check(b_dense.reserve(static_cast<size_t>(u) * dim * 4 + 4));
  check(b_wire.reserve(static_cast<size_t>(u) * dim * 2 + 4));
  auto* d_dense = static_cast<float*>(b_dense.data());
  // Positions: the local set located in itself stands in for the global set, then composed
  // (an identity here, so repeating it changes nothing).
  auto positions = [&] {
    check(cuda::locate_sorted(d_uniq, u, d_uniq, d_num, d_pos, nullptr));
    check(cuda::compose_positions(d_inv, nn, d_pos, d_inv, nullptr));
  };
  // The scatter on its own (zfcScatterToDense's: it sorts the positions), and over the
  // unique's order, as the pipeline and the step run it.
  auto scatter = [&] {
    check(cuda::scatter_to_dense(b_temp.data(), &scatter_bytes, d_grad, zfcFloat32, d_inv, nn,
                                 dim, d_dense, u, nullptr));
  };
  auto scatter_grouped = [&] {
    check(cuda::scatter_to_dense_grouped(b_temp.data(), &grouped_bytes, d_grad, zfcFloat32,
                                         d_inv, d_order, nn, dim, d_dense, u, nullptr));
  };
  // The same rows at positions spread evenly over the U rows, by a multiplicative hash: runs
  // of about N / U rows, no hot id. The scratch size depends on n, U and D only.
  std::vector<int32_t> spread(n);
  for (size_t i = 0; i < n; ++i) spread[i] = static_cast<int32_t>((i * 2654435761u) % u);
  cuda::DeviceBuffer b_spread;
  const int32_t* d_spread = device_copy(spread, &b_spread);
  auto scatter_uniform = [&] {
    check(cuda::scatter_to_dense(b_temp.data(), &scatter_bytes, d_grad, zfcFloat32, d_spread,
                                 nn, dim, d_dense, u, nullptr));
  };
  const size_t ud = static_cast<size_t>(u) * dim;
  auto encode = [&] {
    check(cuda::encode(d_dense, ud, zfcFloat16, 1024.0f, b_wire.data(), nullptr));
  };
  int* d_flag = reinterpret_cast<int*>(d_num) + 1;
  auto decode = [&] {
    check(cuda::decode(b_wire.data(), ud, zfcFloat16, 1024.0f, d_dense, d_flag, nullptr));
  };
  // The copy every bandwidth is compared with: as many bytes as the rows.
  check(b_copy.reserve(n * dim * 4 + 4));
  const double copy_ms = time_ms(o.iters, [&] {
    check(cudaMemcpyAsync(b_copy.data(), d_grad, n * dim * 4, cudaMemcpyDeviceToDevice,
                          nullptr),
          "cudaMemcpyAsync");
  });
  const double copy_gbps = 2.0 * static_cast<double>(n * dim * 4) / (copy_ms * 1e6);
  auto add = [&](const char* name, double ms, double bytes) {
    rows->push_back({name, n, dim, u, ms, bytes, copy_gbps});
  };
  add("copy", copy_ms, 2.0 * static_cast<double>(n * dim * 4));
  add("unique", time_ms(o.iters, unique), static_cast<double>(n) * 12 + u * 4.0);
  add("positions", time_ms(o.iters, positions), static_cast<double>(n) * 12 + u * 8.0);
  add("scatter", time_ms(o.iters, scatter), static_cast<double>(n * dim + ud) * 4);
  add("scatter_grouped", time_ms(o.iters, scatter_grouped),
      static_cast<double>(n * dim + ud) * 4);
  add("scatter_uniform", time_ms(o.iters, scatter_uniform),
      static_cast<double>(n * dim + ud) * 4);
  // The grouped scatter at each load width, whatever the library would choose: 4 bytes per
  // lane through the ring in shared memory (which every width took before the register
  // kernel: the baseline, in the same run), 8 and 16 bytes into registers.
  for (unsigned words : {1u, 2u, 4u}) {
    cuda::set_scatter_lane_words_for_tests(words);
    add(words == 1 ? "scatter_grouped_4B" : words == 2 ? "scatter_grouped_8B"
                                                       : "scatter_grouped_16B",
        time_ms(o.iters, scatter_grouped), static_cast<double>(n * dim + ud) * 4);
  }
  cuda::set_scatter_lane_words_for_tests(0);
  add("encode_fp16", time_ms(o.iters, encode), static_cast<double>(ud) * 6);
  add("decode_fp16", time_ms(o.iters, decode), static_cast<double>(ud) * 6);
  add("pipeline", time_ms(o.iters, [&] {
        unique();
        read_u();
        positions();
        scatter_grouped();
        encode();
      }),
      static_cast<double>(n * dim) * 4 + static_cast<double>(ud) * 10);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const int refused = parse(argc, argv, &o);
  if (refused >= 0) return refused;
  if (zfc::cuda::device_count() == 0) die(zfc::cuda::no_device_reason());
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const zfc::workload::ZipfDistribution zipf(1.1, o.vocab);
  std::vector<Row> rows;
  std::printf("# zfc_gpu_bench on %s: Zipf(1.1) ids over V=%lld, median of %d runs\n",
              prop.name, static_cast<long long>(o.vocab), o.iters);
  std::printf("# %-12s %9s %5s %8s %10s %9s %7s\n", "kernel", "N", "D", "U", "time_us", "GB/s",
              "x_copy");
  for (size_t dim : o.dims) {
    for (size_t n : o.sizes) {
      const size_t first = rows.size();
      run_size(o, zipf, n, dim, &rows);
      for (size_t i = first; i < rows.size(); ++i) {
        const Row& r = rows[i];
        const double gbps = r.bytes / (r.ms * 1e6);
        std::printf("  %-12s %9zu %5zu %8zu %10.1f %9.1f %7.2f\n", r.kernel.c_str(), r.n, r.dim,
                    r.unique, r.ms * 1e3, gbps, gbps / r.copy_gbps);
      }
    }
  }
  if (!o.json.empty()) {
    std::vector<std::string> items;
    for (const Row& r : rows) {
      zfc::tools::JsonObject row;
      row.text("kernel", r.kernel)
          .integer("N", static_cast<long long>(r.n))
          .integer("D", static_cast<long long>(r.dim))
          .integer("U", static_cast<long long>(r.unique))
          .number("ms", r.ms, "%.6f")
          .number("bytes", r.bytes, "%.0f")
          .number("copy_gbps", r.copy_gbps, "%.3f");
      items.push_back(row.str());
    }
    zfc::tools::JsonObject record;
    record.text("gpu", prop.name)
        .integer("vocab", o.vocab)
        .raw("rows", zfc::tools::json_array(items, "  "));
    if (!zfc::tools::write_json_file(o.json, record.str() + "\n")) die("cannot write " + o.json);
  }
  return 0;
}
