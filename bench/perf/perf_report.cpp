#include "perf_report.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

using zfc::tools::json_string;

Row& Row::num(const char* key, double value, int width, int precision) {
  char shown[64];
  if (std::isfinite(value)) {
    std::snprintf(shown, sizeof shown, "%.*f", precision, value);
  } else {
    std::snprintf(shown, sizeof shown, "n/a");
  }
  fields_.push_back({key, shown, zfc::tools::json_number(value, "%.12g"), width});
  return *this;
}

Row& Row::quiet(const char* key, double value) {
  num(key, value, 0, 0);
  fields_.back().shown_in_table = false;
  return *this;
}

Row& Row::text(const char* key, const std::string& value, int width) {
  fields_.push_back({key, value, json_string(value), width});
  return *this;
}

std::string Row::header() const {
  std::string out = "#";
  for (const Field& f : fields_) {
    if (!f.shown_in_table) continue;
    char buf[128];
    std::snprintf(buf, sizeof buf, " %*s", f.width, f.key.c_str());
    out += buf;
  }
  return out;
}

std::string Row::line() const {
  std::string out = " ";
  for (const Field& f : fields_) {
    if (!f.shown_in_table) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf, " %*s", f.width, f.shown.c_str());
    out += buf;
  }
  return out;
}

std::string Row::json() const {
  zfc::tools::JsonObject o;
  for (const Field& f : fields_) o.raw(f.key, f.json);
  return o.str();
}

void Report::add(const Row& row, bool print) {
  if (print) {
    if (!header_printed_) std::printf("%s\n", row.header().c_str());
    std::printf("%s\n", row.line().c_str());
    std::fflush(stdout);
  }
  header_printed_ = true;
  rows_.push_back(row);
}

// One member per line, the rows one per line after them: a record a reader can diff.
bool Report::write_json(const std::string& path, const zfc::tools::JsonObject& meta) const {
  std::string text = "{\n";
  for (const std::string& m : meta.members()) text += "  " + m + ",\n";
  text += "  \"rows\": [\n";
  for (size_t i = 0; i < rows_.size(); ++i) {
    text += "    " + rows_[i].json() + (i + 1 < rows_.size() ? ",\n" : "\n");
  }
  text += "  ]\n}\n";
  return zfc::tools::write_json_file(path, text);
}

namespace {

// The value after "key<spaces>:" on the first matching line of a /proc file.
std::string proc_field(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

}  // namespace

zfc::tools::JsonObject machine_json() {
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  utsname u{};
  uname(&u);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const std::string mem = proc_field("/proc/meminfo", "MemTotal");
  zfc::tools::JsonObject m;
  m.text("host", host)
      .text("cpu", proc_field("/proc/cpuinfo", "model name"))
      .integer("logical_cores", cores)
      .text("memory", mem)
      .text("os", std::string(u.sysname) + " " + u.release + " " + u.machine);
  return m;
}
