// main() for the multi-rank test programs, run by ctest under mpirun. Every rank runs every
// test; rank 0 prints the usual report and the other ranks print only their failures, each
// line tagged with the rank. The exit status is the same on every rank: failure when any
// rank failed a test.
#include <mpi.h>

#include <cstdio>

#include <gtest/gtest.h>

#include "common/all_skipped.hpp"
#include "common/rank_failure_printer.hpp"


int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  zfc::test::report_failures_per_rank(rank);
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  int skipped = zfc::test::all_tests_skipped() ? 1 : 0, all_skipped = 0;
  MPI_Allreduce(&skipped, &all_skipped, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0 && any_failed && !failed) {
    std::fprintf(stderr, "rank 0 passed, but another rank failed (see its lines above)\n");
  }
  MPI_Finalize();
  if (any_failed) return 1;
  return all_skipped ? zfc::test::kAllSkipped : 0;
}
