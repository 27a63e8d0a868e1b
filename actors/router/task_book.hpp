// What the router knows of tasks, pure: for every task the terms placement
// reads (tenant, labels, route, limits, paused), and a bounded cache of full
// definitions for the runs it sends. An idle task costs its terms only: a full
// copy of every definition was a third of an idle task's memory (#17); a
// definition the cache lacks is read from the store when a run of it is sent.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

#include "proto/types.hpp"

namespace aisched::router {

/// The fields of a task that placement and concurrency limits read.
struct task_terms {
  uint64_t id = 0;
  std::string tenant;
  std::map<std::string, std::string> labels;  // worker label selector
  proto::route_strategy route = proto::route_strategy::least_loaded;
  uint32_t max_concurrency = 0;
  std::string pool;
  uint64_t version = 0;  // of the definition they were taken from
  bool paused = false;   // its pending runs wait (placement.hpp); runs placed ahead of
                         // their instant are withdrawn (withdrawal.hpp)
  bool noop = false;     // kind noop: its runs need no thread (routing.hpp, candidate::takes)
  uint32_t shards = 1;   // runs a slot of it creates (placement.hpp, runs_fired)

  static task_terms of(const proto::task& t);
};

class task_book {
 public:
  /// Bound on cached definitions; past it the cache is dropped whole (simple,
  /// and rare: it holds the tasks whose runs are being sent).
  static constexpr size_t max_definitions = 4096;

  /// Task `t` was created or changed: its terms, and its cached definition if
  /// there is one (a created task's definition is read when it first runs).
  void put(const proto::task& t);
  /// Task `id` was deleted.
  void erase(uint64_t id);

  /// The terms of task `id`, nullptr when no such task is known.
  const task_terms* terms(uint64_t id) const;
  /// The cached definition of task `id`, nullptr when it must be read.
  const proto::task* definition(uint64_t id) const;
  /// Caches `t`, read from the store for a run to send. Ignored for a task the
  /// book does not know (deleted while it was read) or knows a newer version of
  /// (changed while it was read).
  void cache(proto::task t);

  size_t size() const { return terms_.size(); }
  size_t cached() const { return definitions_.size(); }

 private:
  std::unordered_map<uint64_t, task_terms> terms_;
  std::unordered_map<uint64_t, proto::task> definitions_;
};

}  // namespace aisched::router
