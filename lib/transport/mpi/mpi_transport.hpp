// The MPI transport: host memory, built on MPI's own collectives over a duplicated
// communicator with MPI_ERRORS_RETURN, so MPI failures come back as zfcTransportError.
// With a timeout, each collective is MPI's non-blocking form waited on with a deadline, so
// a stalled or missing peer becomes zfcTimeout.
// This header does not include mpi.h; the communicator travels as the address of an MPI_Comm.
#pragma once

#include <memory>

#include "transport/transport.hpp"

namespace zfc {

// Ok when this library can run the MPI transport (it was built with it and its plugin loads
// here); else zfcUnsupported saying what is missing.
Status mpi_transport_check();
inline bool mpi_transport_available() { return mpi_transport_check().ok(); }

// Whether MPI takes device buffers directly (a CUDA-aware build with that support on).
bool mpi_is_cuda_aware();

// Collective over *(MPI_Comm*)mpi_comm: duplicates it into a new transport whose waits last
// at most timeout_ms (0: as long as MPI's). Fails with zfcInvalidUsage if MPI is not
// initialised, zfcUnsupported in a build without MPI.
Status create_mpi_transport(const void* mpi_comm, int timeout_ms,
                            std::unique_ptr<Transport>* out);

// What the plugin libzipfcoll-mpi.so exports (mpi_plugin.cpp).
struct MpiPlugin {
  decltype(&create_mpi_transport) create;
};

}  // namespace zfc
