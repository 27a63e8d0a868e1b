// Google Benchmark for storage::state_machine::apply on a real RocksDB in a fresh
// directory under TMPDIR (default /tmp; TMPDIR=/dev/shm takes the disk out). Each
// iteration applies one batch (one WriteBatch, unsynced as in production):
// - bm_create_task/N: N create_task entries; items = tasks created;
// - bm_fire_dispatch_report/N: three entries (fire, dispatch, report_results) covering
//   one new slot of N noop tasks, taking N instances pending -> dispatched -> success;
//   items = instances run through;
// - bm_bulk_run_life/N: bulk-enqueued runs from fire to pruned (see there).
//   bench_state_machine --benchmark_min_time=0.2 --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "proto/commands.hpp"
#include "proto/errors.hpp"
#include "proto/types.hpp"
#include "storage/rocks.hpp"
#include "storage/state_machine.hpp"

namespace aisched::storage {
namespace {

using namespace proto;
namespace fs = std::filesystem;

constexpr unix_ms t0 = 1'796'022'000'000;  // 2026-11-30T07:00:00Z
constexpr unix_ms minute = 60'000;

[[noreturn]] void die(const std::string& what) {
  std::cerr << what << "\n";
  std::abort();
}

/// A state machine on a RocksDB in its own temporary directory, removed on destruction.
struct fixture {
  fixture() {
    dir = fs::temp_directory_path() /
          ("aisched-bench-sm-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir);
    auto d = rocks::open(dir.string());
    if (!d) die(view(d.error()).message);
    db = std::move(*d);
    auto s = state_machine::open(*db);
    if (!s) die(view(s.error()).message);
    sm = std::move(*s);
  }
  ~fixture() {
    sm.reset();
    db.reset();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  /// Applies `cmds` as the next log entries in one batch; aborts on any rejection.
  std::vector<caf::expected<applied>> apply(std::vector<command> cmds) {
    std::vector<log_entry> entries;
    auto index = sm->applied_index();
    for (auto& c : cmds) entries.push_back(log_entry{++index, 1, std::move(c)});
    auto r = sm->apply(entries);
    if (!r) die(view(r.error()).message);
    for (auto& x : *r)
      if (!x) die(view(x.error()).message);
    return std::move(*r);
  }

  fs::path dir;
  std::unique_ptr<rocks> db;
  std::unique_ptr<state_machine> sm;
};

task noop_task(int64_t n) {
  task t;
  t.name = "bench-" + std::to_string(n);
  t.kind = task_kind::noop;
  t.schedule = "* * * * *";
  t.created_at = t0;
  t.updated_at = t0;
  return t;
}

void bm_create_task(benchmark::State& state) {
  const int64_t n = state.range(0);
  fixture f;
  int64_t made = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<command> cmds;
    for (int64_t i = 0; i < n; ++i) cmds.emplace_back(create_task{noop_task(made + i), ""});
    state.ResumeTiming();
    f.apply(std::move(cmds));
    made += n;
  }
  state.SetItemsProcessed(made);
}

/// n runs of n tasks through fire, dispatch and report: in one apply() call
/// (`apart` false: the batch coalesces each run to one write), or each command
/// in its own call, as a loaded node commits them (a state-index move a step).
void fire_dispatch_report(benchmark::State& state, bool apart) {
  const int64_t n = state.range(0);
  fixture f;
  std::vector<uint64_t> ids;
  {
    std::vector<command> cmds;
    for (int64_t i = 0; i < n; ++i) cmds.emplace_back(create_task{noop_task(i), ""});
    for (auto& a : f.apply(std::move(cmds))) ids.push_back(a->tasks.at(0).id);
  }
  unix_ms slot = t0;
  int64_t runs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    slot += minute;
    fire fi{1, slot, {}};
    dispatch di{1, slot + 1, {}};
    report_results re{1, slot + 3, {}};
    for (auto id : ids) {
      fi.slots.push_back(fire_slot{id, slot, "", "", "", 0});
      auto iid = make_instance_id(id, slot, 0);
      di.entries.push_back(dispatch_entry{iid, "w1"});
      run_result r;
      r.instance_id = std::move(iid);
      r.worker_id = "w1";
      r.state = instance_state::success;
      r.started_at = slot + 2;
      r.finished_at = slot + 3;
      re.results.push_back(std::move(r));
    }
    std::vector<command> cmds{command{std::move(fi)}, command{std::move(di)},
                              command{std::move(re)}};
    state.ResumeTiming();
    if (apart) {
      for (auto& c : cmds) f.apply({std::move(c)});
    } else {
      f.apply(std::move(cmds));
    }
    runs += n;
  }
  state.SetItemsProcessed(runs);
}

void bm_fire_dispatch_report(benchmark::State& state) { fire_dispatch_report(state, false); }
void bm_fire_dispatch_report_apart(benchmark::State& state) { fire_dispatch_report(state, true); }

/// The life of bulk-enqueued runs as a loaded node commits it (workload c of
/// tools/bench/peers): one fire of `n` payloads into one task, then the runs'
/// dispatches and reports in commands of 250, each its own apply() call, and
/// retention pruning the runs of the iteration before (range(1): 0 by id,
/// as prune_runs did; 1 as the span prune_history names them by); items = runs.
void bm_bulk_run_life(benchmark::State& state) {
  const int64_t n = state.range(0);
  const bool as_span = state.range(1) != 0;
  constexpr int64_t step = 250;
  fixture f;
  auto made = f.apply({command{create_task{noop_task(0), ""}}});
  const uint64_t id = made.at(0)->tasks.at(0).id;
  unix_ms slot = t0;
  std::vector<std::string> previous;
  int64_t runs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    slot += minute;
    fire_slot fs{id, slot, "", "", "", 0};
    fs.payloads.assign(static_cast<size_t>(n), "{}");
    std::vector<command> cmds{command{fire{1, slot, {std::move(fs)}}}};
    std::vector<std::string> ids;
    for (int64_t k = 0; k < n; ++k) ids.push_back(make_instance_id(id, slot, uint32_t(k)));
    for (int64_t k = 0; k < n; k += step) {
      dispatch di{1, slot + 1, {}};
      for (int64_t j = k; j < std::min(n, k + step); ++j) di.entries.push_back({ids[j], "w1"});
      cmds.emplace_back(std::move(di));
    }
    for (int64_t k = 0; k < n; k += step) {
      report_results re{1, slot + 3, {}};
      for (int64_t j = k; j < std::min(n, k + step); ++j) {
        run_result r;
        r.instance_id = ids[j];
        r.worker_id = "w1";
        r.state = instance_state::success;
        r.started_at = slot + 2;
        r.finished_at = slot + 3;
        re.results.push_back(std::move(r));
      }
      cmds.emplace_back(std::move(re));
    }
    if (!previous.empty() && as_span)
      cmds.emplace_back(prune_history{
          1, {{id, slot - minute, 0, slot - minute, uint32_t(n - 1), uint64_t(n)}}, {}});
    else if (!previous.empty())
      cmds.emplace_back(prune_runs{1, std::move(previous)});
    const bool prunes = !previous.empty();
    previous = std::move(ids);
    state.ResumeTiming();
    std::vector<caf::expected<applied>> last;
    for (auto& c : cmds) last = f.apply({std::move(c)});
    if (prunes && (!last.at(0) || last.at(0)->pruned != uint64_t(n))) {
      state.SkipWithError("the prune did not remove the runs of the iteration before");
      break;
    }
    runs += n;
  }
  state.SetItemsProcessed(runs);
}

BENCHMARK(bm_create_task)->Arg(1)->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_fire_dispatch_report)->Arg(1)->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_fire_dispatch_report_apart)->Arg(64)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(bm_bulk_run_life)->Args({1000, 0})->Args({1000, 1})->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace aisched::storage

BENCHMARK_MAIN();
