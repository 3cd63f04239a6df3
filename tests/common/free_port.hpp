// The --free-port mode of the programs whose ranks start without mpirun: the launching
// script asks one of them for a free TCP port for rank 0 to listen on.
#pragma once

#include <unistd.h>

#include <cstdio>

#include "bootstrap/tcp_rendezvous.hpp"

namespace zfc {
namespace test {

// Prints a port nothing listens on now; returns the process's exit status.
inline int print_free_port() {
  int fd = -1, port = 0;
  if (!listen_on(0, &fd, &port).ok()) return 1;
  close(fd);
  std::printf("%d\n", port);
  return 0;
}

}  // namespace test
}  // namespace zfc
