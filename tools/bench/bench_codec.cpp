// Google Benchmark for proto::encode / proto::decode (the wire codec of data
// format 2, proto/wire.hpp) of a task, an instance and a run_result, beside
// CAF's binary serializer that formats 0 and 1 stored (proto::format_1), and a
// log_entry holding a fire command with 100 slots. Reports bytes/s over the
// encoded size and the size itself in the "bytes" counter.
//   bench_codec --benchmark_min_time=0.2 --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "proto/codec.hpp"
#include "proto/commands.hpp"
#include "proto/types.hpp"

namespace aisched::proto {
namespace {

constexpr unix_ms t0 = 1'796'022'000'000;  // 2026-11-30T07:00:00Z

task sample_task() {
  task t;
  t.id = 42;
  t.name = "nightly-report";
  t.command = "/usr/local/bin/report --since yesterday --format csv";
  t.schedule = "30 2 * * *";
  t.timezone = "Europe/Berlin";
  t.labels = {{"zone", "eu-1"}, {"disk", "ssd"}};
  t.created_at = t0;
  t.updated_at = t0;
  return t;
}

instance sample_instance() {
  instance i;
  i.id = "42-1796022000000-0";
  i.task_id = 42;
  i.slot = t0;
  i.state = instance_state::success;
  i.worker_id = "worker-7";
  i.created_at = t0;
  i.dispatched_at = t0 + 5;
  i.started_at = t0 + 12;
  i.finished_at = t0 + 1'500;
  i.output = std::string(200, 'x');
  i.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  return i;
}

log_entry sample_fire() {
  fire f{7, t0, {}};
  for (uint64_t k = 0; k < 100; ++k)
    f.slots.push_back(fire_slot{k + 1, t0, "4bf92f3577b34da6a3ce929d0e0e4736", "", "", 0});
  return log_entry{1000, 7, command{std::move(f)}};
}

template <class T>
void bm_encode(benchmark::State& state, T x) {
  size_t bytes = 0;
  for (auto _ : state) {
    auto s = encode(x);
    bytes = s.size();
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.SetItemsProcessed(state.iterations());
  state.counters["bytes"] = static_cast<double>(bytes);
}

template <class T>
void bm_decode(benchmark::State& state, T x) {
  const auto bytes = encode(x);
  if (!decode<T>(bytes)) std::abort();
  for (auto _ : state) benchmark::DoNotOptimize(decode<T>(bytes));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes.size()));
  state.SetItemsProcessed(state.iterations());
  state.counters["bytes"] = static_cast<double>(bytes.size());
}

run_result sample_report() {
  run_result r;
  r.instance_id = "42-1796022000000-0";
  r.worker_id = "worker-7";
  r.attempt = 1;
  r.started_at = t0 + 5;
  r.finished_at = t0 + 9;
  return r;
}

/// A record through CAF's serializer, as data formats 0 and 1 stored it.
template <class T>
void bm_encode_format_1(benchmark::State& state, T x) {
  for (auto _ : state) benchmark::DoNotOptimize(format_1::encode(x));
  state.SetItemsProcessed(state.iterations());
  state.counters["bytes"] = static_cast<double>(format_1::encode(x).size());
}

template <class T>
void bm_decode_format_1(benchmark::State& state, T x) {
  const auto bytes = format_1::encode(x);
  if (!format_1::decode<T>(bytes)) std::abort();
  for (auto _ : state) benchmark::DoNotOptimize(format_1::decode<T>(bytes));
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK_CAPTURE(bm_encode, task, sample_task());
BENCHMARK_CAPTURE(bm_decode, task, sample_task());
BENCHMARK_CAPTURE(bm_encode, instance, sample_instance());
BENCHMARK_CAPTURE(bm_decode, instance, sample_instance());
BENCHMARK_CAPTURE(bm_encode_format_1, task, sample_task());
BENCHMARK_CAPTURE(bm_decode_format_1, task, sample_task());
BENCHMARK_CAPTURE(bm_encode_format_1, instance, sample_instance());
BENCHMARK_CAPTURE(bm_decode_format_1, instance, sample_instance());
BENCHMARK_CAPTURE(bm_encode, report, sample_report());
BENCHMARK_CAPTURE(bm_decode, report, sample_report());
BENCHMARK_CAPTURE(bm_encode_format_1, report, sample_report());
BENCHMARK_CAPTURE(bm_decode_format_1, report, sample_report());
BENCHMARK_CAPTURE(bm_encode, fire_100_slots, sample_fire());
BENCHMARK_CAPTURE(bm_decode, fire_100_slots, sample_fire());

}  // namespace
}  // namespace aisched::proto

BENCHMARK_MAIN();
