// A transport over the rendezvous's star of TCP connections: every collective is one
// allgather through rank 0, which forwards all of it. Slow, but it needs no library, so it
// carries what a communicator exchanges before its real transport is up: the ranks' verdicts
// on loading that transport's plugin, UCX's worker addresses, and an NCCL communicator's
// agreement and unique id (so NCCL starts without UCX). It cannot be split.
#pragma once

#include <memory>

#include "bootstrap/tcp_rendezvous.hpp"
#include "transport/transport.hpp"

namespace zfc {

// The transport takes the rendezvous over; its ranks are the rendezvous's.
std::unique_ptr<Transport> make_rendezvous_transport(std::unique_ptr<Rendezvous> meeting);

}  // namespace zfc
