#!/usr/bin/env bash
# On a machine with a GPU: the CUDA tests, then zfc_gpu_bench and the PyTorch pipeline in one
# run, and docs/benchmarks/gpu.md from both.
#
# usage: bench/gpu/run_gpu.sh BUILD_DIR [OUT_DIR]
#   BUILD_DIR  a build with CUDA (cmake -DZIPFCOLL_WITH_CUDA=ON). On a GPU machine without MPI
#              or GoogleTest, build with -DZIPFCOLL_WITH_MPI=OFF where they are: the test and
#              benchmark programs link GoogleTest and the CUDA runtime statically and need only
#              the C++ runtime and the driver, so the build directory can be copied over.
#   OUT_DIR    where the JSON and logs go (default: BUILD_DIR/gpu-results)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source bench/stamp.sh
build="${1:?usage: bench/gpu/run_gpu.sh BUILD_DIR [OUT_DIR]}"
out="${2:-$build/gpu-results}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.txt"
"$build/tests/zfc_cuda_tests" 2>&1 | tee "$out/cuda_tests.log"
# With MPI: the collectives on device buffers, ranks sharing the GPU, and NCCL on one rank.
if [ -x "$build/tests/mpi_nccl" ] && command -v mpirun > /dev/null; then
  run=(mpirun --oversubscribe)
  [ "$(id -u)" = 0 ] && run+=(--allow-run-as-root)
  for np in 1 2 4; do
    "${run[@]}" -np "$np" "$build/tests/mpi_device_collectives" 2>&1 |
      tee "$out/mpi_device_collectives_np$np.log"
  done
  "${run[@]}" -np 1 "$build/tests/mpi_nccl" 2>&1 | tee "$out/mpi_nccl_np1.log"
fi
# The collectives on device buffers as they run today (zfc_perf -g 1; ranks share the GPU),
# checked like the host runs: the baseline a device-resident step is to beat.
if [ -x "$build/bench/zfc_perf" ] && command -v mpirun > /dev/null; then
  run=(mpirun --oversubscribe)
  [ "$(id -u)" = 0 ] && run+=(--allow-run-as-root)
  for np in 1 2 4; do
    "${run[@]}" -np "$np" "$build/bench/zfc_perf" sparse -g 1 -K 640 -D 512 -n 20 -w 5 \
      -J "$out/zfc_perf_sparse_device_np$np.json" 2>&1 |
      tee "$out/zfc_perf_sparse_device_np$np.txt"
    "${run[@]}" -np "$np" "$build/bench/zfc_perf" allreduce -g 1 -b 4K -e 64M -f 4 \
      -J "$out/zfc_perf_allreduce_device_np$np.json" 2>&1 |
      tee "$out/zfc_perf_allreduce_device_np$np.txt"
  done
fi
# The fused step with its buffers on the device over NCCL (one rank per GPU, every call on a
# stream of its own: the uniqueness technique, which auto is on the device and which waits
# once for its sizes, the key-routed exchange, the bounded step with the capacity min(G*K, V), and the
# staged allgather baseline), against a plain NCCL allgather of every rank's indices and rows
# at the same G, K and D.
gpus="$(nvidia-smi -L | wc -l)"
# A run that skips (77: no GPU per rank, no NCCL) is reported and the script goes on.
skip_ok() { local rc=$?; [ "$rc" = 77 ] && echo "(skipped: exit 77)" || return "$rc"; }
if [ -x "$build/bench/zfc_nccl_allgather" ] && [ -x "$build/bench/zfc_perf" ] &&
   command -v mpirun > /dev/null; then
  run=(mpirun --oversubscribe)
  [ "$(id -u)" = 0 ] && run+=(--allow-run-as-root)
  for np in $(printf '%s\n' 1 "$gpus" | awk '$1 > 0' | sort -un); do
    "${run[@]}" -np "$np" "$build/bench/zfc_perf" sparse -g 1 --transport nccl \
      --algo unique_allreduce,key_routed,bounded --compression none,fp16 -K 640 -D 512 -n 20 -w 5 \
      -J "$out/zfc_perf_sparse_nccl_np$np.json" 2>&1 |
      tee "$out/zfc_perf_sparse_nccl_np$np.txt" || skip_ok
    # The same uniqueness step with the overflow flag left on the device: one wait per step.
    "${run[@]}" -np "$np" "$build/bench/zfc_perf" sparse -g 1 --transport nccl \
      --algo unique_allreduce --compression none,fp16 --overflow-on-device 1 -K 640 -D 512 \
      -n 20 -w 5 -J "$out/zfc_perf_sparse_nccl_flag_on_device_np$np.json" 2>&1 |
      tee "$out/zfc_perf_sparse_nccl_flag_on_device_np$np.txt" || skip_ok
    # The files keep the wire's name (bench/gpu/compare.py reads them); -d takes nccl-tests'.
    for wire in fp32 fp16; do
      datatype=float; [ "$wire" = fp16 ] && datatype=half
      "${run[@]}" -np "$np" "$build/bench/zfc_nccl_allgather" -K 640 -D 512 -n 20 -w 5 \
        -d "$datatype" -J "$out/nccl_allgather_${wire}_np$np.json" 2>&1 |
        tee "$out/nccl_allgather_${wire}_np$np.txt" || skip_ok
    done
  done
fi
"$build/bench/zfc_gpu_bench" -J "$out/zfc_gpu.json" | tee "$out/zfc_gpu.txt"
python3 bench/gpu/torch_pipeline.py -J "$out/torch.json" | tee "$out/torch.txt"
python3 bench/gpu/compare.py --zfc "$out/zfc_gpu.json" --torch "$out/torch.json" --steps "$out" \
  --out docs/benchmarks/gpu.md --command "bench/gpu/run_gpu.sh $build" \
  --stamp "$(bench_stamp bench/gpu/run_gpu.sh)"
# A copy beside the raw outputs, for a run whose working copy is not the one committed from.
cp docs/benchmarks/gpu.md "$out/gpu.md"
# Where the tools are there, after the page is written: compute-sanitizer's memcheck over the
# kernel and step-kernel tests and its racecheck over the scatter's shared memory (the ring,
# and the fold's staging over chains of several batches; an error stops the script with a
# non-zero status), and each kernel's device time at 10^6 x 512
# under Nsight Compute, clocks left as they are (a profiler that cannot read the counters
# is reported and passed over).
if command -v compute-sanitizer > /dev/null; then
  for tool in memcheck racecheck; do
    filter='DeviceRows.*:DeviceStepKernels.*'
    [ "$tool" = racecheck ] && filter='DeviceRows.Scatter*:DeviceRows.Folds*'
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$build/tests/zfc_cuda_tests" \
      --gtest_filter="$filter" > "$out/$tool.log" 2>&1 ||
      { echo "compute-sanitizer $tool found errors: $out/$tool.log"; exit 1; }
  done
fi
if command -v ncu > /dev/null; then
  if ncu --clock-control none --csv --print-units base --kernel-name-base demangled \
      --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
      "$build/bench/zfc_gpu_bench" -K 1e6 -D 512 -n 1 \
      > "$out/ncu_scatter_1e6x512.csv" 2> "$out/ncu.err" &&
     python3 bench/gpu/kernel_times.py "$out/ncu_scatter_1e6x512.csv" \
      > "$out/ncu_scatter_1e6x512.txt"; then
    cat "$out/ncu_scatter_1e6x512.txt"
  else
    echo "ncu gave no kernel times (see $out/ncu.err): passed over"
  fi
fi
echo "done: docs/benchmarks/gpu.md (and $out/gpu.md)"
