// Compiled instead of nccl_transport.cpp when the library is built without CUDA or NCCL.
#include "transport/nccl/nccl_transport.hpp"

namespace zfc {

bool nccl_transport_available() { return false; }

Status create_nccl_transport(Transport& bootstrap, int, int, std::unique_ptr<Transport>*) {
  return error(zfcUnsupported,
               "rank %d: this zipfcoll was built without the NCCL transport (it needs CUDA "
               "and NCCL: configure with ZIPFCOLL_WITH_CUDA=ON and NCCL installed)",
               bootstrap.rank());
}

}  // namespace zfc
