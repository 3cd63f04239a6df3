// Compiled instead of mpi_transport.cpp when the library is built without MPI.
#include "transport/mpi/mpi_transport.hpp"

namespace zfc {

Status mpi_transport_check() {
  return error(zfcUnsupported,
               "this zipfcoll was built without MPI (configure with ZIPFCOLL_WITH_MPI=ON)");
}

bool mpi_is_cuda_aware() { return false; }

Status create_mpi_transport(const void*, int, std::unique_ptr<Transport>*) {
  return mpi_transport_check();
}

}  // namespace zfc
