#include "mpi/live_resources.hpp"

#include <malloc.h>
#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

std::atomic<long long> g_heap_bytes{0};
std::atomic<long long> g_heap_blocks{0};
std::atomic<long long> g_heap_allocations{0};
std::atomic<long> g_comms{0};
std::atomic<long> g_types{0};

// The usable size, not the requested one: the figure is then the same at allocation and
// at release, whichever form of delete (sized or not) gives the block back.
void* counted(void* p) {
  if (p != nullptr) {
    g_heap_bytes.fetch_add(static_cast<long long>(malloc_usable_size(p)),
                           std::memory_order_relaxed);
    g_heap_blocks.fetch_add(1, std::memory_order_relaxed);
    g_heap_allocations.fetch_add(1, std::memory_order_relaxed);
  }
  return p;
}

void release(void* p) noexcept {
  if (p == nullptr) return;
  g_heap_bytes.fetch_sub(static_cast<long long>(malloc_usable_size(p)),
                         std::memory_order_relaxed);
  g_heap_blocks.fetch_sub(1, std::memory_order_relaxed);
  std::free(p);
}

void* allocate(std::size_t n, std::size_t align) noexcept {
  void* p = nullptr;
  if (n == 0) n = 1;
  if (align <= alignof(std::max_align_t)) {
    p = std::malloc(n);
  } else if (posix_memalign(&p, align, n) != 0) {
    p = nullptr;
  }
  return counted(p);
}

void* allocate_or_throw(std::size_t n, std::size_t align) {
  for (;;) {
    if (void* p = allocate(n, align)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void count_comm(int rc, const MPI_Comm* made) {
  if (rc == MPI_SUCCESS && *made != MPI_COMM_NULL) g_comms.fetch_add(1);
}

}  // namespace

void* operator new(std::size_t n) { return allocate_or_throw(n, 0); }
void* operator new[](std::size_t n) { return allocate_or_throw(n, 0); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  release(p);
}

// MPI's profiling interface: these definitions take the place of the library's, which
// remain reachable as PMPI_*.
extern "C" {

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_dup(comm, newcomm);
  count_comm(rc, newcomm);
  return rc;
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  const int rc = PMPI_Comm_idup(comm, newcomm, request);
  count_comm(rc, newcomm);
  return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_split(comm, color, key, newcomm);
  count_comm(rc, newcomm);
  return rc;
}

int MPI_Comm_free(MPI_Comm* comm) {
  const int rc = PMPI_Comm_free(comm);
  if (rc == MPI_SUCCESS) g_comms.fetch_sub(1);
  return rc;
}

int MPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype* made) {
  const int rc = PMPI_Type_contiguous(count, old, made);
  if (rc == MPI_SUCCESS) g_types.fetch_add(1);
  return rc;
}

int MPI_Type_create_hindexed(int count, const int lengths[], const MPI_Aint places[],
                              MPI_Datatype old, MPI_Datatype* made) {
  const int rc = PMPI_Type_create_hindexed(count, lengths, places, old, made);
  if (rc == MPI_SUCCESS) g_types.fetch_add(1);
  return rc;
}

int MPI_Type_free(MPI_Datatype* type) {
  const int rc = PMPI_Type_free(type);
  if (rc == MPI_SUCCESS) g_types.fetch_sub(1);
  return rc;
}

}  // extern "C"

namespace zfc {
namespace test {

LiveResources live_resources() {
  LiveResources r;
  r.heap_bytes = g_heap_bytes.load();
  r.heap_blocks = g_heap_blocks.load();
  r.heap_allocations = g_heap_allocations.load();
  r.mpi_comms = g_comms.load();
  r.mpi_types = g_types.load();
  return r;
}

}  // namespace test
}  // namespace zfc
