// The machine model as text (ZIPFCOLL_MACHINE_MODEL): what is printed reads back as exactly
// the same figures, partial models fill only what the config leaves out, and bad text is
// refused naming the part at fault.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "core/machine_model.hpp"

namespace zfc {
namespace {

// Sets ZIPFCOLL_MACHINE_MODEL for one test.
class ModelEnv {
 public:
  explicit ModelEnv(const char* value) { setenv("ZIPFCOLL_MACHINE_MODEL", value, 1); }
  ~ModelEnv() { unsetenv("ZIPFCOLL_MACHINE_MODEL"); }
};

bool same(const ModelFigures& a, const ModelFigures& b) {
  return a.intra_latency_us == b.intra_latency_us && a.intra_gbs == b.intra_gbs &&
         a.inter_latency_us == b.inter_latency_us && a.inter_gbs == b.inter_gbs &&
         a.local_gbs == b.local_gbs;
}

TEST(MachineModelText, PrintedFiguresReadBackExactly) {
  // Figures with no short decimal form must survive the trip bit for bit.
  const ModelFigures f{1.0 / 3.0, 8.1, 12.000000000000002, 0.1 + 0.2, 5.2};
  const std::string text = format_model(f);
  ModelFigures back;
  ASSERT_TRUE(parse_model_text(text.c_str(), &back).ok()) << text;
  EXPECT_TRUE(same(f, back)) << text;
  const MachineModel m1 = model_from_figures(f), m2 = model_from_figures(back);
  EXPECT_EQ(m1.intra.latency_s, m2.intra.latency_s);
  EXPECT_EQ(m1.inter.bytes_per_s, m2.inter.bytes_per_s);
  EXPECT_EQ(m1.local_bytes_per_s, m2.local_bytes_per_s);
}

TEST(MachineModelText, TheFormIsReadable) {
  EXPECT_EQ(format_model({2.5, 8.1, 2.5, 8.1, 5.2}), "intra=2.5:8.1,inter=2.5:8.1,local=5.2");
}

TEST(MachineModelText, AnySubsetInAnyOrder) {
  ModelFigures f;
  ASSERT_TRUE(parse_model_text("local=3,intra=0:40", &f).ok());
  EXPECT_EQ(f.given_mask(), 1 | 4);
  EXPECT_EQ(f.intra_latency_us, 0.0);
  EXPECT_EQ(f.intra_gbs, 40.0);
  EXPECT_EQ(f.local_gbs, 3.0);
  ASSERT_TRUE(parse_model_text("", &f).ok());
  EXPECT_EQ(f.given_mask(), 0);
  // 0:0 is a link not given (what a communicator of one rank prints).
  ASSERT_TRUE(parse_model_text("intra=0:0,inter=0:0,local=2", &f).ok());
  EXPECT_EQ(f.given_mask(), 4);
}

TEST(MachineModelText, BadTextIsRefusedNamingThePart) {
  const char* bad[] = {"intra=1",         "intra=1:0",   "intra=-1:5",  "inter=1:5,inter=2:5",
                       "local=0",         "local=fast",  "disk=4",      "intra=1:5,",
                       "intra=1:5;local=2", "intra=nan:4", "local=1e999"};
  for (const char* text : bad) {
    ModelFigures f{1, 2, 3, 4, 5};
    const Status s = parse_model_text(text, &f);
    EXPECT_EQ(s.code(), zfcInvalidArgument) << text;
    EXPECT_NE(s.message().find("ZIPFCOLL_MACHINE_MODEL"), std::string::npos) << s.message();
    EXPECT_EQ(f.intra_latency_us, 1.0) << "output written on failure: " << text;
  }
}

TEST(MachineModelText, TheEnvironmentFillsWhatTheConfigLeavesOut) {
  ModelEnv env("intra=1:10,inter=7:2,local=6");
  ModelFigures f;
  f.inter_latency_us = 3.0;
  f.inter_gbs = 30.0;  // given in the config: wins
  ASSERT_TRUE(apply_model_env(&f).ok());
  EXPECT_TRUE(same(f, ModelFigures{1, 10, 3, 30, 6}));
}

TEST(MachineModelText, ABadEnvironmentIsAnError) {
  ModelEnv env("intra=fast");
  ModelFigures f;
  EXPECT_EQ(apply_model_env(&f).code(), zfcInvalidArgument);
}

}  // namespace
}  // namespace zfc
