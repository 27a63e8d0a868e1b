// Google Benchmark for the worker outbox (actors/worker/outbox.hpp): a batch of
// reports kept, then forgotten once acknowledged, as the worker does per run.
// Beside it, the same cycle on a RocksDB the way the outbox kept reports
// before (vector memtable, WAL without fsync), flushes and compactions
// included as they come: the ratio of the two is the outbox's share of a
// run's cost. Counter "reports/s".
//   bench_outbox --benchmark_min_time=2 --benchmark_repetitions=3
#include <benchmark/benchmark.h>
#include <rocksdb/db.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "actors/worker/outbox.hpp"
#include "proto/codec.hpp"

namespace aisched::worker {
namespace {

namespace fs = std::filesystem;

struct temp_dir {
  fs::path path;
  temp_dir() {
    path = fs::temp_directory_path() / ("bench-outbox-" + std::to_string(::getpid()));
    fs::remove_all(path);
  }
  ~temp_dir() { fs::remove_all(path); }
};

/// `batch` reports of a burst: no-op runs that succeeded.
std::vector<proto::run_result> burst(size_t batch, uint64_t& next) {
  std::vector<proto::run_result> out(batch);
  for (auto& r : out) {
    r.instance_id = "17-1796022000000-" + std::to_string(next++);
    r.worker_id = "n1";
    r.attempt = 1;
    r.started_at = r.finished_at = 1'796'022'000'000;
  }
  return out;
}

void BM_outbox_segments(benchmark::State& state) {
  temp_dir dir;
  auto box = outbox::open(dir.path.string());
  if (!box) {
    state.SkipWithError("cannot open the outbox");
    return;
  }
  auto batch = static_cast<size_t>(state.range(0));
  uint64_t next = 0;
  for (auto _ : state) {
    auto rs = burst(batch, next);
    std::vector<std::pair<std::string, const proto::run_result*>> put;
    std::vector<std::string> keys;
    for (auto& r : rs) {
      keys.push_back(r.instance_id + "#1");
      put.emplace_back(keys.back(), &r);
    }
    if ((*box)->put(put) || (*box)->erase(keys)) state.SkipWithError("outbox write failed");
  }
  state.counters["reports/s"] =
      benchmark::Counter(static_cast<double>(next), benchmark::Counter::kIsRate);
}

void BM_outbox_rocksdb_before(benchmark::State& state) {
  temp_dir dir;
  rocksdb::Options opts;
  opts.create_if_missing = true;
  opts.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
  opts.allow_concurrent_memtable_write = false;
  rocksdb::DB* raw = nullptr;
  if (!rocksdb::DB::Open(opts, dir.path.string(), &raw).ok()) {
    state.SkipWithError("cannot open RocksDB");
    return;
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  auto batch = static_cast<size_t>(state.range(0));
  uint64_t next = 0;
  for (auto _ : state) {
    auto rs = burst(batch, next);
    rocksdb::WriteBatch put, erase;
    for (auto& r : rs) {
      auto key = r.instance_id + "#1";
      put.Put(key, proto::encode(r));
      erase.Delete(key);
    }
    if (!db->Write(rocksdb::WriteOptions{}, &put).ok() ||
        !db->Write(rocksdb::WriteOptions{}, &erase).ok())
      state.SkipWithError("RocksDB write failed");
  }
  state.counters["reports/s"] =
      benchmark::Counter(static_cast<double>(next), benchmark::Counter::kIsRate);
  db->Close();
}

BENCHMARK(BM_outbox_segments)->Arg(64)->MeasureProcessCPUTime();
BENCHMARK(BM_outbox_rocksdb_before)->Arg(64)->MeasureProcessCPUTime();

}  // namespace
}  // namespace aisched::worker

BENCHMARK_MAIN();
