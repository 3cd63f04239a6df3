// Log lines to stderr, filtered by ZIPFCOLL_DEBUG=WARN|INFO|TRACE (default: none).
#pragma once

namespace zfc {

enum class LogLevel { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

LogLevel log_level();
void log_line(LogLevel level, int rank, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

}  // namespace zfc

#define ZFC_LOG(level, rank, ...)                                               \
  do {                                                                          \
    if (::zfc::log_level() >= ::zfc::LogLevel::level) {                         \
      ::zfc::log_line(::zfc::LogLevel::level, (rank), __VA_ARGS__);             \
    }                                                                           \
  } while (0)
