// The machine model as text: the value of ZIPFCOLL_MACHINE_MODEL, printed at
// ZIPFCOLL_DEBUG=INFO in the same form so that a run's model can be given back.
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/machine_model.hpp"

namespace zfc {
namespace {

constexpr const char* kEnvName = "ZIPFCOLL_MACHINE_MODEL";
constexpr const char* kForm =
    "expected any of intra=LATENCY_US:BANDWIDTH_GBS, inter=LATENCY_US:BANDWIDTH_GBS and "
    "local=GBS, separated by commas";

// The shortest decimal that reads back as exactly `v`.
std::string shortest(double v) {
  char buf[64];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// One number filling all of [begin, end).
bool read_number(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* stop = nullptr;
  const double v = std::strtod(s.c_str(), &stop);
  if (stop != s.c_str() + s.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

Status bad_text(const char* text, const std::string& part, const char* why) {
  return error(zfcInvalidArgument, "%s='%s': '%s' %s (%s)", kEnvName, text, part.c_str(), why,
               kForm);
}

Status read_link(const char* text, const std::string& part, const std::string& value,
                 double* latency_us, double* gbs) {
  const size_t colon = value.find(':');
  if (colon == std::string::npos || !read_number(value.substr(0, colon), latency_us) ||
      !read_number(value.substr(colon + 1), gbs)) {
    return bad_text(text, part, "is not LATENCY_US:BANDWIDTH_GBS");
  }
  // 0:0 is a link not given, as in the config: what a one-rank communicator prints.
  if (*latency_us == 0.0 && *gbs == 0.0) return Status::Ok();
  if (*latency_us < 0.0 || *gbs <= 0.0) {
    return bad_text(text, part, "needs a latency >= 0 and a bandwidth > 0, or is 0:0");
  }
  return Status::Ok();
}

Status read_part(const char* text, const std::string& part, ModelFigures* m, int* seen) {
  const size_t eq = part.find('=');
  const std::string key = part.substr(0, eq), value = eq == std::string::npos ? "" :
                                                      part.substr(eq + 1);
  const int bit = key == "intra" ? 1 : key == "inter" ? 2 : key == "local" ? 4 : 0;
  if (eq == std::string::npos || bit == 0) {
    return bad_text(text, part, "names no figure");
  }
  if ((*seen & bit) != 0) return bad_text(text, part, "repeats a figure");
  *seen |= bit;
  if (bit == 1) return read_link(text, part, value, &m->intra_latency_us, &m->intra_gbs);
  if (bit == 2) return read_link(text, part, value, &m->inter_latency_us, &m->inter_gbs);
  if (!read_number(value, &m->local_gbs) || m->local_gbs <= 0.0) {
    return bad_text(text, part, "is not a bandwidth > 0 in GB/s");
  }
  return Status::Ok();
}

}  // namespace

std::string format_model(const ModelFigures& f) {
  return "intra=" + shortest(f.intra_latency_us) + ":" + shortest(f.intra_gbs) +
         ",inter=" + shortest(f.inter_latency_us) + ":" + shortest(f.inter_gbs) +
         ",local=" + shortest(f.local_gbs);
}

Status parse_model_text(const char* text, ModelFigures* out) {
  ModelFigures m;
  int seen = 0;
  const std::string all(text);
  size_t begin = all.empty() ? 1 : 0;  // an empty value gives nothing
  while (begin <= all.size()) {
    size_t end = all.find(',', begin);
    if (end == std::string::npos) end = all.size();
    ZFC_RETURN_IF_ERROR(read_part(text, all.substr(begin, end - begin), &m, &seen));
    begin = end + 1;
  }
  *out = m;
  return Status::Ok();
}

Status apply_model_env(ModelFigures* figures) {
  const char* text = std::getenv(kEnvName);
  if (text == nullptr) return Status::Ok();
  ModelFigures env;
  ZFC_RETURN_IF_ERROR(parse_model_text(text, &env));
  if (!figures->intra_given() && env.intra_given()) {
    figures->intra_latency_us = env.intra_latency_us;
    figures->intra_gbs = env.intra_gbs;
  }
  if (!figures->inter_given() && env.inter_given()) {
    figures->inter_latency_us = env.inter_latency_us;
    figures->inter_gbs = env.inter_gbs;
  }
  if (!figures->local_given()) figures->local_gbs = env.local_gbs;
  return Status::Ok();
}

MachineModel model_from_figures(const ModelFigures& f) {
  MachineModel m;
  m.intra = {f.intra_latency_us * 1e-6, f.intra_gbs * 1e9};
  m.inter = {f.inter_latency_us * 1e-6, f.inter_gbs * 1e9};
  m.local_bytes_per_s = f.local_gbs * 1e9;
  m.ranks_per_core = f.ranks_per_core >= 1.0 ? f.ranks_per_core : 1.0;
  return m;
}

}  // namespace zfc
