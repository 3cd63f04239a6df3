// The NCCL transport: NCCL's communicator on one CUDA device, for collectives whose buffers
// live on that device. Every wait polls NCCL's asynchronous error state and is bounded by the
// communicator's timeout, after which the NCCL communicator is aborted, so a dead or stalled
// peer becomes zfcTimeout or zfcTransportError instead of a hang. Host buffers (operation
// headers, counts) are staged through device memory, so every algorithm runs over it.
#pragma once

#include <memory>

#include "transport/transport.hpp"

namespace zfc {

// Ok when this library can run the NCCL transport (it was built with it and its plugin loads
// here); else zfcUnsupported saying what is missing.
Status nccl_transport_check();
inline bool nccl_transport_available() { return nccl_transport_check().ok(); }

// Collective over the ranks of `bootstrap` (MPI or the library's own bootstrap), which
// carries NCCL's unique id and the ranks' verdicts: a rank without a usable device
// (`device` -1: the current one) fails every rank with the same zfcUnsupported naming it.
// timeout_ms bounds every wait (0: init is bounded by 60 s, operations are not).
Status create_nccl_transport(Transport& bootstrap, int device, int timeout_ms,
                             std::unique_ptr<Transport>* out);

// What the plugin libzipfcoll-nccl.so exports (nccl_plugin.cpp).
struct NcclPlugin {
  decltype(&create_nccl_transport) create;
};

}  // namespace zfc
