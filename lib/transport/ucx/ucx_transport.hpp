// The UCX transport: host memory, over UCP tagged messages between every pair of ranks. The
// collectives are the library's own schedules: a ring for allgather(v) and pairwise
// exchanges for all-to-all(v), each message tagged with its communicator, sender, operation
// and step. A rank that dies becomes zfcRemoteError on the others: UCX reports it for peers
// on other hosts, and the exit of a peer on this host is watched (ucx_world.hpp), which lets
// those use shared memory. Workers' addresses are exchanged over a bootstrap transport (the
// rendezvous's).
#pragma once

#include <cstdint>
#include <memory>

#include "transport/transport.hpp"

namespace zfc {

// Ok when this library can run the UCX transport (it was built with it and its plugin loads
// here); else zfcUnsupported saying what is missing.
Status ucx_transport_check();
inline bool ucx_transport_available() { return ucx_transport_check().ok(); }

// Collective over the ranks of `bootstrap`: creates a UCP context and worker, exchanges
// worker addresses over `bootstrap` and connects to every peer; the new transport has the
// same ranks. `timeout_ms` bounds every wait (0: wait as long as UCX does; a peer failure
// still ends the wait). zfcUnsupported in a build without UCX.
Status create_ucx_transport(Transport& bootstrap, int timeout_ms,
                            std::unique_ptr<Transport>* out);

// What the plugin libzipfcoll-ucx.so exports (ucx_plugin.cpp).
struct UcxPlugin {
  decltype(&create_ucx_transport) create;
};

// The id a UCX transport's messages carry in their tags (0 for any other transport): what
// keeps communicators that share ranks apart. Exposed for the tests.
uint32_t ucx_comm_id(const Transport& t);

}  // namespace zfc
