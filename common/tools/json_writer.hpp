// The one JSON writer of the zipfcoll programs: objects built member by member, every string
// escaped (quotes, backslashes, control characters), numbers written as given or as null when
// not finite (JSON has no inf or nan). Header-only; link zipfcoll_tools.
//
//   zfc::tools::JsonObject o;
//   o.text("gpu", name).integer("ranks", g).number("MB", mb, "%.6f");
//   zfc::tools::write_json_file(path, o.str() + "\n");
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace zfc::tools {

// The JSON string literal of `s`.
inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// `value` with a printf format for one double ("%.6f", "%.12g"); null when not finite.
inline std::string json_number(double value, const char* format = "%.12g") {
  if (!std::isfinite(value)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

// An object's members in the order given, written {"k": v, "k2": v2}.
class JsonObject {
 public:
  JsonObject& text(const std::string& key, const std::string& value) {
    return raw(key, json_string(value));
  }
  JsonObject& number(const std::string& key, double value, const char* format = "%.12g") {
    return raw(key, json_number(value, format));
  }
  JsonObject& integer(const std::string& key, long long value) {
    return raw(key, std::to_string(value));
  }
  JsonObject& boolean(const std::string& key, bool value) {
    return raw(key, value ? "true" : "false");
  }
  JsonObject& object(const std::string& key, const JsonObject& value) {
    return raw(key, value.str());
  }
  // A member whose value is JSON already (an array made with json_array, say).
  JsonObject& raw(const std::string& key, const std::string& json) {
    members_.push_back(json_string(key) + ": " + json);
    return *this;
  }
  const std::vector<std::string>& members() const { return members_; }
  std::string str() const {
    std::string out = "{";
    for (size_t i = 0; i < members_.size(); ++i) out += (i ? ", " : "") + members_[i];
    return out + "}";
  }

 private:
  std::vector<std::string> members_;
};

// [a, b, ...] of JSON values; with an `indent`, one value per line after it and the closing
// bracket on a line of its own.
inline std::string json_array(const std::vector<std::string>& items,
                              const std::string& indent = "") {
  if (items.empty()) return "[]";
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ",";
    out += indent.empty() ? std::string(i > 0 ? " " : "") : "\n" + indent;
    out += items[i];
  }
  return out + (indent.empty() ? "]" : "\n]");
}

// Writes `text` to `path`; false when it cannot be written whole.
inline bool write_json_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) return false;
  out << text;
  out.close();
  return static_cast<bool>(out);
}

// Appends JSON lines to a file as they come (a log), flushed after each.
class JsonLines {
 public:
  JsonLines() = default;
  JsonLines(const JsonLines&) = delete;
  JsonLines& operator=(const JsonLines&) = delete;
  ~JsonLines() { close(); }
  bool open(const std::string& path) {
    file_ = std::fopen(path.c_str(), "w");
    return file_ != nullptr;
  }
  bool is_open() const { return file_ != nullptr; }
  void write(const JsonObject& o) {
    if (file_ == nullptr) return;
    std::fputs(o.str().c_str(), file_);
    std::fputc('\n', file_);
    std::fflush(file_);
  }
  // False when something written was lost.
  bool close() {
    if (file_ == nullptr) return true;
    const bool ok = std::ferror(file_) == 0;
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    return ok && closed;
  }

 private:
  FILE* file_ = nullptr;
};

}  // namespace zfc::tools
