// Config parsing: zfcConfig_t and zfcSparsePlanConfig_t holding arbitrary bytes, the launch
// environment of torchrun-style starts, and unique ids. Each is accepted with sane values or
// refused with a known code and a message; nothing crashes or reads past its input.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstring>
#include <map>
#include <string>

#include "algo/sparse_reduce.hpp"
#include "bootstrap/launch_env.hpp"
#include "bootstrap/unique_id.hpp"
#include "core/config.hpp"
#include "fuzz_check.hpp"

namespace {

using zfc::fuzz::check_status;
using zfc::fuzz::require;

// Arbitrary bytes over a struct whose guard fields are, more often than not, right, so
// that the checks past them are reached.
template <class T>
void fill(FuzzedDataProvider& in, T* v, unsigned magic) {
  std::memset(v, 0, sizeof *v);
  const std::vector<uint8_t> bytes = in.ConsumeBytes<uint8_t>(sizeof *v);
  if (!bytes.empty()) std::memcpy(v, bytes.data(), bytes.size());
  if (in.ConsumeIntegralInRange<int>(0, 3) != 0) {
    v->size = sizeof *v;
    v->magic = magic;
    v->version = ZFC_VERSION_CODE;
  }
}

void fuzz_comm_config(FuzzedDataProvider& in) {
  zfcConfig_t user;
  fill(in, &user, ZFC_CONFIG_MAGIC);
  const std::string name = in.ConsumeRandomLengthString(64);
  user.name = in.ConsumeBool() ? name.c_str() : nullptr;
  zfc::Config c;
  const zfc::Status s = zfc::parse_config(&user, &c);
  check_status(s);
  if (!s.ok()) return;
  require(c.timeout_ms >= 0 && c.ranks_per_node >= 0, "a negative bound was accepted");
  require(c.algorithm >= zfcAlgoAuto && c.algorithm < zfcNumAlgorithms, "a bad algorithm");
  require(zfc::check_compression(c.compression).ok(), "a bad compression was accepted");
  // The library copies up to the first NUL, as C strings go.
  require(user.name == nullptr || c.name == std::string(name.c_str()), "the name was not copied");
}

void fuzz_plan_config(FuzzedDataProvider& in) {
  zfcSparsePlanConfig_t user;
  fill(in, &user, ZFC_SPARSE_PLAN_MAGIC);
  // C++ allows an enum only the values its bits can hold (0..7 for zfcDataType_t); a C
  // caller may pass more, but this harness cannot without undefined behaviour of its own.
  int32_t raw[2];
  std::memcpy(&raw[0], &user.row_type, 4);
  std::memcpy(&raw[1], &user.index_type, 4);
  user.row_type = static_cast<zfcDataType_t>(raw[0] & 7);
  user.index_type = static_cast<zfcDataType_t>(raw[1] & 7);
  zfc::Config comm_config;
  zfc::PlanSpec spec;
  const zfc::Status s = zfc::parse_plan_config(&user, comm_config, &spec);
  check_status(s);
  if (!s.ok()) return;
  require(spec.dim > 0 && spec.vocab > 0, "an empty table was accepted");
  require(spec.algorithm >= zfcAlgoAuto && spec.algorithm < zfcNumAlgorithms,
          "a bad plan algorithm");
  require(zfc::check_compression(spec.compression).ok(), "a bad plan compression");
}

const char* lookup(const char* name, void* context) {
  const auto* env = static_cast<const std::map<std::string, std::string>*>(context);
  const auto it = env->find(name);
  return it == env->end() ? nullptr : it->second.c_str();
}

void fuzz_launch_env(FuzzedDataProvider& in) {
  static const char* const kNames[] = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
                                       "MASTER_PORT", "ZIPFCOLL_RANK", "ZIPFCOLL_WORLD_SIZE",
                                       "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"};
  std::map<std::string, std::string> env;
  for (const char* n : kNames) {
    if (in.ConsumeBool()) env[n] = in.ConsumeRandomLengthString(24);
  }
  zfc::LaunchInfo info;
  const zfc::Status s = zfc::read_launch_env(&lookup, &env, &info);
  check_status(s);
  if (!s.ok()) return;
  require(info.size >= 1 && info.rank >= 0 && info.rank < info.size, "a bad rank accepted");
  require(info.master_port > 0 && info.master_port < 65536, "a bad port was accepted");
  require(!info.master_addr.empty(), "an empty address was accepted");
}

void fuzz_unique_id(FuzzedDataProvider& in) {
  char id[zfc::kUniqueIdBytes];
  const std::vector<uint8_t> bytes = in.ConsumeBytes<uint8_t>(sizeof id);
  std::memset(id, 0, sizeof id);
  if (!bytes.empty()) std::memcpy(id, bytes.data(), bytes.size());
  std::string addr;
  int port = 0;
  const zfc::Status s = zfc::parse_unique_id(id, &addr, &port);
  check_status(s);
  if (s.ok()) require(port > 0 && port < 65536 && !addr.empty(), "a bad id was accepted");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: fuzz_comm_config(in); break;
    case 1: fuzz_plan_config(in); break;
    case 2: fuzz_launch_env(in); break;
    default: fuzz_unique_id(in); break;
  }
  return 0;
}
