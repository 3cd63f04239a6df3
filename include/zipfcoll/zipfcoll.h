/*
 * zipfcoll: sparse-embedding collectives for data-parallel language-model training.
 *
 * The embedding gradient of a step is K rows of width D per rank, one per token. Instead of
 * gathering all G*K*D values on every rank, zipfcoll exchanges the token indices, builds the
 * step's global set of distinct indices (U_g of them, far fewer than G*K by Zipf's law),
 * and reduces only U_g rows: Theta(G*K + U_g*D) memory and traffic instead of Theta(G*K*D).
 *
 * Conventions used throughout this header
 *  - Every function that can fail returns a zfcResult_t; on failure the detail (naming the
 *    bad value and the rank that had it) is available from zfcGetLastError(). The few that
 *    cannot fail return their value (the name and string lookups, zfcCommGetTopology,
 *    zfcStepSeed).
 *  - Outputs are written only on success; on failure no caller buffer has been modified.
 *  - "Collective" functions must be called by every rank of the communicator, in the same
 *    order. Their argument checks are agreed across ranks: when any rank's arguments are bad,
 *    or ranks disagree (dimension, data type, vocabulary, algorithm, compression), every rank
 *    returns the same error code and no rank hangs. The communicator remains usable after an
 *    argument error.
 *  - Results of collectives are bit-identical on all ranks and from run to run for the same
 *    inputs and rank count: partial sums are formed in fp32 in a fixed (token, then rank)
 *    order. "Token order" is blocked: an index's rows in one rank's call are taken in input
 *    order in blocks of ZFC_SUM_BLOCK_ROWS, the first block added row by row, every later
 *    block summed from +0 on its own and then added in block order, so an index with at
 *    most ZFC_SUM_BLOCK_ROWS rows is summed plainly in input order (zfcScatterToDense sums
 *    alike). With wire compression the rounding depends on what an algorithm sends (token
 *    rows, each rank's summed rows, or reduced sums too), and zfcAlgoAuto chooses from a
 *    machine model measured when the communicator is made: name the algorithm, or give the
 *    model (zfcConfig_t or ZIPFCOLL_MACHINE_MODEL), where compressed results must repeat
 *    from run to run.
 *  - Memory: buffers are host memory, or, when the library is built with CUDA, device
 *    memory of the current device. All of one call's array buffers must be of one kind
 *    (scalar outputs such as *num_unique and *overflowed are always host memory; the one
 *    pointer a result may hand back into device memory is zfcSparseResult_t.overflow_flag).
 *    For device
 *    buffers `stream` is a cudaStream_t (NULL: the default stream): the local operations
 *    (zfcScatterToDense, zfcApplyRows) run CUDA kernels on it and return once their arguments
 *    are checked (one wait for the stream); the collectives run on the device where the
 *    transport takes device memory and the device kernels implement the call (docs/design.md,
 *    "Device buffers"), and otherwise copy their device inputs to pinned host memory, run on
 *    the host and copy the results back, returning when the results are in place. Either way
 *    results have the same bits as with host buffers. A stream with host buffers, or buffers
 *    that mix host and device memory, is zfcInvalidArgument; any stream in a build without
 *    CUDA is zfcUnsupported.
 *  - The caller owns all buffers it passes; buffers returned inside zfcSparseResult_t are
 *    owned by the plan and stay valid until the next zfcSparseReduce on the same plan or
 *    zfcSparsePlanDestroy.
 *  - A communicator or plan must not be used by two threads at once.
 *
 * This header is C99 and C++ compatible and includes neither mpi.h nor any CUDA header.
 */
#ifndef ZIPFCOLL_H_
#define ZIPFCOLL_H_

#include <stddef.h>
#include <stdint.h>

#include "zipfcoll/zipfcoll_version.h"

#if defined(_WIN32)
#define ZFC_API
#else
#define ZFC_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Version code X*10000 + Y*100 + Z; ZFC_VERSION_CODE is the version of this header. */
#define ZFC_VERSION(X, Y, Z) ((X) * 10000 + (Y) * 100 + (Z))
#define ZFC_VERSION_CODE ZFC_VERSION(ZFC_MAJOR, ZFC_MINOR, ZFC_PATCH)

/* Rows of one index summed as one block (see "Token order" above): a device sums a hot
 * index's blocks side by side, and the host sums in the same order, so the bits agree. */
#define ZFC_SUM_BLOCK_ROWS 1024

/* Opaque handles. */
typedef struct zfcComm* zfcComm_t;
typedef struct zfcSparsePlan* zfcSparsePlan_t;
typedef struct zfcSeedGroup* zfcSeedGroup_t;

/* ---- results ------------------------------------------------------------------------- */

typedef enum {
  zfcSuccess = 0,
  zfcInvalidArgument = 1, /* a bad pointer, size, index or value was passed */
  zfcInvalidUsage = 2,    /* a call made in the wrong state (bad config struct, dead comm) */
  zfcMismatch = 3,        /* ranks passed arguments that must agree but do not */
  zfcOutOfMemory = 4,     /* host allocation failed */
  zfcSystemError = 5,     /* an operating-system call failed */
  zfcTransportError = 6,  /* the transport (MPI, ...) reported a failure */
  zfcRemoteError = 7,     /* another rank failed in a way this rank cannot name */
  zfcTimeout = 8,         /* a peer did not answer in time */
  zfcUnsupported = 9,     /* not available in this build or for these arguments */
  zfcInternalError = 10,  /* a bug in zipfcoll: please report it */
  zfcInProgress = 11,     /* reserved for non-blocking operation */
  zfcNumResults = 12
} zfcResult_t;

/* Fixed text for a result code; never NULL. */
ZFC_API const char* zfcGetErrorString(zfcResult_t result);

/* The detail of the most recent failure on `comm` (naming the value and rank at fault),
 * or, for comm == NULL, of the most recent failure of a call made on this thread.
 * Returns "" when there was none. The string stays valid until the next call on the same
 * communicator (or, for NULL, on this thread). Errors of a plan are reported on its
 * communicator. */
ZFC_API const char* zfcGetLastError(zfcComm_t comm);

/* Local; does not wait. The first failure of `comm`'s bounded calls (zfcSparseReduceBounded),
 * and of the device zfcSparseReduce calls that left their overflow flag on the device (plan
 * config overflow_on_device), not yet reported: zfcSuccess when there is none, zfcInProgress
 * while some such call has not finished on its stream and none that finished failed. A failure reported here (its detail
 * in zfcGetLastError(comm)) or by the communicator's next call that is not bounded is
 * reported once, in the order the calls were made. A failure NCCL finds in the transfers
 * such a call queued on the caller's stream (a peer lost) is reported here too, and aborts
 * the communicator. The next call that is not bounded waits for the bounded calls first, up
 * to the config's timeout_ms; past it, that call fails with zfcTimeout on this rank and the
 * communicator is aborted (its queued transfers would hold the stream for ever). */
ZFC_API zfcResult_t zfcCommGetAsyncError(zfcComm_t comm, zfcResult_t* async_error);

/* Local; does not wait. For a caller that checks a collective call's arguments itself
 * before the library sees them (a language binding, a framework) and refuses them on this
 * rank: the other ranks are already in the call and would wait for this one. Records
 * `code` and `message` as this rank's local error; the communicator's next collective call
 * on this rank (between zfcGroupStart and zfcGroupEnd: the group's zfcGroupEnd) enters its
 * agreement with that error as this rank's verdict, in place of the call's own checks, so
 * every rank's call returns `code` at once, with "rank R: message" in zfcGetLastError (R
 * this rank), as for an argument error the library finds itself. Make that call with
 * neutral arguments (count 0, NULL buffers; a valid handle): it reads and writes nothing.
 * The error is taken by that call, which fails; the call after is checked as usual (a
 * call refused before its agreement -- a NULL handle, a call refused inside a group --
 * leaves it pending). A second zfcCommSetLocalError before that call keeps the first error
 * (the first refusal is the one every rank reports). `code` must be an error
 * (zfcInvalidArgument to zfcInProgress), else zfcInvalidArgument; `message` NULL: the
 * code's fixed text (zfcGetErrorString); messages are cut at 1024 bytes. With no collective
 * call after it, the error is never reported: zfcCommDestroy and zfcCommAbort drop it, and a
 * communicator made by zfcCommSplit does not inherit it. Other ranks' zfcSparseReduceBounded
 * calls that agree in their kernels report it in their status, as any rank's failure. Like
 * every call on a communicator, not to be made while another thread uses it. */
