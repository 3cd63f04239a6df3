// The programs' shared command line and JSON writer: what they take, what they refuse and
// how they say it, and what the writer escapes.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tools/json_writer.hpp"
#include "tools/tool_options.hpp"

namespace {

using namespace zfc::tools;

// Runs `app` on the arguments; returns parse_command_line's status.
int run(CLI::App& app, std::vector<std::string> args) {
  args.insert(args.begin(), "prog");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parse_command_line(app, static_cast<int>(argv.size()), argv.data(), false);
}

// The message a refusal carries, as the program prints it after its name.
std::string refusal(CLI::App& app, std::vector<std::string> args) {
  args.insert(args.begin(), "prog");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(ToolNumbers, WholeNumbersRefuseWhatAtoiWouldMisread) {
  uint64_t v = 7;
  EXPECT_TRUE(parse_unsigned("42", &v));
  EXPECT_EQ(v, 42u);
  EXPECT_TRUE(parse_unsigned("1e6", &v));
  EXPECT_EQ(v, 1000000u);
  for (const char* bad : {"", "12x", "-3", "+3", " 3", "1.5", "1e-3", "abc"}) {
    EXPECT_FALSE(parse_unsigned(bad, &v)) << bad;
  }
  int64_t s = 0;
  EXPECT_TRUE(parse_signed("-5", &s));
  EXPECT_EQ(s, -5);
  EXPECT_FALSE(parse_signed("5.0", &s));
  EXPECT_FALSE(parse_signed("99999999999999999999", &s));
  double d = 0;
  EXPECT_TRUE(parse_real("2.5e1", &d));
  EXPECT_EQ(d, 25.0);
  EXPECT_FALSE(parse_real("inf", &d));
  EXPECT_FALSE(parse_real("2,5", &d));
}

TEST(ToolNumbers, BytesTakeNcclTestsSuffixes) {
  uint64_t v = 0;
  EXPECT_TRUE(parse_bytes("4", &v));
  EXPECT_EQ(v, 4u);
  EXPECT_TRUE(parse_bytes("1K", &v));
  EXPECT_EQ(v, 1024u);
  EXPECT_TRUE(parse_bytes("64M", &v));
  EXPECT_EQ(v, 64u << 20);
  EXPECT_TRUE(parse_bytes("2g", &v));
  EXPECT_EQ(v, 2ull << 30);
  for (const char* bad : {"", "K", "1KB", "-1K", "1T"}) EXPECT_FALSE(parse_bytes(bad, &v)) << bad;
}

TEST(ToolNumbers, ListsDropEmptyItems) {
  EXPECT_EQ(split_list("a,b,,c,"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(split_list("").empty());
}

TEST(ToolOptions, TakeValuesUnderEitherName) {
  CLI::App app("test", "prog");
  int iters = 20;
  size_t dim = 512;
  uint64_t minbytes = 1024;
  std::vector<size_t> tokens{1};
  std::string out;
  add_int(app, "-n,--iters", &iters, "timed iterations", 1, 1000);
  add_int<size_t>(app, "-D,--dim", &dim, "row width", 1);
  add_bytes(app, "-b,--minbytes", &minbytes, "smallest message");
  add_int_list<size_t>(app, "-K,--tokens", &tokens, "token counts", 1);
  add_output_file(app, &out, "the record");
  EXPECT_EQ(run(app, {"-n", "5", "--dim", "64", "-b", "4K", "-K", "1e4,3", "-J", "r.json"}),
            -1);
  EXPECT_EQ(iters, 5);
  EXPECT_EQ(dim, 64u);
  EXPECT_EQ(minbytes, 4096u);
  EXPECT_EQ(tokens, (std::vector<size_t>{10000, 3}));
  EXPECT_EQ(out, "r.json");
  EXPECT_EQ(run(app, {"--json", "s.json"}), -1);  // the record's other name
  EXPECT_EQ(out, "s.json");
  EXPECT_EQ(run(app, {"--help"}), 0);
}

TEST(ToolOptions, RefusalsNameTheOptionAndTheValue) {
  CLI::App app("test", "prog");
  int iters = 20, flag = 0;
  double scale = 1;
  std::string mode = "a";
  std::vector<std::string> names;
  add_int(app, "-n,--iters", &iters, "timed iterations", 1, 1000);
  add_int(app, "--flag", &flag, "0 or 1", 0, 1);
  add_real(app, "--scale", &scale, "scale", 0.0);
  add_choice(app, "--mode", &mode, "mode", {"a", "b"});
  add_name_list(app, "--algo", &names, "algorithms", {"x", "y"});
  EXPECT_EQ(refusal(app, {"-n", "12x"}),
            "bad option --iters 12x: a whole number that must be in [1, 1000]");
  EXPECT_EQ(refusal(app, {"--flag", "2"}),
            "bad option --flag 2: a whole number that must be in [0, 1]");
  EXPECT_EQ(refusal(app, {"--scale", "-1"}),
            "bad option --scale -1: a number that must be at least 0");
  EXPECT_EQ(refusal(app, {"--mode", "c"}), "bad option --mode c: not one of a|b");
  EXPECT_EQ(refusal(app, {"--algo", "x,z"}), "bad option --algo x,z: 'z' is not one of x, y");
  EXPECT_EQ(iters, 20);  // a refused value leaves the default
  EXPECT_EQ(run(app, {"--iters", "0"}), kExitBadOption);
  EXPECT_EQ(run(app, {"--unknown", "3"}), kExitBadOption);
  EXPECT_EQ(run(app, {"-n"}), kExitBadOption);
}

TEST(ToolJson, StringsAreEscaped) {
  EXPECT_EQ(json_string("plain"), "\"plain\"");
  EXPECT_EQ(json_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json_string("tab\there\nnl"), "\"tab\\u0009here\\u000anl\"");
}

TEST(ToolJson, ObjectsKeepTheirOrderAndFormats) {
  JsonObject inner;
  inner.text("host", "h\"1");
  JsonObject o;
  o.integer("G", 8)
      .text("algo", "auto")
      .number("MB", 1.5, "%.6f")
      .number("bad", 1.0 / 0.0)
      .boolean("grouped", true)
      .object("machine", inner)
      .raw("rows", json_array({"1", "2"}));
  EXPECT_EQ(o.str(),
            "{\"G\": 8, \"algo\": \"auto\", \"MB\": 1.500000, \"bad\": null, "
            "\"grouped\": true, \"machine\": {\"host\": \"h\\\"1\"}, \"rows\": [1, 2]}");
  EXPECT_EQ(json_array({"1", "2"}, "  "), "[\n  1,\n  2\n]");
  EXPECT_EQ(json_array({}), "[]");
}

TEST(ToolJson, LinesAreWrittenWhole) {
  const std::string path = ::testing::TempDir() + "tools_test_lines.json";
  {
    JsonLines lines;
    ASSERT_TRUE(lines.open(path));
    lines.write(JsonObject().text("event", "a"));
    lines.write(JsonObject().integer("step", 3));
    EXPECT_TRUE(lines.close());
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "{\"event\": \"a\"}\n{\"step\": 3}\n");
  std::remove(path.c_str());
  JsonLines nowhere;
  EXPECT_FALSE(nowhere.open("/nonexistent-dir/x.json"));
  EXPECT_TRUE(write_json_file(path, "{}\n"));
  EXPECT_FALSE(write_json_file("/nonexistent-dir/x.json", "{}\n"));
  std::remove(path.c_str());
}

}  // namespace
