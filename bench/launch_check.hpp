// The bundled MPI programs (zfc_demo, zfc_perf) run under mpirun. Started by another
// launcher, such as torchrun, each process would see an MPI world of one rank and run alone;
// instead they refuse, naming what they saw.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>

// The world size another launcher announced (ZIPFCOLL_WORLD_SIZE, else WORLD_SIZE), or 0.
inline int announced_world_size() {
  for (const char* name : {"ZIPFCOLL_WORLD_SIZE", "WORLD_SIZE"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return std::atoi(v);
  }
  return 0;
}

// After MPI_Init: false (with a message on stderr) when a launcher announced several ranks
// but MPI sees this process alone.
inline bool joined_the_launch(const char* program) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int announced = announced_world_size();
  if (ranks != 1 || announced <= 1) return true;
  const char* rank = std::getenv("RANK");
  std::fprintf(stderr,
               "%s: started as one of %d ranks (WORLD_SIZE=%d, RANK=%s) by a launcher other "
               "than mpirun, but MPI sees this process alone: %s runs over MPI; start it "
               "with mpirun -np %d %s\n",
               program, announced, announced, rank != nullptr ? rank : "unset", program,
               announced, program);
  return false;
}