ZFC_API zfcResult_t zfcCommSetLocalError(zfcComm_t comm, zfcResult_t code,
                                         const char* message);

/* The version code of the library actually linked (compare with ZFC_VERSION_CODE). */
ZFC_API zfcResult_t zfcGetVersion(int* version);

/* ---- types --------------------------------------------------------------------------- */

typedef enum {
  zfcInt32 = 0,
  zfcInt64 = 1,
  zfcFloat32 = 2,
  zfcFloat16 = 3, /* IEEE 754 binary16 */
  zfcBFloat16 = 4 /* bfloat16: the top 16 bits of an fp32 */
} zfcDataType_t;

/* How floating-point data travels between ranks. Sums are always formed in fp32, in a
 * fixed order, and every rank gets the same bits (docs/precision.md gives each format's
 * error and bytes).
 *
 * The eight-bit formats send each row (zfcAllReduce: each block of
 * ZFC_ALLREDUCE_BLOCK_VALUES values) as one-byte codes and one fp32 scale computed from the
 * row's own largest magnitude, so no row overflows on range and `scale` is ignored: fp8
 * e4m3 and e5m2 (the OCP 8-bit floating-point formats, saturating at 448 and 57344; the
 * scale a power of two) and int8 (-127..127; the scale the largest magnitude / 127).
 *
 * Or'd with ZFC_COMPRESS_STOCHASTIC, any kind but none rounds stochastically instead of to
 * nearest even. Its random bits are a fixed function of the communicator's rounding_seed,
 * the call's place in the communicator's sequence of calls, the sending rank, the hop, the
 * row and the column: results stay identical on every rank and across runs.
 *
 * The eight-bit formats and stochastic rounding have host kernels only in this version: a
 * call on device buffers goes through host memory with them (zfcOpStats_t's path: staged). */
typedef enum {
  zfcCompressNone = 0,    /* fp32 on the wire */
  zfcCompressFp16 = 1,    /* fp16 on the wire: values multiplied by `scale` before the
                             down-cast and divided by it after the up-cast */
  zfcCompressBf16 = 2,    /* bf16 on the wire (scale applied the same way; 1 is typical) */
  zfcCompressFp8E4M3 = 3, /* fp8 e4m3 with a per-row power-of-two scale */
  zfcCompressFp8E5M2 = 4, /* fp8 e5m2 with a per-row power-of-two scale */
  zfcCompressInt8 = 5,    /* int8 with a per-row scale */
  /* the same, rounded stochastically */
  zfcCompressFp16Stochastic = 0x101,
  zfcCompressBf16Stochastic = 0x102,
  zfcCompressFp8E4M3Stochastic = 0x103,
  zfcCompressFp8E5M2Stochastic = 0x104,
  zfcCompressInt8Stochastic = 0x105
} zfcCompressionKind_t;

/* The flag of stochastic rounding in a zfcCompressionKind_t. */
#define ZFC_COMPRESS_STOCHASTIC 0x100

/* Name of a compression kind ("none", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8", and
 * "_sr" after the name with ZFC_COMPRESS_STOCHASTIC: "int8_sr"); NULL for a bad value. */
ZFC_API const char* zfcGetCompressionName(int kind);
/* The values of one scale of an eight-bit zfcAllReduce (the last block may be shorter). */
#define ZFC_ALLREDUCE_BLOCK_VALUES 256

typedef struct {
  zfcCompressionKind_t kind;
  float scale; /* finite and > 0; ignored for zfcCompressNone */
} zfcCompression_t;

/* How the fused sparse reduce exchanges rows (see docs/algorithms.md for the costs). */
typedef enum {
  zfcAlgoDefault = -1,        /* plans: take the communicator's configured algorithm */
  zfcAlgoAuto = 0,            /* choose per call by the cost model, same choice on all ranks */
  zfcAlgoAllGather = 1,       /* baseline: allgather all K indices and K x D rows, reduce
                                 locally: Theta(G*K*D) */
  zfcAlgoUniqueAllReduce = 2, /* allgather local unique indices, scatter into U_g x D,
                                 allreduce it: Theta(G*K + U_g*D) */
  zfcAlgoDenseVocab = 3,      /* allreduce a zero-filled V x D matrix: for tiny V */
  zfcAlgoUniqueAllGather = 4, /* allgather local unique indices and each rank's U_i locally
                                 summed rows: Theta(G*K + sum_i U_i*D) */
  zfcAlgoOwnerPartitioned = 5, /* allgather local unique indices; send each locally summed
                                  row to the rank owning its index (owners balanced by load,
                                  a holder of the row where the balance allows), which
                                  reduces it; then allgather the reduced rows:
                                  Theta(G*K + (U_i + U_g)*D) */
  zfcAlgoHierarchical = 6,     /* owner_partitioned inside each node, then across nodes
                                  between ranks of equal local rank, then shared inside the
                                  node: each row crosses between nodes once per node */
  zfcAlgoKeyRouted = 7,        /* no index allgather: each rank sends (index, row) pairs of
                                  its distinct indices to the owner a fixed function of the
                                  index names; owners sum them and share the sums in index
                                  order: Theta(U_i*(D + 1) + U_g*(D + 1)) per rank, nothing
                                  of order G*U_i; for large G */
  zfcNumAlgorithms = 8
} zfcAlgorithm_t;

/* Name of an algorithm ("auto", "allgather", ...); "unknown" for a bad value. */
ZFC_API const char* zfcGetAlgorithmName(int algorithm);

typedef enum {
  zfcTransportAuto = 0, /* the transport the init function implies */
  zfcTransportMpi = 1,
  zfcTransportNccl = 2,
  zfcTransportUcx = 3
} zfcTransport_t;

/* The kinds of memory a communicator's buffers may be in (bit flags). */
typedef enum {
  zfcMemoryHost = 1,
  zfcMemoryDevice = 2 /* CUDA device memory */
} zfcMemoryKind_t;

/*
 * Whether this installation can run `transport` (zfcTransportMpi, zfcTransportNccl or
 * zfcTransportUcx). The library loads each transport on first use from its plugin,
 * libzipfcoll-mpi.so, -nccl.so or -ucx.so, found beside the library (or in the folders of
 * ZIPFCOLL_PLUGIN_PATH, colon-separated, when that is set); the plugin needs the transport's
 * own library (libmpi, libnccl, libucp). On success *memory_kinds gets the zfcMemoryKind_t
 * flags of the buffers its communicators take (device buffers go through host memory where
 * the transport does not take them). zfcUnsupported when the library was built without it or
 * its plugin or system library does not load here; zfcGetLastError(NULL) names which.
 * zfcTransportAuto and other values are zfcInvalidArgument. Local; this says what the
 * installation has, not whether this machine has a device.
 */
ZFC_API zfcResult_t zfcQueryTransport(int transport, int* memory_kinds);

/* ---- configuration ------------------------------------------------------------------- */

#define ZFC_CONFIG_MAGIC 0x7a66634du /* guards against an uninitialised struct */

/* One link class of the alpha-beta cost model: a collective step costs latency_us, and
 * every byte a rank sends or receives 1/(bandwidth_gbs * 1e9) s. Both 0: not given. */
typedef struct {
  double latency_us;
  double bandwidth_gbs;
} zfcLinkModel_t;

