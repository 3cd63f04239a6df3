// Result rows of zfc_perf: printed as an aligned table (nccl-tests style, '#' comments) and
// kept for the --json record, which also names the machine, rank count, library version
// and options.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tools/json_writer.hpp"

class Row {
 public:
  // A number printed with `precision` decimals in a column `width` wide.
  Row& num(const char* key, double value, int width, int precision);
  // A whole number.
  Row& count(const char* key, double value, int width) { return num(key, value, width, 0); }
  Row& text(const char* key, const std::string& value, int width);
  // A number written to JSON only.
  Row& quiet(const char* key, double value);

  std::string header() const;
  std::string line() const;
  std::string json() const;

 private:
  struct Field {
    std::string key;
    std::string shown;  // as printed in the table
    std::string json;   // as written to JSON
    int width;
    bool shown_in_table = true;
  };
  std::vector<Field> fields_;
};

class Report {
 public:
  // Prints (rank 0 only) and records a row.
  void add(const Row& row, bool print);
  // `meta`'s members are written before the rows.
  bool write_json(const std::string& path, const zfc::tools::JsonObject& meta) const;

 private:
  std::vector<Row> rows_;
  bool header_printed_ = false;
};

// The machine from /proc and uname: host, CPU model, logical cores, memory, OS.
zfc::tools::JsonObject machine_json();
