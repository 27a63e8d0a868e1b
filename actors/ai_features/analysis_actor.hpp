// The analysis actor (proto::analysis_actor), one per scheduler node: owns the
// failure analyses, kept in the replicated state (column ai_analysis, written
// through `put_ai_records`, read from this member's RocksDB). Receives committed state from raft (as a commit
// listener) and, while this node leads and a model is configured, analyses
// every run that fails for the last time: rules first, then the model's
// judgement, off the scheduling path (the model call runs in the LLM client;
// its answer comes back as a `judged` message). Reads instances and tasks from
// the store actor; the gateway asks it for analyses (GET / POST routes).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/typed_response_promise.hpp>

#include "actors/ai_features/failure_rules.hpp"
#include "actors/ai_features/judge.hpp"
#include "common/activity.hpp"
#include "common/clock.hpp"
#include "common/propose.hpp"
#include "proto/analysis.hpp"

namespace aisched::storage {
class rocks;
}

namespace aisched::ai {

struct analysis_options {
  judge_fn judge;                 // empty: no model; analyses are the rules' answers
  size_t max_in_flight = 4;       // model calls at once
  size_t max_queued = 200;        // automatic analyses waiting beyond that (more are dropped)
  std::chrono::milliseconds store_timeout{10'000};
  ai_record_writer write;         // makes an analysis durable (common/propose.hpp)
  wall_clock clock{};             // when an analysis is made (common/clock.hpp): the system's
};

struct analysis_state {
  std::shared_ptr<storage::rocks> db;
  proto::store_actor store;
  analysis_options opts;
  wall_clock clock;  // opts.clock
  bool leading = false;
  /// A model call in flight for one instance and who waits for its answer.
  struct pending {
    std::string tenant;
    proto::failure_analysis rules;
    std::vector<caf::typed_response_promise<proto::failure_analysis>> waiting;
  };
  std::map<std::string, pending> in_flight;  // by instance id
  std::deque<std::pair<std::string, std::string>> queue;  // (tenant, instance) to analyse
  uint64_t auto_started = 0, auto_dropped = 0, stored = 0, store_errors = 0;
  inspector::activity activity;
  static inline const char* name = "analysis";
};

proto::analysis_actor::behavior_type analysis_actor_impl(
    proto::analysis_actor::stateful_pointer<analysis_state> self,
    std::shared_ptr<storage::rocks> db, proto::store_actor store, analysis_options opts);

/// Reads the stored analysis of (tenant, instance) from `db`; nullopt if none.
caf::expected<std::optional<proto::failure_analysis>> load_analysis(storage::rocks& db,
                                                                     const std::string& tenant,
                                                                     const std::string& id);

/// The record that stores the analysis of (tenant, a.instance_id).
proto::ai_record analysis_record(const std::string& tenant, const proto::failure_analysis& a);

/// The facts and the rules' reading, as the user prompt of the model.
std::string analysis_user_prompt(const failure_facts& f, const proto::failure_analysis& rules);

}  // namespace aisched::ai
