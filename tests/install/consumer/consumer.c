/* A program outside the project: uses the installed header and library, with no MPI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zipfcoll/zipfcoll.h>

int main(void) {
  int version = 0;
  zfcConfig_t config = ZFC_CONFIG_INITIALIZER;
  zfcStats_t stats = ZFC_STATS_INITIALIZER;
  float rows[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  int32_t positions[2] = {0, 0};
  float dense[2];
  if (zfcGetVersion(&version) != zfcSuccess || version != ZFC_VERSION_CODE) {
    fprintf(stderr, "version mismatch: library %d, header %d\n", version, ZFC_VERSION_CODE);
    return 1;
  }
  if (zfcScatterToDense(rows, zfcFloat32, positions, 2, 2, dense, 1, NULL) != zfcSuccess ||
      dense[0] != 4.0f || dense[1] != 6.0f) {
    fprintf(stderr, "scatter-to-dense failed: %s\n", zfcGetLastError(NULL));
    return 1;
  }
  /* Each transport whose plugin was installed (named by the test) loads from the prefix. */
  {
    static const struct {
      const char* name;
      int value;
    } kTransports[] = {{"mpi", zfcTransportMpi}, {"nccl", zfcTransportNccl},
                       {"ucx", zfcTransportUcx}};
    const char* expected = getenv("ZIPFCOLL_EXPECT_TRANSPORTS");
    size_t i;
    for (i = 0; expected != NULL && i < sizeof kTransports / sizeof kTransports[0]; ++i) {
      int kinds = 0;
      if (strstr(expected, kTransports[i].name) == NULL) continue;
      if (zfcQueryTransport(kTransports[i].value, &kinds) != zfcSuccess ||
          (kinds & zfcMemoryHost) == 0) {
        fprintf(stderr, "transport %s: %s\n", kTransports[i].name, zfcGetLastError(NULL));
        return 1;
      }
      printf("transport %s loads from the installed plugin\n", kTransports[i].name);
    }
  }
  (void)config;
  (void)stats;
  printf("zipfcoll %s (%d) linked: %s\n", ZFC_VERSION_STRING, version,
         zfcGetAlgorithmName(zfcAlgoUniqueAllReduce));
  return strcmp(zfcGetErrorString(zfcSuccess), "no error") != 0;
}
