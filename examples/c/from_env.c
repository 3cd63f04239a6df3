/* A program with no MPI in it, started by any launcher: torchrun, srun, or mpirun. Each
 * process calls zfcCommInitFromEnv, which reads its rank, the number of ranks and where they
 * meet from the launcher's variables (README, "Without MPI"), and the ranks form one world.
 *
 *   srun -N 2 -n 8 ./zfc_example_from_env
 *   mpirun -np 4 ./zfc_example_from_env
 *   torchrun --standalone --nproc-per-node=4 --no-python ./zfc_example_from_env
 */
#include <stdio.h>

#include <zipfcoll/zipfcoll.h>

int main(void) {
  zfcComm_t comm = NULL;
  zfcResult_t r = zfcCommInitFromEnv(&comm, NULL);
  int rank = 0, count = 0, local_rank = 0, local_count = 0, overflowed = 0;
  float mine, sum = 0.0f;
  if (r != zfcSuccess) {
    fprintf(stderr, "zfcCommInitFromEnv failed: %s: %s\n", zfcGetErrorString(r),
            zfcGetLastError(NULL));
    return 1;
  }
  zfcCommRank(comm, &rank);
  zfcCommCount(comm, &count);
  zfcCommLocalRank(comm, &local_rank, &local_count);
  /* Every rank adds rank + 1: the sum is count (count + 1) / 2 on every rank. */
  mine = (float)(rank + 1);
  r = zfcAllReduce(comm, &mine, &sum, 1, zfcFloat32, NULL, &overflowed, NULL);
  if (r != zfcSuccess) {
    fprintf(stderr, "rank %d: zfcAllReduce failed: %s\n", rank, zfcGetLastError(comm));
    zfcCommDestroy(comm);
    return 1;
  }
  printf("rank %d of %d (local %d of %d): sum of rank + 1 = %g%s\n", rank, count, local_rank,
         local_count, sum, sum == (float)count * (count + 1) / 2 ? "" : " WRONG");
  zfcCommDestroy(comm);
  return sum == (float)count * (count + 1) / 2 ? 0 : 1;
}
