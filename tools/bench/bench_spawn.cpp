// Google Benchmark for starting one shell run from a node that holds BALLAST MiB of
// touched memory (a node with many tasks): the supervisor started with posix_spawn
// (worker::spawn_supervised, what a worker does) beside a plain fork + exec of
// /bin/true from the same process, the least a design that forks the node pays.
// Each iteration starts `/bin/true` and waits for its end.
//   bench_spawn --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "actors/worker/sandbox.hpp"

namespace aisched::worker {
namespace {

/// Touched memory of the benchmarking process, resized to the benchmark's argument.
std::vector<char>& ballast(size_t mib) {
  static std::vector<char> b;
  if (b.size() != mib << 20) {
    std::vector<char>().swap(b);  // assign() alone would keep the old pages
    b.assign(mib << 20, 0);
    for (size_t i = 0; i < b.size(); i += 4096) b[i] = 1;
  }
  return b;
}

void spawn_supervisor(benchmark::State& state) {
  ballast(static_cast<size_t>(state.range(0)));
  spawn_spec spec;
  spec.supervisor = AISCHED_SUPERVISOR_PATH;
  spec.argv = {"/bin/true"};
  spec.dir = "/";
  for (auto _ : state) {
    supervised_run run;
    std::string error;
    if (!spawn_supervised(spec, run, error)) {
      state.SkipWithError(error.c_str());
      break;
    }
    // Until the run's exit record, as the executor waits; then the supervisor ends.
    std::vector<run_status> records;
    bool exited = false;
    while (!exited) {
      pollfd p{run.status_fd, POLLIN, 0};
      poll(&p, 1, 100);
      if (!read_status(run.status_fd, records)) break;
      for (auto& r : records) exited = exited || r.kind != run_status::started;
    }
    terminate_supervised(run);
    close(run.output_fd);
    close(run.status_fd);
  }
  state.SetItemsProcessed(state.iterations());
}

void fork_exec(benchmark::State& state) {
  ballast(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/true", "true", nullptr);
      _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(spawn_supervisor)->Arg(0)->Arg(512)->Arg(2048)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(fork_exec)->Arg(0)->Arg(512)->Arg(2048)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace aisched::worker

BENCHMARK_MAIN();
