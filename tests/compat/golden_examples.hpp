// The example values of the golden encodings (tests/compat/golden_test.cpp):
// one value of each record type aisched stores and one log entry for each
// raft command, every field set to a distinctive value other than its
// default, so that a field lost, moved or read as another shows. Fixed
// forever: each value is what the bytes in format-0/<name>.hex mean. Change
// none of them; a new record type or field gets a new example (and file).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "proto/ai_types.hpp"
#include "proto/analysis.hpp"
#include "proto/auth_types.hpp"
#include "proto/commands.hpp"
#include "proto/controls.hpp"
#include "proto/membership.hpp"
#include "proto/secret_types.hpp"
#include "proto/types.hpp"
#include "storage/idempotency.hpp"
#include "storage/raft_log.hpp"
#include "storage/state_machine.hpp"

namespace aisched::compat {

/// 2026-11-30T07:00:00Z, the instant the examples are built around.
constexpr unix_ms t0 = 1'796'022'000'000;

// -- records ------------------------------------------------------------------

proto::task example_task();
proto::task_runtime example_task_runtime();
proto::instance example_instance();
proto::attempt_record example_attempt();
proto::run_result example_run_result();
proto::user example_user();
proto::api_token example_token();
proto::audit_entry example_audit_entry();
proto::data_key example_data_key();
proto::secret_record example_secret();
proto::pool example_pool();
proto::calendar example_calendar();
proto::load_sample example_load_sample();
proto::membership example_membership();
proto::failure_analysis example_analysis();
proto::conversation example_conversation();
proto::chat_message example_chat_message();
proto::pending_action example_pending_action();

// -- layouts written by hand in storage/ ----------------------------------------

storage::hard_state example_hard_state();
storage::log_base example_log_base();
storage::idempotency_record example_idempotency_record();
storage::state_machine::state_counts example_instance_counts();

/// Two reports kept in a worker's outbox, by key ("{instance}#{attempt}").
std::vector<std::pair<std::string, proto::run_result>> example_outbox_reports();

// -- commands -----------------------------------------------------------------

/// One log entry per alternative of proto::command, in the variant's order.
std::vector<proto::log_entry> example_log_entries();

/// Calls `each(name, example)` for every record the codec stores (RocksDB
/// values, the worker's outbox values), by the name of its golden file.
template <class Each>
void for_each_record(Each each) {
  each("task", example_task());
  each("task_runtime", example_task_runtime());
  each("instance", example_instance());
  each("attempt_record", example_attempt());
  each("run_result", example_run_result());
  each("user", example_user());
  each("api_token", example_token());
  each("audit_entry", example_audit_entry());
  each("data_key", example_data_key());
  each("secret_record", example_secret());
  each("pool", example_pool());
  each("calendar", example_calendar());
  each("load_sample", example_load_sample());
  each("membership", proto::set_membership{example_membership()});
  each("failure_analysis", example_analysis());
}

}  // namespace aisched::compat
