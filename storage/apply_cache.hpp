// Decoded records the state machine's applier reads again and again: tasks
// (every fire and dispatch reads its task), their runtime facts, and instances
// not yet finished (every transition reads its instance). Without it each of
// those reads is a RocksDB lookup and a decode per command.
//
// Only the applying thread uses it. It holds committed state only: filled from
// database reads and, once a batch is written, from that batch's writes; it is
// dropped whole when it outgrows its bounds or when the state is replaced
// underneath (a snapshot install), so it never disagrees with the database.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "proto/types.hpp"

namespace aisched::storage {

struct apply_cache {
  static constexpr size_t max_tasks = 100'000;
  static constexpr size_t max_instances = 200'000;

  std::unordered_map<uint64_t, std::optional<proto::task>> tasks;  // nullopt: no such task
  std::unordered_map<uint64_t, proto::task_runtime> runtimes;
  std::unordered_map<std::string, proto::instance> instances;  // by instance key; unfinished only

  void clear() {
    tasks.clear();
    runtimes.clear();
    instances.clear();
  }

  /// Drops what outgrew its bound (whole maps: simple, and rare).
  void trim() {
    if (tasks.size() > max_tasks) tasks.clear();
    if (runtimes.size() > max_tasks) runtimes.clear();
    if (instances.size() > max_instances) instances.clear();
  }
};

}  // namespace aisched::storage