/* Always start from ZFC_CONFIG_INITIALIZER and then set fields. The library accepts the
 * struct of every layout released since 0.1.0 (identified by `size`; fields a layout lacks
 * take their defaults), so a program compiled against an older header keeps working; a
 * size, magic or version it does not know is zfcInvalidUsage.
 *
 * The machine model of zfcAlgoAuto (intra_node, inter_node, local_gbs) is measured when the
 * communicator is made, unless given: a figure given here wins; one left 0 is taken from
 * the environment variable ZIPFCOLL_MACHINE_MODEL if it names it, and measured otherwise.
 * The variable's form is the one printed at ZIPFCOLL_DEBUG=INFO when a communicator is
 * made, for instance
 *   ZIPFCOLL_MACHINE_MODEL=intra=2.5:8.1,inter=2.5:8.1,local=5.2
 * (latency_us:bandwidth_gbs for each link class, 0:0 for one not given, GB/s for local
 * memory; any subset).
 * Measured figures are rounded to 4 significant digits, so giving back the printed model
 * reproduces every choice of zfcAlgoAuto exactly. With all figures given, zfcAlgoAuto makes
 * the same choice on every run and every rank. Given figures must be equal on every rank
 * (zfcMismatch otherwise). */
typedef struct {
  size_t size;           /* sizeof(zfcConfig_t) */
  unsigned int magic;    /* ZFC_CONFIG_MAGIC */
  unsigned int version;  /* ZFC_VERSION_CODE of the header the caller compiled against */
  int transport;         /* zfcTransport_t */
  int device;            /* zfcTransportNccl: this rank's CUDA device (-1: the current
                            one). Other transports: -1; each call's buffers are found to
                            be host or device memory */
  int timeout_ms;        /* bound on every wait, in ms: a stalled, dead or out-of-step
                            peer then becomes zfcTimeout or zfcRemoteError, and the
                            communicator can only be aborted (see zfcCommAbort).
                            ZFC_CONFIG_INITIALIZER (and a NULL config) set
                            ZFC_DEFAULT_TIMEOUT_MS. 0, set explicitly: MPI and UCX wait as
                            long as their peers live (a failed peer still ends a UCX wait)
                            and the bootstrap 60 s. Over MPI a bound makes every
                            collective MPI's non-blocking form, polled until done (the
                            blocking form when 0). A program built against a header whose
                            initializer still set 0 (0.13.4 and earlier) keeps that
                            meaning: its 0 is not told apart from a deliberate one, so a
                            long wait that worked there is not made to fail; rebuilding
                            against this header gives the default */
  int algorithm;         /* zfcAlgorithm_t used by plans created with zfcAlgoDefault */
  int compression;       /* zfcCompressionKind_t used by plans that do not set their own */
  float compress_scale;  /* the scale that goes with `compression` */
  int bounds_check;      /* 1: check every index against the vocabulary (recommended);
                            0: trust them (an index outside [0, V) is then undefined
                            behaviour, on every rank) */
  const char* name;      /* for log lines; copied; may be NULL */
  /* ---- end of the 0.1.0 layout ---- */
  int ranks_per_node;    /* 0: ranks on one host form a node; n > 0: ranks [0, n), [n, 2n),
                            ... form the nodes (to test or model a cluster on one host).
                            Nodes set the hierarchical exchange and the order of sums */
  zfcLinkModel_t intra_node; /* the links the cost model of zfcAlgoAuto assumes inside */
  zfcLinkModel_t inter_node; /* and between nodes; zeros: not given (see above) */
  /* ---- end of the 0.2.0 layout ---- */
  double local_gbs;      /* bytes one rank reads plus writes per second in local passes,
                            / 1e9, as the cost model assumes; 0: not given */
  /* ---- end of the 0.3.0 layout ---- */
  unsigned long long rounding_seed; /* the seed of stochastic rounding (see
                                       zfcCompressionKind_t); equal on every rank */
} zfcConfig_t;

/* The timeout_ms of ZFC_CONFIG_INITIALIZER and of a NULL config: 10 minutes (as PyTorch's
 * process groups), long enough for any step and a slow start, short enough that a rank
 * that never joins a collective ends the others' calls with an error instead of a hang. */
#define ZFC_DEFAULT_TIMEOUT_MS 600000

#define ZFC_CONFIG_INITIALIZER                                                      \
  {                                                                                 \
    sizeof(zfcConfig_t), ZFC_CONFIG_MAGIC, ZFC_VERSION_CODE, zfcTransportAuto, -1, \
        ZFC_DEFAULT_TIMEOUT_MS, zfcAlgoAuto, zfcCompressNone, 1.0f, 1, NULL, 0, {0.0, 0.0}, {0.0, 0.0},  \
        0.0, 0ull                                                                   \
  }

/* ---- communicators ------------------------------------------------------------------- */

/* Collective over `mpi_comm`. Creates a communicator over the ranks of the MPI communicator
 * whose address is `mpi_comm` (an `MPI_Comm*`, passed as void* to keep mpi.h out of this
 * header). MPI must already be initialised; the library duplicates the communicator, so the
 * caller's own traffic never mixes with zipfcoll's. `config` may be NULL for defaults.
 * With config->transport zfcTransportNccl, MPI only starts an NCCL communicator (one GPU
 * per rank; a rank without one fails every rank with zfcUnsupported naming it), and device
 * buffers of zfcAllReduce then stay on the device.
 * *comm is set only on success. Returns zfcUnsupported in a build without MPI. */
ZFC_API zfcResult_t zfcCommInitMpi(zfcComm_t* comm, const void* mpi_comm,
                                   const zfcConfig_t* config);

/* An opaque rendezvous address for zfcCommInitRank, made by one process and passed to the
 * others by the caller (like ncclUniqueId). */
#define ZFC_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[ZFC_UNIQUE_ID_BYTES];
} zfcUniqueId;

/* Local; call it on the process that will be rank 0. Opens a TCP port for the other ranks
 * to meet at (on all interfaces; the id names this host, or ZIPFCOLL_SOCKET_ADDR if set). */
ZFC_API zfcResult_t zfcGetUniqueId(zfcUniqueId* id);

/* Collective over `nranks` processes that pass the same id, each with its own `rank` in
 * [0, nranks). Builds a communicator without MPI, over UCX (config->transport
 * zfcTransportAuto or zfcTransportUcx), or over NCCL started through UCX
 * (zfcTransportNccl). Every wait is bounded (config->timeout_ms, else
 * 60 s): a rank that never arrives or a wrong rank number is an error, not a hang. */
ZFC_API zfcResult_t zfcCommInitRank(zfcComm_t* comm, int nranks, zfcUniqueId id, int rank,
                                    const zfcConfig_t* config);

/* zfcCommInitRank with the rank, the number of ranks and the meeting point read from the
 * environment, as torchrun sets it: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (rank 0
 * listens on MASTER_PORT), LOCAL_RANK optional; ZIPFCOLL_-prefixed names win. Started by
 * srun or mpirun instead, Slurm's (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID), Open MPI's
 * (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK) or PMIx's (PMIX_RANK) variables stand in, and
 * without MASTER_ADDR / MASTER_PORT the ranks meet on srun's first node of the step (mpirun's
 * loopback when every rank is on one host) at a port derived from the job's id (README,
 * "Without MPI"). A missing or malformed variable is zfcInvalidUsage naming it. */
ZFC_API zfcResult_t zfcCommInitFromEnv(zfcComm_t* comm, const zfcConfig_t* config);

#define ZFC_SPLIT_NOCOLOR (-1)

/* Collective over `comm`. Ranks passing the same `color` (>= 0) form a new communicator,
 * ordered by `key` then by rank in `comm`; ranks passing ZFC_SPLIT_NOCOLOR get NULL. The
 * new communicator inherits the configuration. A negative color other than
 * ZFC_SPLIT_NOCOLOR on any rank fails on every rank with zfcInvalidArgument. */
ZFC_API zfcResult_t zfcCommSplit(zfcComm_t comm, int color, int key, zfcComm_t* newcomm);

/* Collective. Frees the communicator and its duplicated MPI communicator. NULL is a no-op.
 * Fails with zfcInvalidUsage (freeing nothing) while plans created on it are alive. */
