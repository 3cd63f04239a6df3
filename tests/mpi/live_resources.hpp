// Exact counts of what this process holds, for leak checks that neither the allocator's
// figures nor MPI's own caches can blur:
//  - bytes and blocks live through C++ operator new, which every zipfcoll allocation goes
//    through (MPI, UCX and hwloc, written in C, allocate with malloc and are not counted);
//  - MPI communicators and datatypes made and not yet freed, counted through MPI's
//    profiling interface.
// Linking live_resources.cpp replaces the program's global operator new and delete and
// wraps the MPI calls that zipfcoll uses to make and free communicators and datatypes.
#pragma once

namespace zfc {
namespace test {

struct LiveResources {
  long long heap_bytes = 0;   // usable bytes of the blocks live through operator new
  long long heap_blocks = 0;
  long long heap_allocations = 0;  // blocks ever allocated through operator new
  long mpi_comms = 0;         // made by MPI_Comm_dup, _idup or _split, less MPI_Comm_free
  long mpi_types = 0;         // made by MPI_Type_contiguous or _create_hindexed, less
                              // MPI_Type_free
};

LiveResources live_resources();

}  // namespace test
}  // namespace zfc
