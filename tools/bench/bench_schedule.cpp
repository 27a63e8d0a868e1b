// Google Benchmark for trigger::schedule: parsing an expression, and computing the next
// fire instant (next_after) or the next 100 (next_n) for 5-field and 6-field cron, a DST
// zone (Europe/Berlin) and `@every 1s`. items/s counts fire instants computed.
//   bench_schedule --benchmark_min_time=0.2 --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>

#include "actors/trigger/schedule.hpp"

namespace aisched::trigger {
namespace {

constexpr unix_ms t0 = 1'796'022'000'000;  // 2026-11-30T07:00:00Z

struct expr {
  const char* text;
  const char* tz;
};
constexpr expr exprs[] = {
    {"*/5 * * * *", "UTC"},             // 0: 5 fields
    {"*/10 */2 9-17 * * MON-FRI", "UTC"},  // 1: 6 fields, with seconds
    {"30 2 * * *", "Europe/Berlin"},    // 2: DST zone (02:30 falls in the spring gap)
    {"@every 1s", "UTC"},               // 3
};

schedule must_parse(const expr& e) {
  auto s = schedule::parse(e.text, e.tz);
  if (!s) {
    std::cerr << "cannot parse '" << e.text << "'\n";
    std::abort();
  }
  return *s;
}

void label(benchmark::State& state) {
  const auto& e = exprs[state.range(0)];
  state.SetLabel(std::string(e.text) + " " + e.tz);
}

void bm_parse(benchmark::State& state) {
  const auto& e = exprs[state.range(0)];
  for (auto _ : state) benchmark::DoNotOptimize(schedule::parse(e.text, e.tz));
  state.SetItemsProcessed(state.iterations());
  label(state);
}

// One next_after at a time, walking forward from the previous result; back to t0 after a
// year so every run covers the same DST transitions (tzdata has none past 2037).
void bm_next_after(benchmark::State& state) {
  auto s = must_parse(exprs[state.range(0)]);
  constexpr unix_ms year = 365LL * 86'400'000;
  unix_ms at = t0;
  for (auto _ : state) {
    auto next = s.next_after(at);
    at = next && *next < t0 + year ? *next : t0;
    benchmark::DoNotOptimize(at);
  }
  state.SetItemsProcessed(state.iterations());
  label(state);
}

// next_n(100) from a fixed instant.
void bm_next_n(benchmark::State& state) {
  auto s = must_parse(exprs[state.range(0)]);
  for (auto _ : state) benchmark::DoNotOptimize(s.next_n(t0, 100));
  state.SetItemsProcessed(state.iterations() * 100);
  label(state);
}

BENCHMARK(bm_parse)->DenseRange(0, 3);
BENCHMARK(bm_next_after)->DenseRange(0, 3);
BENCHMARK(bm_next_n)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace aisched::trigger

BENCHMARK_MAIN();
