#include "options.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>

namespace lm {
namespace {

const char* kUsage =
    "usage: lstm_lm --corpus PATH [options]   (run under mpirun, or with RANK/WORLD_SIZE/\n"
    "       MASTER_ADDR/MASTER_PORT set as torchrun does)\n"
    "  --mode word|char         word LM (default) or byte-level LM\n"
    "  --vocab V                word vocabulary incl. <unk> and <eos> (10000)\n"
    "  --dim D --hidden H --layers L --projection   model sizes (256 256 1)\n"
    "  --bptt T --batch B       truncated BPTT steps and streams per rank (20 16)\n"
    "  --softmax sampled|full   training softmax of word mode (sampled)\n"
    "  --samples S              sampled-softmax candidates per rank (1024)\n"
    "  --optimizer sgd|adagrad --lr X --lr-decay F --decay-after E --clip N\n"
    "  --seed N --steps N --epochs N --time-budget SEC   (--steps: the step to stop at,\n"
    "                           counted from the start of training, a loaded one's too)\n"
    "  --log-every N --eval-every N --valid-tokens N\n"
    "  --sync allgather|unique_allreduce|unique_allgather|owner_partitioned|hierarchical|\n"
    "         dense_vocab|auto\n"
    "  --compression none|fp16:F|bf16\n"
    "  --group on|off           a step's collectives in one grouped call (on), or one by\n"
    "                           one, each timed (off); the parameters are the same\n"
    "  --tables replicated|sharded  embedding tables whole on every rank (replicated), or\n"
    "                           split by rows (sharded: the input table, and the output\n"
    "                           table with sampled softmax; needs --clip 0 and --group on)\n"
    "  --seed-groups all-distinct|all-same|power:A|log2|ln|log10\n"
    "  --log-json FILE --save FILE --load FILE --generate N\n"
    "  --save-every N           also write --save every N steps (each write atomic)\n"
    "  --load FILE              resume: parameters, optimizer, step, epoch, data position\n"
    "                           and recurrent state (the last two restart at the epoch's\n"
    "                           start when ranks, --batch or --bptt differ)\n"
    "  --compare A B [--tolerance X]  largest relative difference of two checkpoints\n"
    "  --inject-inf STEP        fault test: the last rank's gradient gets an inf at STEP;\n"
    "                           every rank must skip that step\n";

bool fail(const char* what, const char* value) {
  std::fprintf(stderr, "lstm_lm: bad %s '%s'\n%s", what, value, kUsage);
  return false;
}

bool to_int64(const char* s, int64_t* out) {
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  if (end == s || *end != '\0') return false;
  *out = v;
  return true;
}

bool to_double(const char* s, double* out) {
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  if (end == s || *end != '\0') return false;
  *out = v;
  return true;
}

bool parse_sync(const char* s, zfcAlgorithm_t* out) {
  for (int a = zfcAlgoAuto; a < zfcNumAlgorithms; ++a) {
    if (std::strcmp(s, zfcGetAlgorithmName(a)) == 0) {
      *out = static_cast<zfcAlgorithm_t>(a);
      return true;
    }
  }
  return false;
}

bool parse_compression(const char* s, zfcCompression_t* out) {
  if (std::strcmp(s, "none") == 0) {
    *out = {zfcCompressNone, 1.0f};
  } else if (std::strcmp(s, "bf16") == 0) {
    *out = {zfcCompressBf16, 1.0f};
  } else if (std::strncmp(s, "fp16", 4) == 0) {
    double scale = 1.0;
    if (s[4] == ':' && !to_double(s + 5, &scale)) return false;
    if (s[4] != ':' && s[4] != '\0') return false;
    if (!(scale > 0)) return false;
    *out = {zfcCompressFp16, static_cast<float>(scale)};
  } else {
    return false;
  }
  return true;
}

bool parse_seed_groups(const char* s, Options* o) {
  const std::map<std::string, zfcSeedPolicy_t> named = {
      {"all-distinct", zfcSeedAllDistinct}, {"all-same", zfcSeedAllSame},
      {"log2", zfcSeedLog2}, {"ln", zfcSeedLn}, {"log10", zfcSeedLog10}};
  const auto it = named.find(s);
  if (it != named.end()) {
    o->seed_policy = it->second;
    return true;
  }
  if (std::strncmp(s, "power:", 6) != 0) return false;
  o->seed_policy = zfcSeedPower;
  return to_double(s + 6, &o->seed_alpha) && o->seed_alpha >= 0 && o->seed_alpha <= 1;
}

using Handler = std::function<bool(const char*)>;

std::map<std::string, Handler> value_options(Options* o) {
  auto int_opt = [](auto* field, int64_t lo) {
    return [field, lo](const char* v) {
      int64_t x = 0;
      if (!to_int64(v, &x) || x < lo) return false;
      *field = static_cast<std::remove_pointer_t<decltype(field)>>(x);
      return true;
    };
  };
  auto real_opt = [](auto* field, double lo) {
    return [field, lo](const char* v) {
      double x = 0;
      if (!to_double(v, &x) || x < lo) return false;
      *field = static_cast<std::remove_pointer_t<decltype(field)>>(x);
      return true;
    };
  };
  return {
      {"--corpus", [o](const char* v) { o->corpus = v; return true; }},
      {"--mode", [o](const char* v) {
         if (std::strcmp(v, "word") == 0) o->mode = Mode::kWord;
         else if (std::strcmp(v, "char") == 0) o->mode = Mode::kChar;
         else return false;
         return true;
       }},
      {"--vocab", int_opt(&o->vocab, 3)},      {"--dim", int_opt(&o->dim, 1)},
      {"--hidden", int_opt(&o->hidden, 1)},    {"--layers", int_opt(&o->layers, 1)},
      {"--bptt", int_opt(&o->bptt, 1)},        {"--batch", int_opt(&o->batch, 1)},
      {"--samples", int_opt(&o->samples, 1)},  {"--seed", int_opt(&o->seed, 0)},
      {"--steps", int_opt(&o->max_steps, 0)},  {"--epochs", int_opt(&o->epochs, 1)},
      {"--log-every", int_opt(&o->log_every, 1)},
      {"--eval-every", int_opt(&o->eval_every, 0)},
      {"--valid-tokens", int_opt(&o->valid_tokens, 0)},
      {"--decay-after", int_opt(&o->decay_after, 0)},
      {"--generate", int_opt(&o->generate, 0)},
      {"--inject-inf", int_opt(&o->inject_inf, 0)},
      {"--save-every", int_opt(&o->save_every, 1)},
      {"--lr", real_opt(&o->lr, 0)},           {"--lr-decay", real_opt(&o->lr_decay, 0)},
      {"--clip", [o, clip = real_opt(&o->clip, 0)](const char* v) {
         o->clip_given = true;
         return clip(v);
       }},
      {"--init-scale", real_opt(&o->init_scale, 0)},
      {"--time-budget", real_opt(&o->time_budget, 0)},
      {"--tolerance", real_opt(&o->tolerance, 0)},
      {"--softmax", [o](const char* v) {
         if (std::strcmp(v, "sampled") == 0) o->softmax = SoftmaxKind::kSampled;
         else if (std::strcmp(v, "full") == 0) o->softmax = SoftmaxKind::kFull;
         else return false;
         return true;
       }},
      {"--optimizer", [o](const char* v) {
         if (std::strcmp(v, "sgd") == 0) o->optimizer = OptimizerKind::kSgd;
         else if (std::strcmp(v, "adagrad") == 0) o->optimizer = OptimizerKind::kAdagrad;
         else return false;
         o->optimizer_given = true;
         return true;
       }},
      {"--sync", [o](const char* v) { return parse_sync(v, &o->sync); }},
      {"--compression", [o](const char* v) { return parse_compression(v, &o->compression); }},
      {"--group", [o](const char* v) {
         if (std::strcmp(v, "on") == 0) o->group = true;
         else if (std::strcmp(v, "off") == 0) o->group = false;
         else return false;
         return true;
       }},
      {"--tables", [o](const char* v) {
         if (std::strcmp(v, "replicated") == 0) o->tables = TableLayout::kReplicated;
         else if (std::strcmp(v, "sharded") == 0) o->tables = TableLayout::kSharded;
         else return false;
         return true;
       }},
      {"--seed-groups", [o](const char* v) { return parse_seed_groups(v, o); }},
      {"--log-json", [o](const char* v) { o->log_json = v; return true; }},
      {"--save", [o](const char* v) { o->save = v; return true; }},
      {"--load", [o](const char* v) { o->load = v; return true; }},
  };
}

}  // namespace

bool parse_options(int argc, char** argv, Options* out) {
  Options o;
  const std::map<std::string, Handler> handlers = value_options(&o);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      out->help = true;
      return true;
    }
    if (arg == "--projection") {
      o.projection = true;
      continue;
    }
    if (arg == "--compare") {
      if (i + 2 >= argc) return fail("--compare", "(needs two files)");
      o.compare_a = argv[++i];
      o.compare_b = argv[++i];
      continue;
    }
    const auto it = handlers.find(arg);
    if (it == handlers.end()) return fail("option", arg.c_str());
    if (i + 1 >= argc) return fail(arg.c_str(), "(missing value)");
    if (!it->second(argv[++i])) return fail(arg.c_str(), argv[i]);
  }
  if (!o.compare_a.empty()) {
    *out = o;
    return true;
  }
  if (o.corpus.empty() && o.load.empty()) return fail("--corpus", "(missing)");
  if (o.save_every > 0 && o.save.empty()) return fail("--save-every", "(needs --save FILE)");
  if (o.mode == Mode::kChar) o.softmax = SoftmaxKind::kFull;
  if (!o.projection && o.hidden != o.dim) {
    return fail("--hidden", "(differs from --dim: add --projection)");
  }
  if (o.tables == TableLayout::kSharded) {
    // The embedding rows' reduced gradients exist only on their owners, inside the update:
    // no rank can take their norm before the update, so clipping by the global norm is off.
    if (o.clip_given && o.clip > 0) return fail("--clip", "(must be 0 with --tables sharded)");
    o.clip = 0;
    // Ungrouped, an overflow in one table's update could not stop the other's.
    if (!o.group) return fail("--group", "off (--tables sharded needs --group on)");
  }
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
