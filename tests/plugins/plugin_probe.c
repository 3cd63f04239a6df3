/*
 * Links the installed-style shared library, as a user's program does, to check how it loads
 * its transports from plugins.
 *   plugin_probe --free-port          print a free TCP port (for launch_ranks.sh)
 *   plugin_probe query                one line per transport: its memory kinds, or why not
 *   plugin_probe init ucx|nccl        one rank of a zfcCommInitFromEnv launch; prints
 *                                     "rank R: <result> <last error>" and, on success, the sum
 *                                     of an allreduce of rank + 1 (over NCCL, rank R on
 *                                     device R). With PROBE_NO_PLUGINS_RANK
 *                                     = R, rank R alone looks for its plugins in an empty
 *                                     place.
 * Exits 0 whenever the library answered; the calling script judges the answers.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <zipfcoll/zipfcoll.h>

static int free_port(void) {
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, (struct sockaddr*)&a, sizeof a) != 0 ||
      getsockname(fd, (struct sockaddr*)&a, &len) != 0) {
    return 1;
  }
  printf("%d\n", ntohs(a.sin_port));
  close(fd);
  return 0;
}

static int query(void) {
  static const struct {
    const char* name;
    int value;
  } kTransports[] = {{"mpi", zfcTransportMpi}, {"nccl", zfcTransportNccl},
                     {"ucx", zfcTransportUcx}};
  int kinds = 0;
  for (size_t i = 0; i < sizeof kTransports / sizeof kTransports[0]; ++i) {
    const zfcResult_t r = zfcQueryTransport(kTransports[i].value, &kinds);
    if (r == zfcSuccess) {
      printf("%s: host %d device %d\n", kTransports[i].name, (kinds & zfcMemoryHost) != 0,
             (kinds & zfcMemoryDevice) != 0);
    } else {
      printf("%s: %s: %s\n", kTransports[i].name, zfcGetErrorString(r), zfcGetLastError(NULL));
    }
  }
  if (zfcQueryTransport(zfcTransportAuto, &kinds) != zfcInvalidArgument) {
    printf("zfcTransportAuto was not refused\n");
  }
  return 0;
}

static int init(const char* transport) {
  const char* rank = getenv("RANK");
  const char* lone = getenv("PROBE_NO_PLUGINS_RANK");
  zfcConfig_t config = ZFC_CONFIG_INITIALIZER;
  zfcComm_t comm = NULL;
  zfcResult_t r;
  float mine, sum = 0.0f;
  if (rank == NULL) return 2;
  if (lone != NULL && strcmp(lone, rank) == 0) {
    setenv("ZIPFCOLL_PLUGIN_PATH", "/nonexistent/zipfcoll-plugins", 1);
  }
  if (strcmp(transport, "nccl") == 0) {
    config.transport = zfcTransportNccl;
    config.device = atoi(rank); /* a device of its own for each rank */
  } else {
    config.transport = zfcTransportUcx;
  }
  config.timeout_ms = 30000;
  r = zfcCommInitFromEnv(&comm, &config);
  printf("rank %s: %s: %s\n", rank, zfcGetErrorString(r), r == zfcSuccess ? "" :
         zfcGetLastError(NULL));
  if (r != zfcSuccess) return 0;
  mine = (float)(atoi(rank) + 1);
  r = zfcAllReduce(comm, &mine, &sum, 1, zfcFloat32, NULL, NULL, NULL);
  printf("rank %s: allreduce %s, sum %g\n", rank, zfcGetErrorString(r), (double)sum);
  printf("rank %s: topology %s\n", rank, zfcCommGetTopology(comm));
  zfcCommDestroy(comm);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--free-port") == 0) return free_port();
  if (argc == 2 && strcmp(argv[1], "query") == 0) return query();
  if (argc == 3 && strcmp(argv[1], "init") == 0) return init(argv[2]);
  fprintf(stderr, "usage: plugin_probe --free-port | query | init ucx|nccl\n");
  return 2;
}
