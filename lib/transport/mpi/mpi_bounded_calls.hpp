// What every MPI call of the MPI transport goes through: its failure as a Status naming the
// call, its byte counts as the int counts MPI takes (in a unit type that fits them), and its
// wait bounded by the communicator's timeout.
#pragma once

#include <mpi.h>
#include <sched.h>

#include <chrono>
#include <climits>
#include <string>
#include <vector>

#include "host_device/status.hpp"

namespace zfc {

inline Status mpi_error(int rc, const char* what) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  return error(zfcTransportError, "%s failed: %.*s (MPI error %d)", what, len, text, rc);
}

#define ZFC_MPI_CHECK(call, what)                 \
  do {                                            \
    int zfc_rc_ = (call);                         \
    if (zfc_rc_ != MPI_SUCCESS) return mpi_error(zfc_rc_, what); \
  } while (0)

// MPI counts and displacements are int. Byte counts past INT_MAX are expressed in units of
// a contiguous type of 2..16 bytes that divides every size and displacement of the call.
class UnitTypes {
 public:
  UnitTypes() {
    for (int i = 0; i < kUnits; ++i) {
      types_[i] = MPI_BYTE;
      if (i > 0 && MPI_Type_contiguous(1 << i, MPI_BYTE, &types_[i]) == MPI_SUCCESS) {
        MPI_Type_commit(&types_[i]);
      }
    }
  }
  void release() {
    for (int i = 1; i < kUnits; ++i) {
      if (types_[i] != MPI_BYTE) MPI_Type_free(&types_[i]);
      types_[i] = MPI_BYTE;
    }
  }
  // Picks the largest unit dividing all of `values`; fills `out` with values/unit.
  Status convert(const size_t* const* lists, int nlists, int n, std::vector<int>* out,
                 MPI_Datatype* type) const {
    size_t all = 0;
    for (int l = 0; l < nlists; ++l)
      for (int i = 0; i < n; ++i) all |= lists[l][i];
    int shift = 0;
    while (shift + 1 < kUnits && (all & ((size_t{2} << shift) - 1)) == 0) ++shift;
    out->resize(static_cast<size_t>(nlists) * n);
    for (int l = 0; l < nlists; ++l) {
      for (int i = 0; i < n; ++i) {
        size_t v = lists[l][i] >> shift;
        if (v > static_cast<size_t>(INT_MAX)) {
          return error(zfcUnsupported,
                       "a transfer of %zu bytes is too large for one MPI call", lists[l][i]);
        }
        (*out)[static_cast<size_t>(l) * n + i] = static_cast<int>(v);
      }
    }
    *type = types_[shift];
    return Status::Ok();
  }

 private:
  static constexpr int kUnits = 5;  // 1, 2, 4, 8, 16 bytes
  MPI_Datatype types_[kUnits];
};

// Waits on one non-blocking MPI operation for at most timeout_ms. MPI cannot withdraw a
// collective, so one that times out stays in flight: `unfinished` is set and the caller's
// transport is from then on unusable (Transport refuses it) and its buffers are kept.
class BoundedWait {
 public:
  BoundedWait(int rank, int timeout_ms) : rank_(rank), timeout_ms_(timeout_ms) {}
  bool bounded() const { return timeout_ms_ > 0; }
  bool unfinished() const { return unfinished_; }

  Status wait(MPI_Request* request, const char* what) {
    if (!bounded()) {
      ZFC_MPI_CHECK(MPI_Wait(request, MPI_STATUS_IGNORE), what);
      return Status::Ok();
    }
    return poll(what, -1, [&](int* done) {
      return MPI_Test(request, done, MPI_STATUS_IGNORE);
    });
  }

  // Matches the next message from `from` with `tag`, learning its length, within the same
  // deadline. A send of this rank's may be in flight meanwhile: a timeout leaves it so.
  Status probe(int from, int tag, MPI_Comm comm, MPI_Message* msg, MPI_Status* st,
               const char* what) {
    if (!bounded()) {
      ZFC_MPI_CHECK(MPI_Mprobe(from, tag, comm, msg, st), what);
      return Status::Ok();
    }
    return poll(what, from, [&](int* found) {
      return MPI_Improbe(from, tag, comm, found, msg, st);
    });
  }

 private:
  // Calls test(&done) until done, or the deadline passes (zfcTimeout naming `what` and, when
  // not -1, the peer waited for; the operation stays in flight).
  template <class Test>
  Status poll(const char* what, int from, Test&& test) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
    unsigned idle = 0;
    for (;;) {
      int done = 0;
      ZFC_MPI_CHECK(test(&done), what);
      if (done) return Status::Ok();
      if (Clock::now() > deadline) {
        unfinished_ = true;
        const std::string peer = from < 0 ? "" : " from rank " + std::to_string(from);
        return error(zfcTimeout, "rank %d: %s%s did not finish within timeout_ms %d: a peer "
                     "is stalled, gone, or in a different collective", rank_, what,
                     peer.c_str(), timeout_ms_);
      }
      // Ranks often outnumber cores: after a while with nothing arriving, give the core to
      // the peers that have work to do.
      if (++idle > 64) sched_yield();
    }
  }

  int rank_;
  int timeout_ms_;
  bool unfinished_ = false;
};

}  // namespace zfc
