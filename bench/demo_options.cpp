#include "demo_options.hpp"

#include "tools/tool_options.hpp"

int parse_demo_options(int argc, char** argv, bool print, DemoOptions* o) {
  using zfc::tools::add_int;
  using zfc::tools::add_real;
  CLI::App app("the embedding-gradient exchange, allgather baseline against unique + "
               "allreduce\nrun as: mpirun -np G zfc_demo [options]",
               "zfc_demo");
  app.footer("exit status: 0 results identical across algorithms (and after --help), 1 they "
             "differ or a call failed, 2 a bad option (refused on every rank before any "
             "collective)");
  app.add_option("--corpus", o->corpus,
                 "real text: every .txt file in DIR (default: seeded Zipf stream)")
      ->type_name("DIR");
  add_int<int64_t>(app, "--vocab", &o->vocab,
                   "vocabulary size, most frequent words; the rest map to <unk>", 2,
                   INT32_MAX);
  add_real(app, "--zipf", &o->zipf_s, "exponent of the synthetic stream", 0.0);
  add_int(app, "--windows", &o->windows, "windows per rank per step", 0, 1 << 20);
  add_int(app, "-L,--window-len", &o->window_len, "words per window; K = N * L tokens per rank",
          1, 1 << 20);
  add_int<size_t>(app, "-D,--dim", &o->dim, "embedding width", 1, size_t{1} << 20);
  add_int(app, "-n,--iters", &o->steps, "measured steps", 1, 1000000);
  add_int(app, "-w,--warmup_iters", &o->warmup, "unmeasured steps first", 0, 1000000);
  add_real(app, "--scale", &o->fp16_scale, "fp16 compression scale", 1e-30);
  add_int<uint64_t>(app, "--seed", &o->seed, "workload seed");
  return zfc::tools::parse_command_line(app, argc, argv, print);
}
