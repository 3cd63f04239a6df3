// lstm_lm: a data-parallel LSTM language model whose gradients are all synchronised by
// zipfcoll. Run it under mpirun, or with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set as
// torchrun sets them. `lstm_lm --help` lists the options; docs/trainer.md shows runs.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>

#include "checkpoint.hpp"
#include "options.hpp"
#include "trainer.hpp"

// OpenBLAS would start a thread per core in every rank; ranks already fill the cores.
extern "C" void openblas_set_num_threads(int) __attribute__((weak));

namespace {

bool launched_like_torchrun() {
  return std::getenv("MASTER_ADDR") != nullptr && std::getenv("MASTER_PORT") != nullptr;
}

int run(lm::Options o, zfcComm_t comm, int rank, int size) {
  if (!o.load.empty()) {
    // The checkpoint fixes the model's shape and mode.
    const lm::Checkpoint ck = lm::load_checkpoint(o.load);
    o.dim = ck.shape.dim;
    o.hidden = ck.shape.hidden;
    o.layers = ck.shape.layers;
    o.projection = ck.shape.projection;
    o.mode = ck.vocab.bytes ? lm::Mode::kChar : lm::Mode::kWord;
    if (o.mode == lm::Mode::kChar) o.softmax = lm::SoftmaxKind::kFull;
    o.vocab = ck.shape.vocab;
    // The optimizer's state is the checkpoint's: its optimizer, unless another is asked for.
    if (!o.optimizer_given) {
      o.optimizer = ck.optimizer;
    } else if (o.optimizer != ck.optimizer) {
      throw std::runtime_error(o.load + " was trained with --optimizer " +
                               lm::optimizer_name(ck.optimizer) + ", which keeps other state "
                               "than --optimizer " + lm::optimizer_name(o.optimizer) +
                               ": leave --optimizer out or name the checkpoint's");
    }
  }
  lm::Corpus corpus;
  if (!o.corpus.empty()) {
    corpus = lm::load_corpus(o.corpus, o.mode == lm::Mode::kWord, o.vocab);
  } else {
    corpus.vocab = lm::load_checkpoint(o.load).vocab;  // generation from a checkpoint only
  }
  if (rank == 0) {
    std::printf("lstm_lm: %d ranks; %s\n", size, lm::describe(o).c_str());
    // The corpus by its own name: logs are shared, the directory they came from is not.
    std::string name = o.corpus;
    while (name.size() > 1 && name.back() == '/') name.pop_back();
    name = name.substr(name.find_last_of('/') + 1);
    std::printf("corpus %s: %zu files, %zu training and %zu held-out tokens, vocabulary %lld",
                name.c_str(), corpus.files, corpus.train.size(), corpus.valid.size(),
                static_cast<long long>(corpus.vocab.size()));
    if (!corpus.vocab.bytes) std::printf(" (held-out <unk> rate %.1f%%)", 100 * corpus.unk_rate);
    std::printf("\n");
  }
  lm::Trainer trainer(o, comm, std::move(corpus));
  int rc = 0;
  if (!o.corpus.empty()) {
    if (rank == 0) std::printf("unigram perplexity of the held-out split: %.2f\n",
                               trainer.unigram_perplexity());
    rc = trainer.train();
  }
  if (rc == 0 && !o.save.empty() && !trainer.save(o.save)) {
    std::fprintf(stderr, "lstm_lm: could not write %s\n", o.save.c_str());
    rc = 1;
  }
  if (rc == 0) trainer.generate(o.generate);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  lm::Options o;
  if (!lm::parse_options(argc, argv, &o)) return 2;
  if (o.help) return 0;
  if (!o.compare_a.empty()) {
    try {
      const double worst = lm::compare_checkpoints(o.compare_a, o.compare_b);
      std::printf("largest relative difference %.3g (tolerance %.3g)\n", worst, o.tolerance);
      return worst <= o.tolerance ? 0 : 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lstm_lm: %s\n", e.what());
      return 2;
    }
  }
  if (openblas_set_num_threads != nullptr) openblas_set_num_threads(1);
  const bool torchrun = launched_like_torchrun();
  if (!torchrun) MPI_Init(&argc, &argv);
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.name = "lstm_lm";
  cfg.rounding_seed = o.seed;  // stochastic rounding's, so that --seed varies it too
  zfcComm_t comm = nullptr;
  MPI_Comm world = MPI_COMM_WORLD;
  const zfcResult_t r = torchrun ? zfcCommInitFromEnv(&comm, &cfg)
                                 : zfcCommInitMpi(&comm, &world, &cfg);
  if (r != zfcSuccess) {
    std::fprintf(stderr, "lstm_lm: %s\n", zfcGetLastError(nullptr));
    if (!torchrun) MPI_Finalize();
    return 1;
  }
  int rank = 0, size = 1;
  zfcCommRank(comm, &rank);
  zfcCommCount(comm, &size);
  int rc = 0;
  try {
    rc = run(o, comm, rank, size);
  } catch (const std::exception& e) {
    // Every rank reads the same files and options, so every rank fails alike here.
    std::fprintf(stderr, "lstm_lm (rank %d): %s\n", rank, e.what());
    rc = 1;
  }
  zfcCommDestroy(comm);
  if (!torchrun) MPI_Finalize();
  return rc;
}
