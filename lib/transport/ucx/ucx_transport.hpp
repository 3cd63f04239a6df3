// The UCX transport: host memory, over UCP tagged messages between every pair of ranks. The
// collectives are the library's own schedules: a ring for allgather(v) and pairwise
// exchanges for all-to-all(v), each message tagged with its communicator, sender, operation
// and step. Endpoints use peer error handling, so a rank that dies becomes zfcRemoteError on
// the others. Workers' addresses are exchanged through the bootstrap rendezvous.
#pragma once

#include <cstdint>
#include <memory>

#include "bootstrap/tcp_rendezvous.hpp"
#include "transport/transport.hpp"

namespace zfc {

// Whether this build has the UCX transport.
bool ucx_transport_available();

// Collective over the ranks of `meeting`: creates a UCP context and worker, exchanges worker
// addresses and connects to every peer. `timeout_ms` bounds every wait (0: wait as long as
// UCX does; a peer failure still ends the wait). zfcUnsupported in a build without UCX.
Status create_ucx_transport(Rendezvous& meeting, int timeout_ms,
                            std::unique_ptr<Transport>* out);

// The id a UCX transport's messages carry in their tags (0 for any other transport): what
// keeps communicators that share ranks apart. Exposed for the tests.
uint32_t ucx_comm_id(const Transport& t);

}  // namespace zfc