ZFC_API zfcResult_t zfcCommDestroy(zfcComm_t comm);

/* Local (not collective). Frees the communicator without communicating, for use after a
 * failure when peers may be gone; a new communicator may then be made on the same
 * processes. Plans still alive on it may then only be passed to zfcSparsePlanDestroy,
 * which frees what remains. An MPI operation that timed out cannot be withdrawn: its
 * communicator and buffers, its plans' workspaces included (zfcSparsePlanDestroy and
 * zfcCommDestroy keep them too), are then kept until the process ends, and buffers the caller
 * passed to the call that timed out must not be freed while it runs (ending the process,
 * e.g. with MPI_Abort, is the usual recovery on MPI). It may also be called after
 * MPI_Finalize, which has then freed the MPI resources already. NULL is a no-op. */
ZFC_API zfcResult_t zfcCommAbort(zfcComm_t comm);

ZFC_API zfcResult_t zfcCommRank(zfcComm_t comm, int* rank);
ZFC_API zfcResult_t zfcCommCount(zfcComm_t comm, int* count);

/* Local. This rank's place among the communicator's ranks on its machine (same host), in
 * rank order: *local_rank in [0, *local_count). Either pointer may be NULL. Found when the
 * communicator is created, with no extra exchange. */
ZFC_API zfcResult_t zfcCommLocalRank(zfcComm_t comm, int* local_rank, int* local_count);

/* Local. One line on where this rank runs: the machine's cores, hardware threads and NUMA
 * nodes (read with hwloc when the library is built with it), this rank's share of the cores
 * (an even split among the ranks on the machine) and its NUMA nodes, whether the process is
 * bound to that share (it is when ZIPFCOLL_BIND=1 was set when the communicator was made),
 * and, in a build with CUDA and hwloc, the cores near the current GPU. Owned by the
 * communicator; "" for NULL. Also logged at ZIPFCOLL_DEBUG=INFO. */
ZFC_API const char* zfcCommGetTopology(zfcComm_t comm);

/* ---- accounting ---------------------------------------------------------------------- */

typedef enum {
  zfcPhaseLocal = 0,         /* argument checks, local unique, casts before sending */
  zfcPhaseHeader = 1,        /* the exchange of per-rank headers (agreement, counts) */
  zfcPhaseIndexExchange = 2, /* moving indices between ranks */
  zfcPhaseMerge = 3,         /* global unique set and positions */
  zfcPhaseScatter = 4,       /* summing rows into the dense matrix */
  zfcPhaseRowExchange = 5,   /* moving and reducing rows between ranks */
  zfcPhaseTotal = 6,         /* the whole call */
  zfcNumPhases = 7
} zfcPhase_t;

/* Name of a phase ("local", "header", ...); "unknown" for a bad value. */
ZFC_API const char* zfcGetPhaseName(int phase);

/* Where a phase's data lived and its work ran (zfcOpStats_t.path). */
typedef enum {
  zfcPathNone = 0,   /* not marked: an allreduce marks its local, header and row-exchange
                        phases, a sparse reduce and the sharded-table calls all of them;
                        other calls none */
  zfcPathHost = 1,   /* host buffers, host kernels */
  zfcPathStaged = 2, /* device buffers copied through host memory, host kernels */
  zfcPathDevice = 3  /* device buffers kept on the device: device kernels on the caller's
                        stream, device memory handed to the transport */
} zfcDataPath_t;

typedef struct {
  uint64_t calls;                /* collective operations counted */
  uint64_t tokens;               /* indices this rank passed in (K) */
  uint64_t local_unique;         /* distinct indices among them (U_i) */
  uint64_t global_unique;        /* distinct indices over all ranks (U_g) */
  uint64_t bytes_sent;           /* bytes this rank handed to the transport for peers */
  uint64_t bytes_received;       /* bytes this rank received from peers */
  uint64_t peak_workspace_bytes; /* library-owned scratch a call needed at most */
  uint64_t overflows;            /* calls whose compressed result was not finite (not
                                    counting those that left the flag on the device) */
  uint64_t internode_bytes_sent; /* the part of bytes_sent that went to other nodes */
  uint64_t internode_bytes_received; /* the part of bytes_received from other nodes */
  int32_t algorithm;             /* zfcAlgorithm_t the last sparse reduce ran (-1: none) */
  int32_t rounds;                /* dependent rounds: transport collectives run one after
                                    another (in `total`, summed over calls) */
  double seconds[zfcNumPhases];  /* wall time per zfcPhase_t */
  /* ---- end of the 0.2.0 layout ---- */
  uint64_t bytes_received_max;   /* the most bytes_received of any rank of the communicator
                                    in the call (the busiest rank; `total`: summed over
                                    calls) */
  uint64_t bytes_received_sum;   /* bytes_received summed over the communicator's ranks
                                    (divide by the rank count for the mean) */
  /* ---- end of the 0.4.0 to 0.8.0 layout ---- */
  int32_t path[zfcNumPhases];    /* zfcDataPath_t of each zfcPhase_t in the last sparse
                                    reduce or allreduce (also in `total`); zfcPhaseTotal:
                                    the call's */
  uint32_t host_syncs;           /* times the call waited for work it queued on the
                                    caller's stream: to read sizes or flags the device
                                    wrote, or before a transport reads device memory (a
                                    transport's waits for its own collectives are not
                                    counted; `total`: summed) */
} zfcOpStats_t;

/* `size` must be set by the caller (ZFC_STATS_INITIALIZER does it). In `total`, counts,
 * bytes and seconds are sums over calls and peak_workspace_bytes is the maximum. The
 * library also fills the structs of the 0.1.0 layout (without the internode fields), of
 * the 0.2.0 and 0.3.0 layout (without the busiest rank's and the summed bytes) and of the
 * 0.4.0 to 0.8.0 layout (without the paths and host_syncs). */
typedef struct {
  size_t size;
  zfcOpStats_t last;
  zfcOpStats_t total;
} zfcStats_t;

#define ZFC_OP_STATS_ZERO \
  {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0, {0, 0, 0, 0, 0, 0, 0}, 0, 0, {0, 0, 0, 0, 0, 0, 0}, 0}
#define ZFC_STATS_INITIALIZER {sizeof(zfcStats_t), ZFC_OP_STATS_ZERO, ZFC_OP_STATS_ZERO}

/* Local. Copies the communicator's statistics: every successful zfcUniqueMerge,
 * zfcAllReduce and zfcSparseReduce (of any plan) on it. Bytes are counted where data is
 * handed to the transport: a block of n bytes that must reach m peers counts n*m bytes sent,
 * each block received from a peer counts as received, and the per-call header of agreement
 * (96 bytes per rank) is included. An exchange routed forwarded (docs/algorithms.md; set by
 * the cost model or ZIPFCOLL_ROUTE=auto|direct|forwarded, the same on every rank) counts its
 * relays in bytes_sent and bytes_received, and each block once, at its destination, in
 * bytes_received_max and bytes_received_sum. A group (zfcGroupStart) counts as one entry
 * whose `calls` is the number of calls it held. Fails with zfcInvalidUsage if stats->size is
 * not the size of a known layout. */
ZFC_API zfcResult_t zfcCommGetStats(zfcComm_t comm, zfcStats_t* stats);
/* Local. Zeroes the statistics. */
ZFC_API zfcResult_t zfcCommResetStats(zfcComm_t comm);

/* ---- operations ---------------------------------------------------------------------- */

/* Collective. From each rank's `count` indices (zfcInt32 or zfcInt64, each in
 * [0, vocab_size)), computes the global sorted set of distinct indices over all ranks,
 * identical on every rank: writes it to `unique_out` (same type as the indices, room for
 * `unique_capacity` entries), its size U_g to *num_unique, and for each local index i its
 * position in that set to positions[i] (int32; `positions` may be NULL if not wanted).
 * Only each rank's distinct indices travel. count == 0 is valid on any rank.
 * Fails with zfcInvalidArgument on every rank if any rank's capacity is below U_g. */
