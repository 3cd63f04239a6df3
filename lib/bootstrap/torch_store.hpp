// A client of the key-value store that torchrun's agent serves at MASTER_ADDR:MASTER_PORT
// (torch.distributed's TCPStore), so that ranks started by a real torchrun meet through it
// the way torch's own process groups do: rank 0 puts its rendezvous address under a key, the
// others read it. Only the commands that needs are spoken: validate, ping, set, check, get.
//
// Written here rather than linked: the only C++ client is inside libtorch (about a gigabyte,
// and a dependency no user of the C library should need), and the five commands are a few
// lines each. The wire format is little-endian: a command byte, then keys and values each as
// a uint64 length and its bytes.
#pragma once

#include <memory>
#include <string>

#include "host_device/status.hpp"
#include "bootstrap/launch_env.hpp"

namespace zfc {

class TorchStore {
 public:
  ~TorchStore();
  TorchStore(const TorchStore&) = delete;
  TorchStore& operator=(const TorchStore&) = delete;

  // Connects to the store at addr:port, retrying until timeout_ms has passed, and checks
  // that a TCPStore answers there (a ping with its nonce back). Every later call has the
  // same timeout.
  static Status connect(const std::string& addr, int port, int timeout_ms,
                        std::unique_ptr<TorchStore>* out);

  Status set(const std::string& key, const std::string& value);

  // The value of `key`, waiting (polling every few milliseconds) until some client sets it
  // or the timeout passes (zfcTimeout naming the key).
  Status get(const std::string& key, std::string* value);

  // This end's IPv4 address on the route to the store: one the store's host, and so the
  // other ranks, can reach.
  std::string local_address() const;

 private:
  TorchStore(int fd, int timeout_ms, std::string where);
  Status check(const std::string& key, bool* ready);

  int fd_;
  int timeout_ms_;
  std::string where_;  // "addr:port", for messages
};

// Where the ranks of a torchrun launch meet (collective over the launch's ranks). Rank 0
// makes a unique id (bootstrap/unique_id.hpp: a listening socket on a free port) and sets it
// under a key of this launch; the others read it from the store, as torch passes NCCL's id.
// The id's address is ZIPFCOLL_SOCKET_ADDR when set, else rank 0's address on its route to
// the store. The key names the run, its restart, and how many communicators this
// process has made from the environment before, so that each one meets at its own key. Rank 0
// gets its listening socket in *listen_fd (the others -1).
Status meet_through_torch_store(const LaunchInfo& launch, int timeout_ms, std::string* addr,
                                int* port, int* listen_fd);

}  // namespace zfc
