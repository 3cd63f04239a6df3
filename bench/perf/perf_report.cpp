#include "perf_report.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

Row& Row::num(const char* key, double value, int width, int precision) {
  char shown[64], js[64];
  if (std::isfinite(value)) {
    std::snprintf(shown, sizeof shown, "%.*f", precision, value);
    std::snprintf(js, sizeof js, "%.*g", 12, value);
  } else {
    std::snprintf(shown, sizeof shown, "n/a");
    std::snprintf(js, sizeof js, "null");
  }
  fields_.push_back({key, shown, js, width});
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
  std::string out = "{";
  for (size_t i = 0; i < fields_.size(); ++i) {
    out += (i ? ", " : "") + json_string(fields_[i].key) + ": " + fields_[i].json;
  }
  return out + "}";
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

bool Report::write_json(const std::string& path, const std::vector<std::string>& meta) const {
  std::ofstream out(path);
  if (!out) return false;
  out << "{\n";
  for (const std::string& m : meta) out << "  " << m << ",\n";
  out << "  \"rows\": [\n";
  for (size_t i = 0; i < rows_.size(); ++i) {
    out << "    " << rows_[i].json() << (i + 1 < rows_.size() ? ",\n" : "\n");
  }
  out << "  ]\n}\n";
  return static_cast<bool>(out);
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
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

std::string machine_json() {
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  utsname u{};
  uname(&u);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const std::string mem = proc_field("/proc/meminfo", "MemTotal");
  return "\"machine\": {\"host\": " + json_string(host) +
         ", \"cpu\": " + json_string(proc_field("/proc/cpuinfo", "model name")) +
         ", \"logical_cores\": " + std::to_string(cores) +
         ", \"memory\": " + json_string(mem) + ", \"os\": " +
         json_string(std::string(u.sysname) + " " + u.release + " " + u.machine) + "}";
}
