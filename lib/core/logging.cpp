#include "core/logging.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace zfc {
namespace {

LogLevel parse_level() {
  const char* v = std::getenv("ZIPFCOLL_DEBUG");
  if (v == nullptr) return LogLevel::kNone;
  if (strcasecmp(v, "WARN") == 0) return LogLevel::kWarn;
  if (strcasecmp(v, "INFO") == 0) return LogLevel::kInfo;
  if (strcasecmp(v, "TRACE") == 0) return LogLevel::kTrace;
  return LogLevel::kNone;
}

const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::kWarn: return "WARN";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kTrace: return "TRACE";
    default: return "";
  }
}

}  // namespace

LogLevel log_level() {
  static const LogLevel level = parse_level();
  return level;
}

void log_line(LogLevel level, int rank, const char* fmt, ...) {
  char text[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  std::fprintf(stderr, "zipfcoll %s rank %d: %s\n", level_name(level), rank, text);
}

}  // namespace zfc
