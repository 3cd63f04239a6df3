// The demo's workload (not part of the API): the same seeded token streams and windows of
// real text that zfc_demo runs, so `python -m zipfcoll.demo` exchanges the same steps.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "handles.hpp"
#include "workload/step_source.hpp"

namespace zfcpy {

void bind_workload(py::module_& m) {
  using zfc::workload::StepSource;
  using zfc::workload::StepSpec;
  py::class_<StepSource>(m, "_StepSource")
      .def(py::init([](std::string corpus, int64_t vocab, double zipf_s, size_t tokens,
                       size_t window_len, uint64_t seed) {
             StepSpec spec;
             spec.corpus = std::move(corpus);
             spec.vocab = vocab;
             spec.zipf_s = zipf_s;
             spec.tokens = tokens;
             spec.window_len = window_len;
             spec.seed = seed;
             return std::make_unique<StepSource>(spec);
           }),
           py::arg("corpus"), py::arg("vocab"), py::arg("zipf_s"), py::arg("tokens"),
           py::arg("window_len"), py::arg("seed"))
      .def("indices", [](const StepSource& s, int64_t step, int rank) {
        const std::vector<int32_t> v = s.indices(step, rank);
        return py::array_t<int32_t>(static_cast<ssize_t>(v.size()), v.data());
      })
      .def("rows", [](const StepSource& s, int64_t step, int rank, size_t count, size_t dim) {
        const std::vector<float> v = s.rows(step, rank, count, dim);
        return py::array_t<float>({static_cast<ssize_t>(count), static_cast<ssize_t>(dim)},
                                  v.data());
      })
      .def("describe", &StepSource::describe);
}

}  // namespace zfcpy
