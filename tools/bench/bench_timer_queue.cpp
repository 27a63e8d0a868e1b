// Google Benchmark for trigger::timer_queue at 1k / 100k / 1M armed entries: ns per arm,
// cancel, re-arm, fire (advance delivering due entries, cascades included) and next_due.
// Each reports the cost of one operation in the "per_op" counter; setup, refills and the
// drawing of random inputs run with the timer paused.
//   bench_timer_queue --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "actors/trigger/timer_queue.hpp"

namespace aisched::trigger {
namespace {

constexpr unix_ms t0 = 1'700'000'000'000;
constexpr int batch = 1000;
constexpr unix_ms day_ms = 86'400'000;

// A populated queue: `n` random 64-bit keys with dues spread uniformly over the next day,
// so most entries sit in the wheel (several revolutions deep) and a few in the heap.
struct populated {
  explicit populated(int64_t n, unsigned seed = 1) : q(t0), rng(seed) {
    keys.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      keys.push_back(rng());
      q.arm(keys.back(), random_due());
    }
  }
  unix_ms random_due() { return t0 + static_cast<unix_ms>(rng() % day_ms); }

  timer_queue q;
  std::mt19937_64 rng;
  std::vector<uint64_t> keys;
};

void report(benchmark::State& state, int64_t ops) {
  state.SetItemsProcessed(ops);
  // An inverted rate is seconds per op; the console prints it with an SI prefix ("95ns").
  state.counters["per_op"] = benchmark::Counter(
      static_cast<double>(ops), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Arming a fresh key into a queue holding n; the batch is cancelled (untimed) afterwards so
// the size stays at n.
void bm_arm(benchmark::State& state) {
  populated p(state.range(0));
  std::vector<std::pair<uint64_t, unix_ms>> fresh(batch);
  int64_t ops = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (auto& [key, due] : fresh) {
      key = p.rng();
      due = p.random_due();
    }
    state.ResumeTiming();
    for (const auto& [key, due] : fresh) p.q.arm(key, due);
    state.PauseTiming();
    for (const auto& [key, due] : fresh) p.q.cancel(key);
    state.ResumeTiming();
    ops += batch;
  }
  report(state, ops);
}

// Cancelling an armed key out of n; the batch is re-armed (untimed) afterwards.
void bm_cancel(benchmark::State& state) {
  populated p(state.range(0));
  std::vector<std::pair<uint64_t, unix_ms>> victims(batch);
  int64_t ops = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (auto& [key, due] : victims) {
      key = p.keys[p.rng() % p.keys.size()];
      due = *p.q.due_of(key);
    }
    state.ResumeTiming();
    for (const auto& [key, due] : victims) benchmark::DoNotOptimize(p.q.cancel(key));
    state.PauseTiming();
    for (const auto& [key, due] : victims) p.q.arm(key, due);
    state.ResumeTiming();
    ops += batch;
  }
  report(state, ops);
}

// Re-arming an armed key to a new random due (size stays n, no untimed part needed beyond
// drawing the keys).
void bm_rearm(benchmark::State& state) {
  populated p(state.range(0));
  std::vector<std::pair<uint64_t, unix_ms>> moves(batch);
  int64_t ops = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (auto& [key, due] : moves) {
      key = p.keys[p.rng() % p.keys.size()];
      due = p.random_due();
    }
    state.ResumeTiming();
    for (const auto& [key, due] : moves) p.q.arm(key, due);
    ops += batch;
  }
  report(state, ops);
}

// Delivering due entries: n entries spread 4 ms apart on average (the 1M case spans about
// one wheel revolution), time advanced one second per advance(), so each call cascades a
// slot and delivers ~250 entries. Counts ns per delivered entry; refills are untimed.
void bm_fire(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::mt19937_64 rng(3);
  std::vector<std::pair<uint64_t, unix_ms>> entries(static_cast<size_t>(n));
  for (auto& [key, due] : entries) {
    key = rng();
    due = static_cast<unix_ms>(rng() % (n * 4));
  }
  timer_queue q(t0);
  unix_ms now = t0;
  auto refill = [&] {
    for (const auto& [key, due] : entries) q.arm(key, now + 1 + due);
  };
  refill();
  std::vector<timer_queue::fired> out;
  out.reserve(4096);
  int64_t fired = 0;
  for (auto _ : state) {
    if (q.empty()) {
      state.PauseTiming();
      refill();
      state.ResumeTiming();
    }
    out.clear();
    now += 1000;
    q.advance(now, out);
    fired += static_cast<int64_t>(out.size());
  }
  report(state, fired);
}

// next_due with n armed: O(1) from the heap top.
void bm_next_due(benchmark::State& state) {
  populated p(state.range(0));
  int64_t ops = 0;
  for (auto _ : state) {
    for (int i = 0; i < batch; ++i) benchmark::DoNotOptimize(p.q.next_due());
    ops += batch;
  }
  report(state, ops);
}

// next_due when the cached wheel minimum must be refreshed: only far entries (heap empty),
// and each op cancels the earliest entry and then asks next_due. Cancelling in due order
// walks through the first revolution (early exit at the first slot of the current round)
// and then the later rounds (a pass over all occupied slots). Refills are untimed.
void bm_next_due_refresh(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::mt19937_64 rng(5);
  std::vector<std::pair<unix_ms, uint64_t>> sorted(static_cast<size_t>(n));
  for (auto& [due, key] : sorted) {
    due = t0 + 60'000 + static_cast<unix_ms>(rng() % day_ms);
    key = rng();
  }
  std::sort(sorted.begin(), sorted.end());
  timer_queue q(t0);
  size_t next = sorted.size();
  int64_t ops = 0;
  for (auto _ : state) {
    if (next == sorted.size()) {
      state.PauseTiming();
      for (const auto& [due, key] : sorted) q.arm(key, due);
      next = 0;
      state.ResumeTiming();
    }
    q.cancel(sorted[next++].second);
    benchmark::DoNotOptimize(q.next_due());
    ++ops;
  }
  report(state, ops);
}

void sizes(benchmark::internal::Benchmark* b) {
  b->Arg(1'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMicrosecond);
}

BENCHMARK(bm_arm)->Apply(sizes);
BENCHMARK(bm_cancel)->Apply(sizes);
BENCHMARK(bm_rearm)->Apply(sizes);
BENCHMARK(bm_fire)->Apply(sizes);
BENCHMARK(bm_next_due)->Apply(sizes);
BENCHMARK(bm_next_due_refresh)->Apply(sizes);

}  // namespace
}  // namespace aisched::trigger

BENCHMARK_MAIN();