ZFC_API zfcResult_t zfcUniqueMerge(zfcComm_t comm, const void* indices, zfcDataType_t index_type,
                                   size_t count, int64_t vocab_size, void* unique_out,
                                   size_t unique_capacity, size_t* num_unique,
                                   int32_t* positions, void* stream);

/* Local. Zero-fills the fp32 matrix `dense` (num_unique x dim, row-major) and adds row i of
 * `rows` (count x dim, of `row_type` zfcFloat32, zfcFloat16 or zfcBFloat16) into row
 * positions[i], in order of i in blocks of ZFC_SUM_BLOCK_ROWS per position (see "Token
 * order" at the top of this file), summing in fp32. Every position must be in [0, num_unique);
 * this is checked before anything is written. Host or device buffers (see the top of this
 * file); on the device the result has the same bits as on the host. */
ZFC_API zfcResult_t zfcScatterToDense(const void* rows, zfcDataType_t row_type,
                                      const int32_t* positions, size_t count, size_t dim,
                                      float* dense, size_t num_unique, void* stream);

/* Collective. Sums `count` fp32 values across ranks into `recv` (send == recv is allowed).
 * `how` (NULL: no compression) sets the wire format; partial sums are formed in fp32 in rank
 * order and the result is identical on every rank. With compression the result carries the
 * wire's rounding. *overflowed (may be NULL) is set to 1 on every rank when any element of
 * the result is not finite, e.g. because some rank's scaled values overflowed fp16. */
ZFC_API zfcResult_t zfcAllReduce(zfcComm_t comm, const void* send, void* recv, size_t count,
                                 zfcDataType_t type, const zfcCompression_t* how,
                                 int* overflowed, void* stream);

/* Collective. zfcAllReduce with error feedback, on host buffers: `residual` (count fp32
 * values the caller keeps from call to call, zero before the first) is added to send before
 * the values are encoded, and afterwards holds what this rank's encode of them left out,
 * (send + residual) - wire(send + residual), so that the next call sends it: what rounding
 * drops is delayed, not lost. The rounding of the summed chunks on their way back is the
 * same for every rank and is not fed back. Costs count x 4 bytes (the caller's residual)
 * and one more encode and decode of the values. residual may be NULL (zfcAllReduce). recv
 * and residual are written after the last transfer; a call that overflows, or fails, leaves
 * residual as it was. Device buffers: zfcUnsupported in this version. */
ZFC_API zfcResult_t zfcAllReduceWithResidual(zfcComm_t comm, const void* send, void* recv,
                                             size_t count, zfcDataType_t type,
                                             const zfcCompression_t* how, float* residual,
                                             int* overflowed, void* stream);

/* Local. table[indices[p]] += alpha * rows[p] for p in [0, num_rows), where `table` is an
 * fp32 vocab_size x dim matrix. Indices are checked before anything is written; with the
 * unique indices of a sparse reduce each table row is touched once. Host or device buffers
 * (see the top of this file); on the device the result has the same bits as on the host,
 * repeated indices included. */
ZFC_API zfcResult_t zfcApplyRows(float* table, int64_t vocab_size, size_t dim,
                                 const void* indices, zfcDataType_t index_type,
                                 const float* rows, size_t num_rows, float alpha,
                                 void* stream);

/* ---- the fused embedding-gradient exchange ------------------------------------------- */

#define ZFC_SPARSE_PLAN_MAGIC 0x7a667350u

typedef struct {
  size_t size;            /* sizeof(zfcSparsePlanConfig_t) */
  unsigned int magic;     /* ZFC_SPARSE_PLAN_MAGIC */
  unsigned int version;   /* ZFC_VERSION_CODE */
  size_t dim;             /* row width D (> 0) */
  int64_t vocab_size;     /* V: every index must be in [0, V) */
  zfcDataType_t row_type; /* zfcFloat32, zfcFloat16 or zfcBFloat16 */
  zfcDataType_t index_type; /* zfcInt32 or zfcInt64 */
  int algorithm;          /* zfcAlgorithm_t; zfcAlgoDefault: the communicator's */
  int compression;        /* zfcCompressionKind_t; -1: the communicator's */
  float compress_scale;   /* used when `compression` is set here */
  /* ---- end of the 0.1.0 layout (the library accepts it; later fields then default) ---- */
  size_t stream_chunk_bytes; /* zfcSparseReduceApply: the (id, row) pairs a rank receives
                                per round of the stream fill at most this many bytes (at
                                least one pair), besides 8 bytes per rank (24 in the first
                                round); 0: 1 MiB. Equal on every rank */
  /* ---- end of the 0.6 layout ---- */
  int overflow_on_device; /* zfcSparseReduce on the device (see there), a call alone: 1 leaves
                             the overflow flag on the device (zfcSparseResult_t.overflowed
                             -1, overflow_flag), so the call does not wait for the end of its
                             step and returns with it queued on `stream`; 0 (default): the
                             call reads the flag, and its result is complete when it returns.
                             Each rank may choose its own */
} zfcSparsePlanConfig_t;

#define ZFC_SPARSE_PLAN_CONFIG_INITIALIZER                                          \
  {                                                                                 \
    sizeof(zfcSparsePlanConfig_t), ZFC_SPARSE_PLAN_MAGIC, ZFC_VERSION_CODE, 0, 0,  \
        zfcFloat32, zfcInt32, zfcAlgoDefault, -1, 1.0f, 0, 0                        \
  }

/* Set `size` before the call (ZFC_SPARSE_RESULT_INITIALIZER does it); the library fills the
 * rest. */
typedef struct {
  size_t size;           /* sizeof(zfcSparseResult_t) */
  const void* indices;   /* U_g sorted distinct indices, of the plan's index type */
  const float* rows;     /* U_g x dim reduced rows (fp32), row p belongs to indices[p] */
  size_t num_unique;     /* U_g */
  size_t dim;
  int overflowed;        /* 1 on every rank when some reduced value is not finite; -1 when
                            the flag stayed on the device (overflow_flag) */
  int algorithm;         /* the zfcAlgorithm_t that ran (never zfcAlgoAuto) */
  /* ---- end of the 0.11 layout (the library accepts it; the call then reads the flag back
     and sets `overflowed`, one more wait for the stream) ---- */
  const int* overflow_flag; /* a result that stayed on the device, of a call alone on a plan
                               made with overflow_on_device: a device int owned by the plan,
                               valid until the plan's next call (a bounded one too), that the
                               stream sets to 1 on every rank
                               when some reduced value is not finite (0 otherwise) once it
                               reaches the end of the call; `overflowed` is then -1. NULL for
                               every other result */
} zfcSparseResult_t;

#define ZFC_SPARSE_RESULT_INITIALIZER {sizeof(zfcSparseResult_t), NULL, NULL, 0, 0, 0, 0, NULL}

/* Local. Creates a plan for one embedding table; ranks' plans are checked against each
 * other on every zfcSparseReduce. The plan's workspace grows to what the calls need. */
ZFC_API zfcResult_t zfcSparsePlanCreate(zfcComm_t comm, const zfcSparsePlanConfig_t* config,
                                        zfcSparsePlan_t* plan);

/* Collective over the plan's communicator. Takes this rank's `count` indices and their
 * count x dim gradient rows (row_type), and returns in *out the global sorted distinct
 * indices and, for each, the sum over all ranks of the rows carrying it. All algorithms give
 * the same indices and, in fp32 without compression, bit-identical rows (with compression
 * each algorithm rounds what it sends, so their bits differ). With device inputs
 * the result's indices and rows are device memory owned by the plan. Over NCCL,
 * unique_allreduce and zfcAlgoAuto (which is then unique_allreduce) run on the device: on a
 * stream other than the legacy default one, the call waits for it once, to read U_i and the
 * distinct keys, and once more to read the overflow flag, unless the plan was made with
 * overflow_on_device and the call is alone: it then returns with the rest of the step queued
 * on `stream`. key_routed runs there too, waiting seven times (the overflow flag read with
 * the global set's size, or left on the device). A plan's calls on the device must be
 * ordered: a call on another stream than the plan's last call must not start before that
 * call's work (make its stream wait). */
