#include "core/config.hpp"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>

#include "kernels/wire_format.hpp"

namespace zfc {

Status check_compression(const Compression& c) {
  if (kernels::find_wire_format(c.kind) == nullptr) {
    return error(zfcInvalidArgument, "compression kind %d is not a zfcCompressionKind_t",
                 c.code());
  }
  if (c.stochastic && c.kind == zfcCompressNone) {
    return error(zfcInvalidArgument, "compression kind 0x%x: fp32 (none) has no rounding "
                 "to make stochastic", c.code());
  }
  if (c.kind != zfcCompressNone && !(std::isfinite(c.scale) && c.scale > 0.0f)) {
    return error(zfcInvalidArgument, "compression scale %g must be finite and > 0",
                 static_cast<double>(c.scale));
  }
  return Status::Ok();
}

Status make_compression(int kind, float scale, Compression* out) {
  const int format = kind & ~ZFC_COMPRESS_STOCHASTIC;
  if (kind < 0 || kernels::find_wire_format(format) == nullptr) {
    return error(zfcInvalidArgument, "compression kind %d is not a zfcCompressionKind_t",
                 kind);
  }
  Compression c;
  c.kind = static_cast<zfcCompressionKind_t>(format);
  c.scale = scale;
  c.stochastic = (kind & ZFC_COMPRESS_STOCHASTIC) != 0;
  ZFC_RETURN_IF_ERROR(check_compression(c));
  *out = c;
  return Status::Ok();
}

Status copy_versioned(const void* user, size_t user_size, const size_t* known, size_t count,
                      const char* what, const char* initializer, void* full, size_t full_size) {
  std::string sizes;
  for (size_t i = 0; i < count; ++i) {
    if (user_size == known[i] && user_size <= full_size) {
      // Fields past the caller's layout keep the defaults *full holds.
      std::memcpy(full, user, user_size);
      return Status::Ok();
    }
    sizes += (i == 0 ? "" : ", ") + std::to_string(known[i]);
  }
  return error(zfcInvalidUsage,
               "%s has size %zu, not one of the layouts this library knows (%s): initialise "
               "it with %s",
               what, user_size, sizes.c_str(), initializer);
}

namespace {

// The sizes of zfcConfig_t in every release since 0.1.0, oldest first.
const size_t kConfigLayouts[] = {offsetof(zfcConfig_t, ranks_per_node),
                                 offsetof(zfcConfig_t, local_gbs),
                                 offsetof(zfcConfig_t, rounding_seed), sizeof(zfcConfig_t)};

Status parse_link(const zfcLinkModel_t& link, const char* which, double* latency_us,
                  double* gbs) {
  const bool zero = link.latency_us == 0.0 && link.bandwidth_gbs == 0.0;
  if (!zero && (!(std::isfinite(link.latency_us) && link.latency_us >= 0.0) ||
                !(std::isfinite(link.bandwidth_gbs) && link.bandwidth_gbs > 0.0))) {
    return error(zfcInvalidArgument,
                 "config %s link (latency_us %g, bandwidth_gbs %g) needs a finite latency "
                 ">= 0 and a finite bandwidth > 0, or both 0 (not given)",
                 which, link.latency_us, link.bandwidth_gbs);
  }
  *latency_us = link.latency_us;
  *gbs = link.bandwidth_gbs;
  return Status::Ok();
}

Status parse_model(const zfcConfig_t& user, ModelFigures* out) {
  ModelFigures m;
  ZFC_RETURN_IF_ERROR(
      parse_link(user.intra_node, "intra_node", &m.intra_latency_us, &m.intra_gbs));
  ZFC_RETURN_IF_ERROR(
      parse_link(user.inter_node, "inter_node", &m.inter_latency_us, &m.inter_gbs));
  if (!(std::isfinite(user.local_gbs) && user.local_gbs >= 0.0)) {
    return error(zfcInvalidArgument, "config local_gbs %g must be finite and > 0, or 0 (not "
                 "given)", user.local_gbs);
  }
  m.local_gbs = user.local_gbs;
  *out = m;
  return Status::Ok();
}

Status check_config_values(const zfcConfig_t& user) {
  if (user.transport < zfcTransportAuto || user.transport > zfcTransportUcx) {
    return error(zfcInvalidArgument, "config transport %d is not a zfcTransport_t",
                 user.transport);
  }
  if (user.device < -1) {
    return error(zfcInvalidArgument, "config device %d must be >= -1 (-1: the current "
                 "device)", user.device);
  }
  if (user.device != -1 && user.transport != zfcTransportNccl) {
    return error(zfcInvalidArgument, "config device %d is for zfcTransportNccl only (other "
                 "transports find each call's buffers to be host or device memory); use -1",
                 user.device);
  }
  if (user.timeout_ms < 0) {
    return error(zfcInvalidArgument, "config timeout_ms %d must be >= 0 (0: no bound)",
                 user.timeout_ms);
  }
  if (user.algorithm < zfcAlgoAuto || user.algorithm >= zfcNumAlgorithms) {
    return error(zfcInvalidArgument, "config algorithm %d is not a zfcAlgorithm_t",
                 user.algorithm);
  }
  if (user.bounds_check != 0 && user.bounds_check != 1) {
    return error(zfcInvalidArgument, "config bounds_check %d must be 0 or 1",
                 user.bounds_check);
  }
  if (user.ranks_per_node < 0) {
    return error(zfcInvalidArgument, "config ranks_per_node %d must be >= 0 (0: by host)",
                 user.ranks_per_node);
  }
  return Status::Ok();
}

}  // namespace

Status parse_config(const zfcConfig_t* caller, Config* out) {
  Config c;
  if (caller != nullptr) {
    zfcConfig_t user = ZFC_CONFIG_INITIALIZER;
    ZFC_RETURN_IF_ERROR(copy_versioned(caller, caller->size, kConfigLayouts,
                                       sizeof kConfigLayouts / sizeof kConfigLayouts[0],
                                       "config struct", "ZFC_CONFIG_INITIALIZER", &user,
                                       sizeof user));
    if (user.magic != ZFC_CONFIG_MAGIC) {
      return error(zfcInvalidUsage, "config struct has magic 0x%x, expected 0x%x: initialise "
                   "it with ZFC_CONFIG_INITIALIZER", user.magic, ZFC_CONFIG_MAGIC);
    }
    if (user.version > static_cast<unsigned>(ZFC_VERSION_CODE) || user.version < 100) {
      return error(zfcInvalidUsage, "config struct version %u is not one this library (%d) "
                   "knows", user.version, ZFC_VERSION_CODE);
    }
    ZFC_RETURN_IF_ERROR(check_config_values(user));
    ZFC_RETURN_IF_ERROR(parse_model(user, &c.model));
    c.ranks_per_node = user.ranks_per_node;
    c.transport = static_cast<zfcTransport_t>(user.transport);
    c.device = user.device;
    // Taken as given, whatever the header's version: a config from a header whose
    // initializer set 0 (0.13.4 and earlier) meant no bound, and cannot be told from a
    // deliberate 0, so it keeps waiting without one rather than failing a long wait that
    // worked when the program was built. ZFC_CONFIG_INITIALIZER now sets the default.
    c.timeout_ms = user.timeout_ms;
    c.algorithm = static_cast<zfcAlgorithm_t>(user.algorithm);
    c.bounds_check = user.bounds_check == 1;
    if (user.name != nullptr) c.name = user.name;
    c.rounding_seed = user.rounding_seed;
    ZFC_RETURN_IF_ERROR(
        make_compression(user.compression, user.compress_scale, &c.compression));
  }
  *out = std::move(c);
  return Status::Ok();
}

}  // namespace zfc
