// Compiled instead of nccl_transport.cpp when the library is built without CUDA or NCCL.
#include "transport/nccl/nccl_transport.hpp"

namespace zfc {

Status nccl_transport_check() {
  return error(zfcUnsupported,
               "this zipfcoll was built without the NCCL transport (it needs CUDA and NCCL: "
               "configure with ZIPFCOLL_WITH_CUDA=ON and NCCL installed)");
}

Status create_nccl_transport(Transport&, int, int, std::unique_ptr<Transport>*) {
  return nccl_transport_check();
}

}  // namespace zfc