ZFC_API zfcResult_t zfcSparseReduce(zfcSparsePlan_t plan, const void* indices, size_t count,
                                    const void* rows, zfcSparseResult_t* out, void* stream);

/* Collective: zfcSparseReduce writing its result into the caller's buffers instead of the
 * plan's: out_indices (room for `capacity` indices of the plan's index type) and out_rows
 * (capacity x dim fp32). The exchange writes the reduced rows there directly, so the plan
 * holds no U_g x dim result, and the result outlives the plan's next call. *out is filled
 * as by zfcSparseReduce, its indices and rows pointing at out_indices and out_rows. Ranks
 * may pass different capacities (U_g <= min(vocab_size, the ranks' summed counts) bounds
 * what is needed); when some rank's capacity is below U_g, every rank fails alike with
 * zfcInvalidArgument naming that rank, before any buffer is written (if the transport
 * itself fails part-way, out_rows may be partly written). out_rows may overlap the input
 * rows; the result then passes through the plan. Host or device buffers, all of one kind:
 * device inputs are copied through pinned host memory, the exchange runs on the host, and
 * the result is copied to out_indices and out_rows on `stream` before the call returns; a
 * call on device buffers runs alone (recorded in a group, it fails the group with
 * zfcUnsupported in this version). On host buffers it may be recorded in a group; the
 * result then passes through the plan's workspace and the buffers are written at
 * zfcGroupEnd, once every call of the group has succeeded. */
ZFC_API zfcResult_t zfcSparseReduceInto(zfcSparsePlan_t plan, const void* indices, size_t count,
                                        const void* rows, void* out_indices, float* out_rows,
                                        size_t capacity, zfcSparseResult_t* out, void* stream);

/* What a bounded sparse reduce leaves, in the memory space of its buffers, once its work is
 * done (on the device: when the stream reaches the end of the call). */
typedef struct {
  int64_t num_unique; /* U_g (also when it exceeds the capacity, then a lower bound above
                         it when one rank alone has more distinct indices than the
                         capacity; 0 after a disagreement, unspecified after a bad index) */
  int32_t result;     /* zfcSuccess, or the step's failure: zfcInvalidArgument for a bad
                         index on some rank or U_g above the capacity; for a call that agreed
                         in its kernels (below), zfcMismatch when a rank's arguments differ or
                         a rank is in another call, the code of a rank whose own checks
                         failed, or zfcInvalidArgument when the counts add up to more than
                         int32 positions address */
  int32_t overflowed; /* 1 on every rank when some reduced value is not finite */
} zfcBoundedStatus_t;

/* Collective. zfcSparseReduce in fixed sizes, so that the host never waits to learn a size:
 * the ranks' distinct indices are exchanged in blocks of `capacity` keys, and the rows as
 * one capacity x dim allreduce (the uniqueness technique; its fp32 results have the bits of
 * every other algorithm). Every rank passes the same `capacity` (a bound on U_g). Writes, in
 * the memory space of the buffers (all host, or all device on `stream`): out_indices
 * (capacity indices of the plan's index type: the U_g sorted distinct indices, then -1),
 * out_rows (capacity x dim fp32: the sums, then zeros) and *out_status. A bad index or U_g
 * above the capacity is found after the call returned on a device: it is reported in
 * *out_status on every rank alike, the buffers are then left as they were, and
 * zfcCommGetAsyncError and the communicator's next call that is not bounded report it too.
 * Not in a group.
 *
 * Agreement. A call agrees on the host, as every collective does, unless the plan's last
 * call that did so had the same capacity and memory space: a capacity or memory space that
 * differs across ranks, or arguments wrong on some rank (NULL buffers, mixed memory), fail
 * it on every rank. A call with the capacity and memory space its plan remembers agrees in
 * its kernels (host buffers, or device buffers over NCCL; over CUDA-aware MPI device calls
 * always agree on the host), so that the host waits for nothing: a rank that changes either,
 * or whose own checks fail, gets its failure from the call, and the other ranks get
 * zfcMismatch (or that rank's code) in *out_status, reported as above. On host buffers a
 * rank in another operation, or on a plan of other sizes, fails every rank's call at once;
 * on device buffers the host cannot see it without waiting: NCCL pairs that rank's next
 * transfers with the step's pending ones, of other sizes, which usually hangs until
 * timeout_ms ends the next call that waits (the data moved until then is not defined).
 *
 * CUDA graphs. A call that agrees in its kernels on device buffers over NCCL, on a stream
 * other than the legacy default one, can be captured once an earlier call on the plan with
 * the same capacity and memory space (which agreed on the host) has grown its device memory
 * to the call's count and capacity. The graph keeps the call's
 * buffers, count, capacity and header (with its place in the sequence of collectives), so
 * every rank must launch its graph alike; while it lives, the plan may make no call that
 * needs more device memory (a larger count or capacity, or another call on device buffers),
 * since the graph uses the plan's.
 *
 * Device buffers need a transport that takes device memory (NCCL; MPI when CUDA-aware); the
 * calls of one plan must be ordered (one stream, or the caller's events). Over NCCL, on a
 * stream other than the legacy default one, the transfers are queued on `stream` behind the
 * call's kernels and a call that agrees in its kernels waits for none of them. A call
 * captured in a CUDA graph reports its failures in *out_status only (the graph's launches
 * are not the call's). */
ZFC_API zfcResult_t zfcSparseReduceBounded(zfcSparsePlan_t plan, const void* indices,
                                           size_t count, const void* rows, size_t capacity,
                                           void* out_indices, float* out_rows,
                                           zfcBoundedStatus_t* out_status, void* stream);

/* Local. NULL is a no-op. The plan must be destroyed before its communicator, and not while
 * it has a call in an open group. */
ZFC_API zfcResult_t zfcSparsePlanDestroy(zfcSparsePlan_t plan);

/* ---- one call for a step ------------------------------------------------------------- */

/* Local. Opens a group on `comm`: until the matching zfcGroupEnd, zfcAllReduce on comm and
 * zfcSparseReduce on plans of comm are recorded, return zfcSuccess at once, and run at
 * zfcGroupEnd; so are zfcShardedGather and zfcShardedReduceApply. Their buffers must stay
 * valid and unchanged until then; their outputs (recv, *overflowed, *out, positions, the
 * shard) are written by zfcGroupEnd, only when it succeeds. Groups nest (only
 * the outermost zfcGroupEnd runs them). A plan may run once per group. zfcUniqueMerge,
 * zfcCommSplit and zfcSeedGroupCreate are refused inside a group with zfcInvalidUsage, and
 * so is then the group. */
ZFC_API zfcResult_t zfcGroupStart(zfcComm_t comm);

/* Collective. Runs what the group recorded: one agreement for all of its calls (every rank
 * must have recorded the same calls, of the same kinds, in the same order, with matching
 * arguments), whose single exchange also carries each plan's distinct keys and the values of
 * every allreduce of at most 64 values on host buffers; such an allreduce (a step's loss and
 * token counts) costs no round of its own and gives the bits it gives alone. Then the sparse
 * reductions and the small allreduces run in the order recorded, then the other allreduces.
 * Every call gives what it gives alone, except that no sharded table is updated when any
 * call of the group overflowed (zfcShardedReduceApply). A failure of any call, on any rank,
 * fails the group on every rank with the same code and a message naming the call's place in
 * the group and the rank; no output is written then, except, if the transport itself fails
 * part-way, the recv buffers of allreduces already run. An empty group does nothing and sends nothing. */
ZFC_API zfcResult_t zfcGroupEnd(zfcComm_t comm);

/* ---- sharded embedding tables --------------------------------------------------------- */

