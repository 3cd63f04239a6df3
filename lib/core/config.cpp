#include "core/config.hpp"

#include <cmath>

namespace zfc {

Status check_compression(const Compression& c) {
  if (c.kind != zfcCompressNone && c.kind != zfcCompressFp16 && c.kind != zfcCompressBf16) {
    return error(zfcInvalidArgument, "compression kind %d is not a zfcCompressionKind_t",
                 static_cast<int>(c.kind));
  }
  if (c.kind != zfcCompressNone && !(std::isfinite(c.scale) && c.scale > 0.0f)) {
    return error(zfcInvalidArgument, "compression scale %g must be finite and > 0",
                 static_cast<double>(c.scale));
  }
  return Status::Ok();
}

Status make_compression(int kind, float scale, Compression* out) {
  if (kind != zfcCompressNone && kind != zfcCompressFp16 && kind != zfcCompressBf16) {
    return error(zfcInvalidArgument, "compression kind %d is not a zfcCompressionKind_t",
                 kind);
  }
  const Compression c{static_cast<zfcCompressionKind_t>(kind), scale};
  ZFC_RETURN_IF_ERROR(check_compression(c));
  *out = c;
  return Status::Ok();
}

namespace {

Status parse_link(const zfcLinkModel_t& link, const char* which, LinkParams* out) {
  const bool zero = link.latency_us == 0.0 && link.bandwidth_gbs == 0.0;
  if (zero) {
    *out = LinkParams{};
    return Status::Ok();
  }
  if (!(std::isfinite(link.latency_us) && link.latency_us >= 0.0) ||
      !(std::isfinite(link.bandwidth_gbs) && link.bandwidth_gbs > 0.0)) {
    return error(zfcInvalidArgument,
                 "config %s link (latency_us %g, bandwidth_gbs %g) needs a finite latency "
                 ">= 0 and a finite bandwidth > 0, or both 0 (measure)",
                 which, link.latency_us, link.bandwidth_gbs);
  }
  out->latency_s = link.latency_us * 1e-6;
  out->bytes_per_s = link.bandwidth_gbs * 1e9;
  return Status::Ok();
}

}  // namespace

Status parse_config(const zfcConfig_t* user, Config* out) {
  Config c;
  if (user != nullptr) {
    if (user->size != sizeof(zfcConfig_t) || user->magic != ZFC_CONFIG_MAGIC) {
      return error(zfcInvalidUsage,
                   "config struct has size %zu and magic 0x%x, expected %zu and 0x%x: "
                   "initialise it with ZFC_CONFIG_INITIALIZER",
                   user->size, user->magic, sizeof(zfcConfig_t), ZFC_CONFIG_MAGIC);
    }
    if (user->version > static_cast<unsigned>(ZFC_VERSION_CODE) || user->version < 100) {
      return error(zfcInvalidUsage, "config struct version %u is not one this library (%d) knows",
                   user->version, ZFC_VERSION_CODE);
    }
    if (user->transport < zfcTransportAuto || user->transport > zfcTransportUcx) {
      return error(zfcInvalidArgument, "config transport %d is not a zfcTransport_t",
                   user->transport);
    }
    if (user->device < -1) {
      return error(zfcInvalidArgument, "config device %d must be >= -1 (-1: the current "
                   "device)", user->device);
    }
    if (user->device != -1 && user->transport != zfcTransportNccl) {
      return error(zfcInvalidArgument, "config device %d is for zfcTransportNccl only (other "
                   "transports find each call's buffers to be host or device memory); use -1",
                   user->device);
    }
    if (user->timeout_ms < 0) {
      return error(zfcInvalidArgument, "config timeout_ms %d must be >= 0 (0: no bound)",
                   user->timeout_ms);
    }
    if (user->algorithm < zfcAlgoAuto || user->algorithm >= zfcNumAlgorithms) {
      return error(zfcInvalidArgument, "config algorithm %d is not a zfcAlgorithm_t",
                   user->algorithm);
    }
    if (user->bounds_check != 0 && user->bounds_check != 1) {
      return error(zfcInvalidArgument, "config bounds_check %d must be 0 or 1",
                   user->bounds_check);
    }
    if (user->ranks_per_node < 0) {
      return error(zfcInvalidArgument, "config ranks_per_node %d must be >= 0 (0: by host)",
                   user->ranks_per_node);
    }
    ZFC_RETURN_IF_ERROR(parse_link(user->intra_node, "intra_node", &c.intra_node));
    ZFC_RETURN_IF_ERROR(parse_link(user->inter_node, "inter_node", &c.inter_node));
    c.ranks_per_node = user->ranks_per_node;
    c.transport = static_cast<zfcTransport_t>(user->transport);
    c.device = user->device;
    c.timeout_ms = user->timeout_ms;
    c.algorithm = static_cast<zfcAlgorithm_t>(user->algorithm);
    c.bounds_check = user->bounds_check == 1;
    if (user->name != nullptr) c.name = user->name;
    ZFC_RETURN_IF_ERROR(
        make_compression(user->compression, user->compress_scale, &c.compression));
  }
  *out = std::move(c);
  return Status::Ok();
}

}  // namespace zfc
