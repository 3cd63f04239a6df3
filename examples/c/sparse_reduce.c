/* One fused sparse reduce from plain C: each rank has a few token indices and a gradient
 * row per token; the library returns the step's distinct indices and their summed rows.
 *
 *   mpirun -np 4 ./zfc_example_c
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include <zipfcoll/zipfcoll.h>

#define CHECK(call)                                                              \
  do {                                                                           \
    zfcResult_t r_ = (call);                                                     \
    if (r_ != zfcSuccess) {                                                      \
      fprintf(stderr, "%s failed: %s: %s\n", #call, zfcGetErrorString(r_),       \
              zfcGetLastError(comm));                                            \
      MPI_Abort(MPI_COMM_WORLD, 1);                                              \
    }                                                                            \
  } while (0)

enum { kTokens = 64, kDim = 8, kVocab = 1000 };

int main(int argc, char** argv) {
  zfcComm_t comm = NULL;
  zfcSparsePlan_t plan = NULL;
  zfcSparsePlanConfig_t plan_config = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  zfcSparseResult_t result = ZFC_SPARSE_RESULT_INITIALIZER;
  zfcStats_t stats = ZFC_STATS_INITIALIZER;
  MPI_Comm world;
  int32_t indices[kTokens];
  float rows[kTokens * kDim];
  int rank = 0, i;

  MPI_Init(&argc, &argv);
  world = MPI_COMM_WORLD;
  CHECK(zfcCommInitMpi(&comm, &world, NULL)); /* the library duplicates the communicator */
  CHECK(zfcCommRank(comm, &rank));

  /* Frequent words have small ids: most tokens fall on a few rows, as in real text. */
  srand(1234u + (unsigned)rank);
  for (i = 0; i < kTokens; ++i) indices[i] = (rand() % 20) * (rand() % 20) % kVocab;
  for (i = 0; i < kTokens * kDim; ++i) rows[i] = (float)(rand() % 100) / 100.0f;

  plan_config.dim = kDim;
  plan_config.vocab_size = kVocab;
  plan_config.row_type = zfcFloat32;
  plan_config.index_type = zfcInt32;
  plan_config.algorithm = zfcAlgoUniqueAllReduce;
  CHECK(zfcSparsePlanCreate(comm, &plan_config, &plan));
  CHECK(zfcSparseReduce(plan, indices, kTokens, rows, &result, NULL));
  CHECK(zfcCommGetStats(comm, &stats));

  printf("rank %d: U_g = %zu distinct of %d tokens per rank; first index %d, row[0] = %.2f; "
         "sent %llu bytes, received %llu\n",
         rank, result.num_unique, kTokens,
         result.num_unique ? ((const int32_t*)result.indices)[0] : -1,
         result.num_unique ? result.rows[0] : 0.0f,
         (unsigned long long)stats.last.bytes_sent, (unsigned long long)stats.last.bytes_received);

  CHECK(zfcSparsePlanDestroy(plan));
  CHECK(zfcCommDestroy(comm));
  MPI_Finalize();
  return 0;
}