/* A table too large to hold on every rank (with its optimizer state) is split by rows: each
 * rank stores only the rows it owns, and two collectives serve a step. zfcShardedGather
 * fetches the current rows of the rank's distinct ids (the forward lookup);
 * zfcShardedReduceApply sends the summed gradient of each distinct id to its owner, which
 * sums them over ranks and updates its rows. Each moves O(U_i * dim) bytes per rank each way,
 * independent of the rank count: nothing of order U_g or V travels or is held. */

/* How a row w is updated with its reduced gradient g (zfcApplyUpdate and
 * zfcShardedReduceApply), element by element. */
typedef enum {
  zfcUpdateAdd = 0,    /* w += alpha * g */
  zfcUpdateSgd = 1,    /* w -= alpha * g (alpha: the learning rate) */
  zfcUpdateAdagrad = 2 /* s += g * g; w -= alpha * (g / (sqrt(s) + epsilon)), s being the
                          row of the accumulator the caller keeps beside the table */
} zfcUpdateKind_t;

typedef struct {
  size_t size;   /* sizeof(zfcRowUpdate_t) */
  int kind;      /* zfcUpdateKind_t */
  float alpha;   /* finite */
  float epsilon; /* Adagrad only: finite and >= 0 */
} zfcRowUpdate_t;

#define ZFC_ROW_UPDATE_INITIALIZER {sizeof(zfcRowUpdate_t), zfcUpdateAdd, 1.0f, 1e-10f}

/* Local. For p in [0, num_rows) in order, updates row indices[p] of the fp32 table
 * (vocab_size x dim, row-major) with rows[p] as `update` says; `state` (the same shape)
 * holds Adagrad's accumulators and is not read otherwise (it may then be NULL). Indices are
 * checked before anything is written. Applied to a zfcSparseReduce result, it is the
 * replicated twin of zfcShardedReduceApply: the same rows and update give the same bits.
 * Host or device buffers (see the top of this file); on the device each table row's updates
 * are applied in input order by one CUDA thread per column, with the host's bits. */
ZFC_API zfcResult_t zfcApplyUpdate(float* table, float* state, int64_t vocab_size, size_t dim,
                                   const void* indices, zfcDataType_t index_type,
                                   const float* rows, size_t num_rows,
                                   const zfcRowUpdate_t* update, void* stream);

/* Collective over the plan's communicator: zfcSparseReduce fused with the update of a
 * replicated table. `table` (and, for Adagrad, `state`, the accumulators) is this rank's fp32
 * vocab_size x dim copy; every rank's reduced row of every index in the global set is applied
 * to it with `update` (equal on every rank) as the rows arrive, giving the bits of
 * zfcSparseReduce followed by zfcApplyUpdate on its result (zfcUpdateAdd: zfcApplyRows).
 * With zfcAlgoKeyRouted, and with zfcAlgoAuto, which then takes it, the reduced rows are
 * streamed from their owners in rounds of at most the plan's stream_chunk_bytes of pairs,
 * so the library holds this rank's U_i local sums, the rows routed to it as an owner and
 * their about U_g / G sums, and one round: never U_g x dim; another algorithm
 * named in the plan runs whole and its result is then applied. When any reduced value is
 * not finite the table is left as it was and *overflowed (may be NULL) is 1 on every rank,
 * else 0. Bad arguments fail every rank alike, as for zfcSparseReduce. Indices and rows may
 * be host or device buffers (device ones pass through the host); table and state may be host
 * or device memory, whatever the inputs are (a device table gets each streamed round, or the
 * whole result, copied to the device and applied there on `stream`, with the host's bits;
 * host inputs then need stream NULL). Refused inside a group (the table is written as rows arrive). If
 * the transport fails part-way, rows already applied stay applied. */
ZFC_API zfcResult_t zfcSparseReduceApply(zfcSparsePlan_t plan, const void* indices,
                                         size_t count, const void* rows,
                                         const zfcRowUpdate_t* update, float* table,
                                         float* state, int* overflowed, void* stream);

/* Local. The layout of a vocab_size-row table sharded over `ranks` ranks (G): id v lives on
 * rank owner(v) = (v mod G + mix(floor(v / G)) mod G) mod G, at row floor(v / G) of its
 * shard, mix being the SplitMix64 finalizer (docs/sharded_tables.md). Each block of G
 * consecutive ids puts one row on every rank, so ids ranked by frequency spread their load
 * evenly and every rank holds floor(V / G) or ceil(V / G) rows. zfcShardRows gives the
 * number of rows of `rank`'s shard; zfcShardLocate where id `index` lives (either output may
 * be NULL). */
ZFC_API zfcResult_t zfcShardRows(int64_t vocab_size, int ranks, int rank, size_t* shard_rows);
ZFC_API zfcResult_t zfcShardLocate(int64_t vocab_size, int ranks, int64_t index, int* owner,
                                   size_t* row);

/* Collective over the plan's communicator: the forward lookup of a sharded table. `shard` is
 * this rank's shard, shard_rows x dim fp32 (shard_rows as zfcShardRows gives it for this
 * rank and the communicator's size; the plan gives dim and vocab_size). From this rank's
 * `count` ids, *out gets its U_i distinct ids, sorted, in the plan's index type
 * (out->indices, out->num_unique), and their current rows (out->rows, U_i x dim fp32), each
 * fetched once from its owner; positions[i] (int32, may be NULL) gets the place of
 * indices[i] among them. Rows travel in the plan's compression type, unscaled (with fp16 or
 * bf16 they arrive rounded to it); out->overflowed is 0 and out->algorithm
 * zfcAlgoKeyRouted. A bad id, or a shard_rows that is not this rank's, fails every rank
 * alike. Outputs are owned by the plan, as for zfcSparseReduce. Host or device buffers, all of
 * one kind: with device buffers the ids are copied to the host, the owners read the rows
 * asked of them from their device shards, and out->indices, out->rows (device memory owned
 * by the plan) and positions are written on `stream` before the call returns; such a call
 * runs alone (recorded in a group, it fails the group with zfcUnsupported in this version).
 * On host buffers it may be recorded in a group. */
ZFC_API zfcResult_t zfcShardedGather(zfcSparsePlan_t plan, const float* shard,
                                     size_t shard_rows, const void* indices, size_t count,
                                     zfcSparseResult_t* out, int32_t* positions, void* stream);

/* Collective: the update of a sharded table. Each rank sums the rows of its distinct ids in
 * token order (fp32) and sends each sum to the id's owner (in the plan's compression, with
 * its scale); each owner sums what it receives over ranks in the order zfcSparseReduce uses
 * and applies `update` (equal on every rank) to its rows of `shard` and, for Adagrad,
 * `state` (shard_rows x dim each). In fp32 the shards then hold, bit for bit, the rows of a
 * replicated table updated with zfcSparseReduce and zfcApplyUpdate. When any summed value
 * is not finite, on any owner, no shard is changed and *overflowed (may be NULL) is 1 on
 * every rank, else 0: the step a loss scaler skips. Errors are agreed as for the gather.
 * Host or device buffers, all of one kind: with device buffers the ids and rows are copied to
 * the host, where the exchange runs, and each owner updates its device shard on `stream`
 * with the host's bits before the call returns; such a call runs alone (recorded in a group,
 * it fails the group with zfcUnsupported in this version). On host buffers it may be
 * recorded in a group; the shard is then written
 * at zfcGroupEnd, once every call of the group has succeeded, and only when no call of the
 * group overflowed (an allreduce's or a sparse reduction's value not finite counts too): a
 * grouped step is skipped whole, and *overflowed is then 1. */
ZFC_API zfcResult_t zfcShardedReduceApply(zfcSparsePlan_t plan, const void* indices,
                                          size_t count, const void* rows,
                                          const zfcRowUpdate_t* update, float* shard,
                                          float* state, size_t shard_rows, int* overflowed,
                                          void* stream);

/* ---- the cost model ------------------------------------------------------------------ */

/* The structs of the cost model carry their size first (set it with their initializers),
 * so that they can grow without breaking programs built against this header. */

