// The command line every zipfcoll program shares: option names, checked numbers and lists on
// CLI11, and one way to refuse a bad option. Header-only, so any program can take it by
// linking zipfcoll_tools (common/tools/CMakeLists.txt).
//
// Names follow nccl-tests (src/common.cu) wherever the meaning is the same, so a user who
// knows one knows the other; where nccl-tests has no name, one name holds across programs:
//
//   option                 meaning                                        programs
//   -b,--minbytes BYTES    smallest message (K, M, G suffixes)            zfc_perf
//   -e,--maxbytes BYTES    largest message                                zfc_perf
//   -i,--stepbytes BYTES   size increment instead of a factor             zfc_perf
//   -f,--stepfactor F      size multiplier                                zfc_perf
//   -n,--iters N           timed iterations (a benchmark's measured       zfc_perf, zfc_demo,
//                          steps)                                          zfc_gpu_bench,
//                                                                          zfc_nccl_allgather
//   -w,--warmup_iters N    untimed iterations first                       same
//   -c,--check 0|1         check every result against a reference        zfc_perf
//   -d,--datatype T        element type of the rows moved (float, half)  zfc_nccl_allgather
//   -g,--ngpus 0|1         GPUs per rank                                  zfc_perf
//   -J,--output_file FILE  the JSON record (also --json)                  every program that
//                                                                          writes JSON
//   -K,--tokens N          tokens per rank and step (a list in            zfc_perf, zfc_model,
//                          zfc_gpu_bench)                                  zfc_gpu_bench,
//                                                                          zfc_nccl_allgather
//   -D,--dim D             row (embedding) width (a list in               all that have rows
//                          zfc_gpu_bench)
//   -L,--window-len L      words per window of real text                  zfc_perf, zfc_demo,
//                                                                          zfc_heaps
//   --corpus DIR, --vocab V, --zipf S, --seed N, --scale F (fp16's), --compression L,
//   --ranks-per-node N, --stream-chunk BYTES: one spelling wherever they appear.
//   --steps N              training steps (lstm_lm, fault_trial): not benchmark iterations,
//                          so not -n
//
// Exit statuses: 0 after --help, 2 for a refused option (kExitBadOption), the message naming
// the option and the value it was given. Under mpirun every rank parses and refuses alike,
// before any collective; only the rank that prints says why.
#pragma once

#include <CLI/CLI.hpp>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace zfc::tools {

constexpr int kExitBadOption = 2;

// ---- numbers and lists, checked (no atoi: "12x", "-3" and "" are refused, not read as 12,
// a huge unsigned, or 0) ------------------------------------------------------------------

// A whole number >= 0. Exponent forms that are whole ("1e6") are taken too: sizes read so.
inline bool parse_unsigned(const std::string& text, uint64_t* out) {
  if (text.empty() || text[0] == '-' || text[0] == '+' || std::isspace(text[0])) return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno == 0 && *end == '\0') {
    *out = v;
    return true;
  }
  errno = 0;
  const double d = std::strtod(text.c_str(), &end);
  // Below 2^53 every whole double is exact.
  if (errno != 0 || *end != '\0' || !(d >= 0) || d > 9007199254740992.0 || d != std::floor(d)) {
    return false;
  }
  *out = static_cast<uint64_t>(d);
  return true;
}

