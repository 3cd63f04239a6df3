#include "options.hpp"

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tools/tool_options.hpp"

namespace lm {
namespace {

const char* const kDescription =
    "the example trainer: a data-parallel LSTM language model synchronised by zipfcoll\n"
    "run as: lstm_lm --corpus PATH [options]   (run under mpirun, or with RANK/WORLD_SIZE/\n"
    "       MASTER_ADDR/MASTER_PORT set as torchrun does)";

const char* const kFooter =
    "--steps is the step to stop at, counted from the start of training (a loaded one's\n"
    "too). --load resumes parameters, optimizer, step, epoch, data position and recurrent\n"
    "state (the last two restart at the epoch's start when ranks, --batch or --bptt differ).\n"
    "exit status: 0 done (and after --help; --compare: within --tolerance), 1 a failure\n"
    "(--compare: beyond it), 2 a bad option or an unreadable checkpoint";

// A refusal after parsing, when options do not fit together.
bool fail(const std::string& why) {
  std::fprintf(stderr, "lstm_lm: %s (see --help)\n", why.c_str());
  return false;
}

// A word option whose values map to `values`.
template <class T>
CLI::Option* add_word(CLI::App& app, const std::string& name, T* out, const std::string& help,
                      const std::vector<std::pair<std::string, T>>& values) {
  std::string all;
  for (const auto& v : values) all += (all.empty() ? "" : "|") + v.first;
  return app
      .add_option_function<std::string>(
          name,
          [name, out, values, all](const std::string& v) {
            for (const auto& known : values) {
              if (v == known.first) {
                *out = known.second;
                return;
              }
            }
            throw zfc::tools::bad_option(name, v, "not one of " + all);
          },
          help)
      ->type_name(all);
}

void parse_sync(const std::string& s, zfcAlgorithm_t* out) {
  for (int a = zfcAlgoAuto; a < zfcNumAlgorithms; ++a) {
    if (s == zfcGetAlgorithmName(a)) {
      *out = static_cast<zfcAlgorithm_t>(a);
      return;
    }
  }
  throw zfc::tools::bad_option("--sync", s, "not an algorithm (see --help)");
}

// A compression by the library's name (zfcGetCompressionName), fp16's and fp16_sr's with a
// scale after a colon.
void parse_compression(const std::string& s, zfcCompression_t* out) {
  const size_t colon = s.find(':');
  const std::string name = s.substr(0, colon);
  double scale = 1.0;
  const bool scaled = name == "fp16" || name == "fp16_sr";
  if (colon != std::string::npos &&
      !(scaled && zfc::tools::parse_real(s.substr(colon + 1), &scale) && scale > 0)) {
    throw zfc::tools::bad_option("--compression", s, "a scale F > 0 goes with fp16:F only");
  }
  for (int k = 0; k < 2 * ZFC_COMPRESS_STOCHASTIC; ++k) {
    const char* known = zfcGetCompressionName(k);
    if (known != nullptr && name == known) {
      *out = {static_cast<zfcCompressionKind_t>(k), static_cast<float>(scale)};
      return;
    }
  }
  throw zfc::tools::bad_option("--compression", s,
                               "not none, fp16[:F], bf16, fp8_e4m3, fp8_e5m2, int8, or one of "
                               "them but none with _sr (stochastic rounding)");
}

void parse_seed_groups(const std::string& s, Options* o) {
  const std::map<std::string, zfcSeedPolicy_t> named = {
      {"all-distinct", zfcSeedAllDistinct}, {"all-same", zfcSeedAllSame},
      {"log2", zfcSeedLog2}, {"ln", zfcSeedLn}, {"log10", zfcSeedLog10}};
  const auto it = named.find(s);
  if (it != named.end()) {
    o->seed_policy = it->second;
    return;
  }
  double alpha = 0;
  if (s.compare(0, 6, "power:") != 0 || !zfc::tools::parse_real(s.substr(6), &alpha) ||
      alpha < 0 || alpha > 1) {
    throw zfc::tools::bad_option("--seed-groups", s,
                                 "not all-distinct, all-same, power:A (0 <= A <= 1), log2, "
                                 "ln or log10");
  }
  o->seed_policy = zfcSeedPower;
  o->seed_alpha = alpha;
}

void add_model(CLI::App& app, Options* o) {
  using zfc::tools::add_int;
  add_word(app, "--mode", &o->mode, "word LM (default) or byte-level LM",
           {{"word", Mode::kWord}, {"char", Mode::kChar}});
  add_int<int64_t>(app, "--vocab", &o->vocab, "word vocabulary incl. <unk> and <eos>", 3);
  add_int(app, "-D,--dim", &o->dim, "embedding width", 1);
  add_int(app, "--hidden", &o->hidden, "LSTM width H", 1);
  add_int(app, "--layers", &o->layers, "LSTM layers", 1);
  app.add_flag("--projection", o->projection, "top layer's H projected to D (needed when H != D)");
  add_int(app, "--bptt", &o->bptt, "truncated BPTT steps", 1);
  add_int(app, "--batch", &o->batch, "streams per rank", 1);
  add_word(app, "--softmax", &o->softmax, "training softmax of word mode",
           {{"sampled", SoftmaxKind::kSampled}, {"full", SoftmaxKind::kFull}});
  add_int(app, "--samples", &o->samples, "sampled-softmax candidates per rank", 1);
  zfc::tools::add_real(app, "--init-scale", &o->init_scale, "initial weights' scale", 0.0);
}

void add_training(CLI::App& app, Options* o) {
  using zfc::tools::add_int;
  using zfc::tools::add_real;
  add_word(app, "--optimizer", &o->optimizer, "optimizer (default adagrad, or a checkpoint's)",
           {{"sgd", OptimizerKind::kSgd}, {"adagrad", OptimizerKind::kAdagrad}})
      ->each([o](const std::string&) { o->optimizer_given = true; });
  add_real(app, "--lr", &o->lr, "learning rate", 0.0);
  add_real(app, "--lr-decay", &o->lr_decay, "learning rate factor per epoch", 0.0);
  add_int(app, "--decay-after", &o->decay_after, "epoch the decay starts after", 0);
  add_real(app, "--clip", &o->clip, "global gradient norm bound (0: none)", 0.0)
      ->each([o](const std::string&) { o->clip_given = true; });
  add_int<uint64_t>(app, "--seed", &o->seed, "seed");
  add_int<int64_t>(app, "--steps", &o->max_steps, "training steps to stop at", 0);
  add_int(app, "--epochs", &o->epochs, "epochs", 1);
  add_real(app, "--time-budget", &o->time_budget, "seconds of training (0: no bound)", 0.0);
  add_int(app, "--log-every", &o->log_every, "steps between progress lines", 1);
  add_int<int64_t>(app, "--eval-every", &o->eval_every,
                   "steps between validations (0: at each epoch's end)", 0);
  add_int<int64_t>(app, "--valid-tokens", &o->valid_tokens,
                   "held-out tokens validated (0: all)", 0);
  add_int<int64_t>(app, "--inject-inf", &o->inject_inf,
                   "fault test: the last rank's gradient gets an inf at STEP; every rank must "
                   "skip that step",
                   0);
}

void add_sync(CLI::App& app, Options* o) {
  app.add_option_function<std::string>(
         "--sync", [o](const std::string& v) { parse_sync(v, &o->sync); },
         "allgather|unique_allreduce|unique_allgather|owner_partitioned|hierarchical|"
         "dense_vocab|auto")
      ->type_name("ALGO");
  app.add_option_function<std::string>(
         "--compression", [o](const std::string& v) { parse_compression(v, &o->compression); },
         "wire format of the exchanges (_sr: rounded stochastically, seeded by --seed)")
      ->type_name("none|fp16[:F]|bf16|fp8_e4m3|fp8_e5m2|int8[_sr]");
  add_word(app, "--error-feedback", &o->error_feedback,
           "the dense weights' allreduces feed what their encode left out into the next step "
           "(zfcAllReduceWithResidual; 4 bytes per weight)",
           {{"on", true}, {"off", false}});
  add_word(app, "--group", &o->group,
           "a step's collectives in one grouped call (on), or one by one, each timed (off); "
           "the parameters are the same",
           {{"on", true}, {"off", false}});
  add_word(app, "--tables", &o->tables,
           "embedding tables whole on every rank (replicated), or split by rows (sharded: "
           "the input table, and the output table with sampled softmax; needs --clip 0 and "
           "--group on)",
           {{"replicated", TableLayout::kReplicated}, {"sharded", TableLayout::kSharded}});
  app.add_option_function<std::string>(
         "--seed-groups", [o](const std::string& v) { parse_seed_groups(v, o); },
         "ranks drawing the same sampled-softmax candidates")
      ->type_name("all-distinct|all-same|power:A|log2|ln|log10");
}

void add_files(CLI::App& app, Options* o) {
  app.add_option("--corpus", o->corpus, "a .txt file or a directory of them")->type_name("PATH");
  zfc::tools::add_output_file(app, &o->log_json, "log progress and validation as JSON lines");
  app.add_option("--save", o->save, "write a checkpoint at the end")->type_name("FILE");
  zfc::tools::add_int<int64_t>(app, "--save-every", &o->save_every,
                               "also write --save every N steps (each write atomic)", 1);
  app.add_option("--load", o->load, "resume from a checkpoint")->type_name("FILE");
  zfc::tools::add_int(app, "--generate", &o->generate,
                      "words (or characters) to sample at the end", 0);
  app.add_option_function<std::vector<std::string>>(
         "--compare",
         [o](const std::vector<std::string>& v) {
           o->compare_a = v[0];
           o->compare_b = v[1];
         },
         "largest relative difference of two checkpoints, then exit")
      ->expected(2)
      ->type_name("A B");
  zfc::tools::add_real(app, "--tolerance", &o->tolerance, "--compare's bound", 0.0);
}

// Options that do not fit together; true when they do.
bool check(Options* o) {
  if (o->corpus.empty() && o->load.empty()) return fail("--corpus PATH is missing");
  if (o->save_every > 0 && o->save.empty()) return fail("--save-every needs --save FILE");
  if (o->mode == Mode::kChar) o->softmax = SoftmaxKind::kFull;
  if (!o->projection && o->hidden != o->dim) {
    return fail("--hidden " + std::to_string(o->hidden) + " differs from --dim " +
                std::to_string(o->dim) + ": add --projection");
  }
  if (o->tables == TableLayout::kSharded) {
    // The embedding rows' reduced gradients exist only on their owners, inside the update:
    // no rank can take their norm before the update, so clipping by the global norm is off.
    if (o->clip_given && o->clip > 0) return fail("--clip must be 0 with --tables sharded");
    o->clip = 0;
    // Ungrouped, an overflow in one table's update could not stop the other's.
    if (!o->group) return fail("--group off: --tables sharded needs --group on");
  }
  return true;
}

}  // namespace

bool parse_options(int argc, char** argv, Options* out) {
  Options o;
  CLI::App app(kDescription, "lstm_lm");
  app.footer(kFooter);
  add_model(app, &o);
  add_training(app, &o);
  add_sync(app, &o);
  add_files(app, &o);
  const int status = zfc::tools::parse_command_line(app, argc, argv, true);
  if (status == 0) {
    out->help = true;
    return true;
  }
  if (status > 0) return false;
  if (o.compare_a.empty() && !check(&o)) return false;
  *out = o;
  return true;
}

std::string describe(const Options& o) {
  std::ostringstream s;
  s << (o.mode == Mode::kWord ? "word" : "char") << " LM: D=" << o.dim << " H=" << o.hidden
    << " layers=" << o.layers << (o.projection ? " +projection" : "") << " T=" << o.bptt
    << " B=" << o.batch << " softmax="
    << (o.softmax == SoftmaxKind::kFull ? "full" : "sampled:" + std::to_string(o.samples))
    << " " << (o.optimizer == OptimizerKind::kSgd ? "sgd" : "adagrad") << " lr=" << o.lr
    << " clip=" << o.clip << " sync=" << zfcGetAlgorithmName(o.sync)
    << " group=" << (o.group ? "on" : "off")
    << " tables=" << (o.tables == TableLayout::kSharded ? "sharded" : "replicated");
  return s.str();
}

}  // namespace lm