/* What zfcAlgoAuto assumes of the machine (see zfcLinkModel_t and zfcConfig_t). */
typedef struct {
  size_t size; /* sizeof(zfcMachineModel_t) */
  zfcLinkModel_t intra_node;
  zfcLinkModel_t inter_node;
  double local_gbs; /* bytes one rank reads plus writes per second in local passes, / 1e9 */
  /* Since 0.5.0. Ranks per core on the most crowded host (at least 1; 0 reads as 1). The
   * figures above are those of a rank with a core to itself; where ranks share cores, every
   * byte a rank copies or passes over costs this many times more (latencies do not scale).
   * zfcCommGetMachineModel reports the count the communicator agreed (the largest over its
   * hosts: ranks on the host over the cores they may run on). */
  double ranks_per_core;
} zfcMachineModel_t;

#define ZFC_MACHINE_MODEL_INITIALIZER \
  {sizeof(zfcMachineModel_t), {0.0, 0.0}, {0.0, 0.0}, 0.0, 1.0}

/* The sizes of one sparse-reduce step, as every rank sees them after the index exchange. */
typedef struct {
  size_t size;               /* sizeof(zfcStepShape_t) */
  int ranks;                 /* G */
  int nodes;                 /* N (1: one node); hierarchical needs G = N * L, L > 1 */
  double tokens;             /* sum over ranks of K_i */
  double max_tokens;         /* max over ranks of K_i */
  double local_unique;       /* sum over ranks of U_i */
  double max_local_unique;   /* max over ranks of U_i */
  double global_unique;      /* U_g */
  int64_t vocab_size;        /* V */
  size_t dim;                /* D (indices travel as 4 bytes when V <= 2^32, else 8) */
  zfcDataType_t row_type;    /* the caller's rows */
  zfcCompressionKind_t compression;
  /* ---- end of the layout before 0.6.0 (still accepted; the field below reads 0) ---- */
  size_t stream_chunk_bytes; /* 0: zfcSparseReduce; > 0: zfcSparseReduceApply with this
                                stream_chunk_bytes, whose key_routed streams its result and
                                whose other algorithms add the apply pass */
} zfcStepShape_t;

#define ZFC_STEP_SHAPE_INITIALIZER                                                      \
  {sizeof(zfcStepShape_t), 1, 1, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, zfcFloat32, zfcCompressNone, \
   0}

typedef struct {
  size_t size;            /* sizeof(zfcPrediction_t) */
  double seconds;         /* the whole call, header and index exchange included */
  double bytes;           /* sent + received per rank, averaged over ranks */
  double internode_bytes; /* the part of `bytes` between nodes */
  double workspace_bytes; /* library scratch on one rank */
} zfcPrediction_t;

#define ZFC_PREDICTION_INITIALIZER {sizeof(zfcPrediction_t), 0.0, 0.0, 0.0, 0.0}

/* Local. The model the communicator's zfcAlgoAuto uses: the figures given (config or
 * ZIPFCOLL_MACHINE_MODEL) exactly, the others as measured when it was made and agreed over
 * ranks (each figure's median, to 4 significant digits). model->size must be set. */
ZFC_API zfcResult_t zfcCommGetMachineModel(zfcComm_t comm, zfcMachineModel_t* model);

/* Local. The alpha-beta prediction for `algorithm` (not zfcAlgoAuto) on `shape` and
 * `model`: what zfcAlgoAuto compares, and what zfc_model projects to thousands of ranks
 * (docs/algorithms.md gives the formulas). The size of each struct must be set. */
ZFC_API zfcResult_t zfcPredictSparseReduce(const zfcMachineModel_t* model,
                                           const zfcStepShape_t* shape, int algorithm,
                                           zfcPrediction_t* prediction);

/* Local. The prediction for one step of a sharded table on `shape` and `model`:
 * zfcShardedGather and zfcShardedReduceApply together (their traffic is in
 * docs/sharded_tables.md; stream_chunk_bytes is not read). Sizes must be set as for
 * zfcPredictSparseReduce. */
ZFC_API zfcResult_t zfcPredictShardedStep(const zfcMachineModel_t* model,
                                          const zfcStepShape_t* shape,
                                          zfcPrediction_t* prediction);

/* ---- seed groups and the candidate sampler of sampled softmax ------------------------ */

/* How many seed groups S a communicator of G ranks is split into. Ranks of one group draw
 * the same sampled-softmax candidates each step, so their output-embedding gradient rows
 * coincide and the unique exchange pays off for that table too ("Language Modeling at
 * Scale", section III-B: about G^0.64 groups keep the accuracy of all-distinct seeds). */
typedef enum {
  zfcSeedPower = 0,       /* S = ceil(G^alpha) */
  zfcSeedLog2 = 1,        /* S = max(1, round(log2 G)) */
  zfcSeedLn = 2,          /* S = max(1, round(ln G)) */
  zfcSeedLog10 = 3,       /* S = max(1, round(log10 G)) */
  zfcSeedAllSame = 4,     /* S = 1 */
  zfcSeedAllDistinct = 5, /* S = G */
  zfcSeedExplicit = 6     /* each rank names its group (explicit_group >= 0) */
} zfcSeedPolicy_t;

/* Collective. Splits `comm` into S seed groups. Rank r of G joins group floor(r * S / G):
 * consecutive ranks together, group sizes differing by at most one. With zfcSeedExplicit
 * each rank's explicit_group (>= 0; ignored by the other policies) is its group, and the
 * groups named are numbered 0..S-1 in increasing order. policy, alpha and base_seed must be
 * equal on every rank (zfcMismatch otherwise, on every rank). The group owns a communicator
 * of its members (see zfcSeedGroupInfo), ordered by rank in `comm`. */
ZFC_API zfcResult_t zfcSeedGroupCreate(zfcComm_t comm, zfcSeedPolicy_t policy, double alpha,
                                       int explicit_group, uint64_t base_seed,
                                       zfcSeedGroup_t* group);

/* Local. This rank's group id in [0, S), the number of groups S, and the group's
 * communicator (owned by the group). Any output may be NULL. */
ZFC_API zfcResult_t zfcSeedGroupInfo(zfcSeedGroup_t group, int* id, int* count,
                                     zfcComm_t* group_comm);

/* Local. The seed of `step` for the given group of a run seeded with base_seed: the same on
 * every rank and platform (Philox4x32-10, integer arithmetic only), different across groups
 * and steps. zfcSeedGroupStepSeed(g, step, &seed) sets seed to
 * zfcStepSeed(base_seed, id of g, step); a NULL group or seed is zfcInvalidArgument. */
ZFC_API uint64_t zfcStepSeed(uint64_t base_seed, int group, uint64_t step);
ZFC_API zfcResult_t zfcSeedGroupStepSeed(zfcSeedGroup_t group, uint64_t step, uint64_t* seed);

/* Local. Destroys the group and its communicator; NULL is a no-op. */
ZFC_API zfcResult_t zfcSeedGroupDestroy(zfcSeedGroup_t group);

/* Local. The log-uniform (Zipfian) candidate sampler: P(k) = log((k+2)/(k+1)) / log(V+1)
 * over [0, vocab_size), as sampled softmax uses with ids ordered by falling frequency. Writes
 * num_samples ids to samples: with `unique` (num_samples <= vocab_size) distinct ids, drawn
 * until that many are found, else num_samples independent draws. Draw i comes from Philox
 * keyed by `seed` with counter i, so equal seeds give equal samples everywhere. The
 * expected number of times each sampled id and each of the num_targets target ids was drawn
 * goes to sample_expected and target_expected (either may be NULL): draws * P(k), or with
 * `unique` 1 - (1 - P(k))^draws; *num_draws (may be NULL) gets the number of draws. */
ZFC_API zfcResult_t zfcSampleLogUniform(uint64_t seed, int64_t vocab_size, size_t num_samples,
                                        int unique, int64_t* samples, float* sample_expected,
                                        const int64_t* targets, size_t num_targets,
                                        float* target_expected, uint64_t* num_draws);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZIPFCOLL_H_ */