inline bool parse_signed(const std::string& text, int64_t* out) {
  if (text.empty() || std::isspace(text[0])) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

inline bool parse_real(const std::string& text, double* out) {
  if (text.empty() || std::isspace(text[0])) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

// Byte counts with an optional K, M or G suffix (powers of 1024), as nccl-tests reads them.
inline bool parse_bytes(const std::string& text, uint64_t* out) {
  if (text.empty()) return false;
  double mult = 1;
  std::string digits = text;
  switch (text.back()) {
    case 'K': case 'k': mult = 1024.0; break;
    case 'M': case 'm': mult = 1024.0 * 1024; break;
    case 'G': case 'g': mult = 1024.0 * 1024 * 1024; break;
    default: break;
  }
  if (mult > 1) digits.pop_back();
  double v = 0;
  if (!parse_real(digits, &v) || v < 0 || v * mult > 1e18) return false;
  *out = static_cast<uint64_t>(v * mult);
  return true;
}

// "a,b,,c" -> {a, b, c}.
inline std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// ---- refusing ------------------------------------------------------------------------

// The error a bad value raises inside parsing: "bad option NAME VALUE: WHY".
inline CLI::ValidationError bad_option(const std::string& name, const std::string& value,
                                       const std::string& why) {
  return CLI::ValidationError("bad option " + name + " " + value + ": " + why);
}

// The range a number must lie in, as the refusal says it.
template <class T>
std::string range_text(T lo, T hi) {
  std::ostringstream s;
  if (hi == std::numeric_limits<T>::max()) {
    s << "must be at least " << lo;
  } else {
    s << "must be in [" << lo << ", " << hi << "]";
  }
  return s.str();
}

template <class T>
std::string shown(T v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// A whole-number option in [lo, hi] (integral T, signed or not), default shown in --help.
template <class T>
CLI::Option* add_int(CLI::App& app, const std::string& names, T* out, const std::string& help,
                     T lo = 0, T hi = std::numeric_limits<T>::max()) {
  static_assert(std::is_integral<T>::value, "add_int takes whole numbers");
  CLI::Option* opt = app.add_option_function<std::string>(
      names,
      [out, lo, hi, names](const std::string& v) {
        const std::string name = names.substr(names.rfind(',') + 1);
        bool ok = false;
        if (std::is_signed<T>::value) {
          int64_t x = 0;
          ok = parse_signed(v, &x) && x >= static_cast<int64_t>(lo) &&
               x <= static_cast<int64_t>(hi);
          if (ok) *out = static_cast<T>(x);
        } else {
          uint64_t x = 0;
          ok = parse_unsigned(v, &x) && x >= static_cast<uint64_t>(lo) &&
               x <= static_cast<uint64_t>(hi);
          if (ok) *out = static_cast<T>(x);
        }
        if (!ok) throw bad_option(name, v, "a whole number that " + range_text(lo, hi));
      },
      help);
  return opt->type_name("INT")->default_str(shown(*out));
}

// A real-number option in [lo, hi] (float or double).
template <class T>
CLI::Option* add_real(CLI::App& app, const std::string& names, T* out, const std::string& help,
                      double lo, double hi = std::numeric_limits<double>::max()) {
  CLI::Option* opt = app.add_option_function<std::string>(
      names,
      [out, lo, hi, names](const std::string& v) {
        const std::string name = names.substr(names.rfind(',') + 1);
        double x = 0;
        if (!parse_real(v, &x) || x < lo || x > hi) {
          throw bad_option(name, v, "a number that " + range_text(lo, hi));
        }
        *out = static_cast<T>(x);
      },
      help);
  return opt->type_name("X")->default_str(shown(*out));
}

// A byte count (K, M, G suffixes) of at least `lo`.
template <class T>
CLI::Option* add_bytes(CLI::App& app, const std::string& names, T* out, const std::string& help,
                       uint64_t lo = 0) {
  CLI::Option* opt = app.add_option_function<std::string>(
      names,
      [out, lo, names](const std::string& v) {
        const std::string name = names.substr(names.rfind(',') + 1);
        uint64_t x = 0;
        if (!parse_bytes(v, &x) || x < lo) {
          throw bad_option(name, v, "a byte count (K, M, G suffixes) that " +
                                        range_text<uint64_t>(lo, UINT64_MAX));
        }
        *out = static_cast<T>(x);
      },
      help);
  return opt->type_name("BYTES")->default_str(shown(*out));
}

// A comma list of whole numbers, each at least `lo` ("1e6" forms taken).
template <class T>
CLI::Option* add_int_list(CLI::App& app, const std::string& names, std::vector<T>* out,
                          const std::string& help, T lo = 0) {
  std::string defaults;
  for (T v : *out) defaults += (defaults.empty() ? "" : ",") + shown(v);
  CLI::Option* opt = app.add_option_function<std::string>(
      names,
      [out, lo, names](const std::string& v) {
        const std::string name = names.substr(names.rfind(',') + 1);
        std::vector<T> items;
        for (const std::string& item : split_list(v)) {
          uint64_t x = 0;
          if (!parse_unsigned(item, &x) || x < static_cast<uint64_t>(lo) ||
              x > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
            throw bad_option(name, v, "'" + item + "' is not a whole number that " +
                                          range_text<T>(lo, std::numeric_limits<T>::max()));
          }
          items.push_back(static_cast<T>(x));
        }
        if (items.empty()) throw bad_option(name, v, "an empty list");
        *out = items;
      },
      help);
  return opt->type_name("LIST")->default_str(defaults);
}

// A comma list of names, each one of `known` (empty `known`: any).
inline CLI::Option* add_name_list(CLI::App& app, const std::string& names,
                                  std::vector<std::string>* out, const std::string& help,
                                  const std::vector<std::string>& known) {
  return app
      .add_option_function<std::string>(
          names,
          [out, known, names](const std::string& v) {
            const std::string name = names.substr(names.rfind(',') + 1);
            std::vector<std::string> items = split_list(v);
            if (items.empty()) throw bad_option(name, v, "an empty list");
            for (const std::string& item : items) {
              bool ok = known.empty();
              for (const std::string& k : known) ok = ok || item == k;
              if (!ok) {
                std::string all;
                for (const std::string& k : known) all += (all.empty() ? "" : ", ") + k;
                throw bad_option(name, v, "'" + item + "' is not one of " + all);
              }
            }
            *out = items;
          },
          help)
      ->type_name("LIST");
}

// One word of `known`.
inline CLI::Option* add_choice(CLI::App& app, const std::string& names, std::string* out,
                               const std::string& help, const std::vector<std::string>& known) {
  std::string all;
  for (const std::string& k : known) all += (all.empty() ? "" : "|") + k;
  return app
      .add_option_function<std::string>(
          names,
          [out, known, all, names](const std::string& v) {
            for (const std::string& k : known) {
              if (v == k) {
                *out = v;
                return;
              }
            }
            throw bad_option(names.substr(names.rfind(',') + 1), v, "not one of " + all);
          },
          help)
      ->type_name(all)
      ->default_str(*out);
}

// The JSON record's file, under the nccl-tests name.
inline CLI::Option* add_output_file(CLI::App& app, std::string* out, const std::string& help) {
  // nccl-tests spells it -J/--output_file; --json is kept as its other name, the one this
  // project's programs used before.
  return app.add_option("-J,--output_file,--json", *out, help)->type_name("FILE");
}

// Parses argv. Returns -1 when the program goes on; otherwise the status to exit with: 0
// after --help (printed when `print`), kExitBadOption for a bad option (the reason printed
// to stderr, prefixed by the program's name, when `print`).
inline int parse_command_line(CLI::App& app, int argc, const char* const* argv, bool print) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    if (print) std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ExtrasError&) {
    // CLI11's own sentence lists them in reverse; say them as given.
    if (print) {
      std::string given;
      for (const std::string& a : app.remaining()) given += " " + a;
      std::fprintf(stderr, "%s: unknown option or stray value:%s (see --help)\n",
                   app.get_name().c_str(), given.c_str());
    }
    return kExitBadOption;
  } catch (const CLI::ParseError& e) {
    if (print) {
      std::fprintf(stderr, "%s: %s (see --help)\n", app.get_name().c_str(), e.what());
    }
    return kExitBadOption;
  }
  return -1;
}

// argv joined with spaces, for a record of how a run was started.
inline std::string joined_command_line(int argc, const char* const* argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) out += (i ? " " : "") + std::string(argv[i]);
  return out;
}

}  // namespace zfc::tools
