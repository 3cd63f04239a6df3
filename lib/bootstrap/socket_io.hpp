// Blocking TCP helpers with deadlines, shared by the rendezvous of ranks started without MPI
// and the client of torchrun's store: every wait ends at a deadline, so a peer that never
// answers is an error, not a hang.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "host_device/status.hpp"

namespace zfc {

using SocketClock = std::chrono::steady_clock;

// Milliseconds left before `deadline` (0 once it has passed).
int remaining_ms(SocketClock::time_point deadline);

// Waits until fd is ready for `events` (POLLIN, POLLOUT) or the deadline passes (zfcTimeout).
Status wait_fd(int fd, short events, SocketClock::time_point deadline, const char* what);

// All n bytes, or zfcRemoteError when the peer hangs up, zfcTimeout at the deadline.
Status send_all(int fd, const void* data, size_t n, SocketClock::time_point deadline,
                const char* what);
Status recv_all(int fd, void* data, size_t n, SocketClock::time_point deadline,
                const char* what);

// Connects to addr:port (IPv4), retrying every 20 ms until the deadline, for a peer that may
// not listen yet. On success *fd is the connected socket (TCP_NODELAY). An address that does
// not resolve is zfcInvalidUsage naming `whose` address; no answer by the deadline is
// zfcTimeout with the last error seen.
Status connect_until(const std::string& addr, int port, SocketClock::time_point deadline,
                     const char* whose, int* fd);

// Sends small messages at once (TCP_NODELAY): the meetings are rounds of a few bytes.
void no_delay(int fd);

// The local IPv4 address of a connected socket, as text ("" when it has none).
std::string local_address(int fd);

}  // namespace zfc
