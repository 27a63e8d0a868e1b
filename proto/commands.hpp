// The replicated commands: every change to durable state is one of these,
// proposed to the raft actor, appended to the log and applied by the state
// machine (storage/state_machine) on every node in the same order. Commands are
// deterministic: anything time- or randomness-dependent (timestamps, backoff
// deadlines, jitter) is decided by the proposer and carried in the command.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "proto/auth_types.hpp"
#include "proto/command_traits.hpp"
#include "proto/controls.hpp"
#include "proto/field.hpp"
#include "proto/membership.hpp"
#include "proto/secret_types.hpp"
#include "proto/types.hpp"

namespace aisched::proto {

/// Creates a task; the state machine assigns `t.id` and `t.version = 1`.
/// The proposer sets `t.created_at` / `t.updated_at`.
struct create_task {
  static constexpr command_traits traits{"create_task", fencing::none, 1};
  task t;
  /// The client's Idempotency-Key ("" = none): a create repeated with the same
  /// key (a retry after a timeout) answers with the task the first one made.
  std::string idempotency_key;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, create_task& x) {
  return f(caf::meta::type_name("aisched.create_task"), field("t"), x.t,
           field("idempotency_key"), x.idempotency_key);
}

/// Replaces the definition of task `t.id` if its stored version equals
/// `expected_version` (0 skips the check). Bumps the version.
struct update_task {
  static constexpr command_traits traits{"update_task", fencing::none, 2};
  task t;
  uint64_t expected_version = 0;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, update_task& x) {
  return f(caf::meta::type_name("aisched.update_task"), field("t"), x.t,
           field("expected_version"), x.expected_version);
}

/// Deletes a task (its past instances stay readable). A task other tasks
/// depend on is refused with has_dependents naming them, unless `cascade`:
/// then the same apply removes it from each dependent's `depends_on`, so no
/// member ever holds an edge to a missing task.
struct delete_task {
  static constexpr command_traits traits{"delete_task", fencing::none, 3};
  std::string tenant;  // "" = any tenant (internal callers)
  uint64_t id = 0;
  uint64_t expected_version = 0;
  bool cascade = false;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, delete_task& x) {
  return f(caf::meta::type_name("aisched.delete_task"), field("tenant"), x.tenant,
           field("id"), x.id, field("expected_version"), x.expected_version,
           field("cascade"), x.cascade);
}

/// Pauses or resumes a task.
struct set_paused {
  static constexpr command_traits traits{"set_paused", fencing::none, 4};
  std::string tenant;
  uint64_t id = 0;
  bool paused = true;
  unix_ms at = 0;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, set_paused& x) {
  return f(caf::meta::type_name("aisched.set_paused"), field("tenant"), x.tenant, field("id"), x.id,
           field("paused"), x.paused, field("at"), x.at);
}

/// One slot of one task to fire: creates one pending instance per shard.
struct fire_slot {
  uint64_t task_id = 0;
  unix_ms slot = 0;
  std::string trace_id;
  std::string event_name;     // set when an event fired the slot
  std::string event_payload;  // the event's JSON payload (substituted at dispatch)
  /// A broadcast task's runs for this slot: one per matching online worker,
  /// set by the leader's router as it proposes the fire (router::broadcast_fanout;
  /// the trigger leaves it 0). 0: not decided, the slot creates the task's shards.
  uint32_t fanout = 0;
  bool scheduled = false;     // fired by the schedule or an event (counts toward max_runs),
                              // not by hand (trigger, backfill)
  /// A bulk enqueue (POST /api/v1/tasks/{id}/runs): one run per payload, run k
  /// taking shard k and payloads[k] as its event payload. Empty otherwise.
  std::vector<std::string> payloads;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fire_slot& x) {
  return f(caf::meta::type_name("aisched.fire_slot"), field("task_id"), x.task_id,
           field("slot"), x.slot, field("trace_id"), x.trace_id, field("event_name"), x.event_name,
           field("event_payload"), x.event_payload, field("fanout"), x.fanout,
           field("scheduled"), x.scheduled, field("payloads"), x.payloads);
}

/// How many runs slot `s` of a task of `task_shards` shards creates: one per
/// payload of a bulk enqueue, `s.fanout` when the leader's router decided
/// one (a broadcast task: one per matching worker), else one per shard of the task.
inline uint32_t runs_of(const fire_slot& s, uint32_t task_shards) {
  if (!s.payloads.empty()) return static_cast<uint32_t>(s.payloads.size());
  return s.fanout != 0 ? s.fanout : task_shards;
}

/// A batch of fires decided by the leader of `term` at time `at`. A slot that
/// already has instances is a no-op (deterministic ids).
struct fire {
  static constexpr command_traits traits{"fire", fencing::leader_term, 5};
  uint64_t term = 0;
  unix_ms at = 0;
  std::vector<fire_slot> slots;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fire& x) {
  return f(caf::meta::type_name("aisched.fire"), field("term"), x.term, field("at"), x.at,
           field("slots"), x.slots);
}

/// An instance handed to a worker: pending -> dispatched.
struct dispatch_entry {
  std::string instance_id;
  std::string worker_id;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, dispatch_entry& x) {
  return f(caf::meta::type_name("aisched.dispatch_entry"), field("instance_id"), x.instance_id,
           field("worker_id"), x.worker_id);
}

struct dispatch {
  static constexpr command_traits traits{"dispatch", fencing::leader_term, 6};
  uint64_t term = 0;
  unix_ms at = 0;
  std::vector<dispatch_entry> entries;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, dispatch& x) {
  return f(caf::meta::type_name("aisched.dispatch"), field("term"), x.term, field("at"), x.at,
           field("entries"), x.entries);
}

/// A fire whose runs the leader's router placed as it proposed it: fire and
/// dispatch folded into one command, so a run a free worker takes is written
/// once. Applies as `fire` of `slots` at `at`, except that each run `placed`
/// names is created dispatched to its worker at `at` (as `dispatch` would);
/// the others are created pending.
struct fire_placed {
  static constexpr command_traits traits{"fire_placed", fencing::leader_term, 28};
  uint64_t term = 0;
  unix_ms at = 0;
  std::vector<fire_slot> slots;
  std::vector<dispatch_entry> placed;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fire_placed& x) {
  return f(caf::meta::type_name("aisched.fire_placed"), field("term"), x.term, field("at"), x.at,
           field("slots"), x.slots, field("placed"), x.placed);
}

/// What became of a run: `state` is running, success, failed, timed_out or
/// retry_waiting (the leader decided another attempt is due at `next_attempt_at`).
struct run_result {
  std::string instance_id;
  std::string worker_id;
  uint32_t attempt = 0;  // the attempt reported on (0: not stated, e.g. an external worker)
  instance_state state = instance_state::success;
  int32_t exit_code = 0;
  std::string error;
  std::string output;
  unix_ms started_at = 0;
  unix_ms finished_at = 0;
  unix_ms next_attempt_at = 0;
  unknown_fields unknown{};  // fields of later builds (proto/field.hpp)
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, run_result& x) {
  return f(caf::meta::type_name("aisched.run_result"), field("instance_id"), x.instance_id,
           field("worker_id"), x.worker_id, field("attempt"), x.attempt, field("state"), x.state,
           field("exit_code"), x.exit_code, field("error"), x.error,
           bytes_field("output"), x.output, field("started_at"), x.started_at,
           field("finished_at"), x.finished_at, field("next_attempt_at"), x.next_attempt_at,
           keep_unknown(x.unknown));
}

struct report_results {
  static constexpr command_traits traits{"report_results", fencing::leader_term, 7};
  uint64_t term = 0;
  unix_ms at = 0;
  std::vector<run_result> results;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, report_results& x) {
  return f(caf::meta::type_name("aisched.report_results"), field("term"), x.term, field("at"), x.at,
           field("results"), x.results);
}

/// retry_waiting -> pending with the attempt counter incremented.
struct retry {
  static constexpr command_traits traits{"retry", fencing::leader_term, 8};
  uint64_t term = 0;
  unix_ms at = 0;
  std::vector<std::string> instance_ids;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, retry& x) {
  return f(caf::meta::type_name("aisched.retry"), field("term"), x.term, field("at"), x.at,
           field("instance_ids"), x.instance_ids);
}

/// Says why pending runs wait: no worker of their tenant matches their labels,
/// every matching worker is draining or offline. Leader-decided; a run that is
/// no longer pending is left alone. The reason shows as the run's `error`
/// until it is dispatched ("" clears it).
struct note_waiting {
  static constexpr command_traits traits{"note_waiting", fencing::leader_term, 17};
  uint64_t term = 0;
  std::vector<std::pair<std::string, std::string>> notes;  // instance id, reason
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, note_waiting& x) {
  return f(caf::meta::type_name("aisched.note_waiting"), field("term"), x.term,
           field("notes"), x.notes);
}

/// Cancels a run that has not finished.
struct cancel {
  static constexpr command_traits traits{"cancel", fencing::none, 9};
  std::string tenant;
  std::string instance_id;
  unix_ms at = 0;
  std::string reason;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cancel& x) {
  return f(caf::meta::type_name("aisched.cancel"), field("tenant"), x.tenant,
           field("instance_id"), x.instance_id, field("at"), x.at, field("reason"), x.reason);
}

/// Starts another attempt of a run that ended failed, timed_out or cancelled:
/// back to pending with the attempt counter incremented, under the same
/// instance id (the ended attempts stay in its history). Any other state is
/// illegal_transition. A client command (an operator's retry).
struct retry_instance {
  static constexpr command_traits traits{"retry_instance", fencing::none, 19};
  std::string tenant;
  std::string instance_id;
  unix_ms at = 0;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, retry_instance& x) {
  return f(caf::meta::type_name("aisched.retry_instance"), field("tenant"), x.tenant,
           field("instance_id"), x.instance_id, field("at"), x.at);
}

/// One round of worker load samples taken by the leader at `at`; samples
/// older than `prune_before` are dropped in the same batch (7 days kept).
struct record_load {
  static constexpr command_traits traits{"record_load", fencing::leader_term, 15};
  uint64_t term = 0;
  unix_ms at = 0;
  unix_ms prune_before = 0;
  std::vector<load_sample> samples;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, record_load& x) {
  return f(caf::meta::type_name("aisched.record_load"), field("term"), x.term, field("at"), x.at,
           field("prune_before"), x.prune_before, field("samples"), x.samples);
}

/// Removes finished runs that run-history retention lets go (actors/retention
/// decides which, from the leader's reading of the committed state). Each
/// instance listed that is still finished goes, with its entry in the state
/// index, its attempt history and its failure analysis; one that is not
/// (retried by hand since) stays. A later read of a removed run answers
/// `gone`. Leader-decided, so fenced like a fire.
struct prune_runs {
  static constexpr command_traits traits{"prune_runs", fencing::leader_term, 27};
  uint64_t term = 0;
  std::vector<std::string> instance_ids;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, prune_runs& x) {
  return f(caf::meta::type_name("aisched.prune_runs"), field("term"), x.term,
           field("instance_ids"), x.instance_ids);
}

/// Run records of task `task_id` adjacent in key order (slot, then shard),
/// from the one at (`from_slot`, `from_shard`) through the one at (`slot`,
/// `shard`): `runs` records, every one finished and let go by retention, as
/// the leader read them.
struct prune_span {
  uint64_t task_id = 0;
  unix_ms from_slot = 0;
  uint32_t from_shard = 0;
  unix_ms slot = 0;
  uint32_t shard = 0;
  uint64_t runs = 0;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, prune_span& x) {
  return f(caf::meta::type_name("aisched.prune_span"), field("task_id"), x.task_id,
           field("from_slot"), x.from_slot, field("from_shard"), x.from_shard,
           field("slot"), x.slot, field("shard"), x.shard, field("runs"), x.runs);
}

/// What `prune_runs` removes, with a task's oldest runs as spans: a span goes
/// as a whole (a range deletion of its records, their index entries and
/// attempt histories, instead of a read and two deletes a run) when the
/// state holds exactly `runs` records in it, all finished; otherwise it
/// stays whole (runs changed since the leader looked) for the next sweep.
/// Runs not at the start of their task go one by one (`instance_ids`), as in
/// prune_runs.
struct prune_history {
  static constexpr command_traits traits{"prune_history", fencing::leader_term, 29};
  uint64_t term = 0;
  std::vector<prune_span> spans;
  std::vector<std::string> instance_ids;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, prune_history& x) {
  return f(caf::meta::type_name("aisched.prune_history"), field("term"), x.term,
           field("spans"), x.spans, field("instance_ids"), x.instance_ids);
}

/// Where an AI record lives: the agent's conversations or the failure analyses.
enum class ai_column : uint8_t { conversations, analyses };
template <> struct enum_names<ai_column> {
  static constexpr std::string_view name = "ai_column";
  static constexpr std::array<std::string_view, 2> value{"conversations", "analyses"};
};

/// One record of the AI memory: a put of `value` at `key`, or its erasure.
/// Keys and values are those of actors/llm_agent/conversation_store and
/// actors/ai_features/analysis_actor (the state machine stores them as given).
struct ai_record {
  ai_column column = ai_column::conversations;
  std::string key;
  std::string value;
  bool erase = false;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ai_record& x) {
  return f(caf::meta::type_name("aisched.ai_record"), field("column"), x.column,
           field("key"), x.key, field("value"), x.value, field("erase"), x.erase);
}

/// Writes AI records in one batch: replicated, so conversations and analyses
/// survive the loss of the member that wrote them, and kept in snapshots.
struct put_ai_records {
  static constexpr command_traits traits{"put_ai_records", fencing::none, 20};
  std::vector<ai_record> records;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, put_ai_records& x) {
  return f(caf::meta::type_name("aisched.put_ai_records"), field("records"), x.records);
}

/// Does nothing; a new leader commits one to learn its commit index.
struct noop {
  static constexpr command_traits traits{"noop", fencing::none, 0};
  friend bool operator==(const noop&, const noop&) { return true; }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, noop&) {
  return f(caf::meta::type_name("aisched.noop"));
}

/// Creates user `u.name` (already_exists if the name is taken). With
/// `bootstrap`, creates it only while there are no users at all (the first
/// admin, proposed by every node that has an admin password: the first wins,
/// the others are no-ops).
struct put_user {
  static constexpr command_traits traits{"put_user", fencing::none, 10};
  user u;
  bool bootstrap = false;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, put_user& x) {
  return f(caf::meta::type_name("aisched.put_user"), field("u"), x.u,
           field("bootstrap"), x.bootstrap);
}

/// Deletes user `name` of `tenant` (not_found if it is in another tenant).
struct delete_user {
  static constexpr command_traits traits{"delete_user", fencing::none, 11};
  std::string tenant;
  std::string name;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, delete_user& x) {
  return f(caf::meta::type_name("aisched.delete_user"), field("tenant"), x.tenant,
           field("name"), x.name);
}

/// The cluster admin shares worker `worker_id` of `tenant` with every tenant
/// (`shared`), or takes that back. Kept so the mark survives the worker's
/// re-registration and a new leader; it holds only while the worker registers
/// from `tenant` (another tenant reusing the id gets no shared worker).
struct share_worker {
  static constexpr command_traits traits{"share_worker", fencing::none, 18};
  std::string tenant;
  std::string worker_id;
  bool shared = true;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, share_worker& x) {
  return f(caf::meta::type_name("aisched.share_worker"), field("tenant"), x.tenant,
           field("worker_id"), x.worker_id, field("shared"), x.shared);
}

/// Stores an API token (its secret's hash only).
struct put_token {
  static constexpr command_traits traits{"put_token", fencing::none, 12};
  api_token t;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, put_token& x) {
  return f(caf::meta::type_name("aisched.put_token"), field("t"), x.t);
}

/// Revokes token `id` of `tenant`.
struct delete_token {
  static constexpr command_traits traits{"delete_token", fencing::none, 13};
  std::string tenant;
  std::string id;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, delete_token& x) {
  return f(caf::meta::type_name("aisched.delete_token"), field("tenant"), x.tenant,
           field("id"), x.id);
}

/// Audit entries batched by one gateway (keyed by the log index, so replaying
/// the entry writes the same keys).
struct record_audit {
  static constexpr command_traits traits{"record_audit", fencing::none, 14};
  std::vector<audit_entry> entries;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, record_audit& x) {
  return f(caf::meta::type_name("aisched.record_audit"), field("entries"), x.entries);
}

/// Stores tenants' data keys (storage/secret_store). Without `rotate`, each
/// tenant must have none yet (already_exists otherwise: two gateways racing
/// to create a tenant's first key, the first wins). With `rotate`, each
/// tenant must have the key `id` already; its wrapping is replaced (a new
/// cluster key), the key itself and every value sealed under it stay.
struct put_data_keys {
  static constexpr command_traits traits{"put_data_keys", fencing::none, 21};
  std::vector<data_key> keys;
  bool rotate = false;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, put_data_keys& x) {
  return f(caf::meta::type_name("aisched.put_data_keys"), field("keys"), x.keys,
           field("rotate"), x.rotate);
}

/// Sets secret `s.name` of `s.tenant` to the value sealed in `s.sealed` (the
/// gateway sealed it before proposing: the log never holds it in clear).
/// conflict when `s.key_id` is not the tenant's data key; the state machine
/// assigns the version (one more than the value it replaces).
struct put_secret {
  static constexpr command_traits traits{"put_secret", fencing::none, 22};
  secret_record s;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, put_secret& x) {
  return f(caf::meta::type_name("aisched.put_secret"), field("s"), x.s);
}

/// Deletes secret `name` of `tenant` (not_found if there is none).
struct delete_secret {
  static constexpr command_traits traits{"delete_secret", fencing::none, 23};
  std::string tenant;
  std::string name;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, delete_secret& x) {
  return f(caf::meta::type_name("aisched.delete_secret"), field("tenant"), x.tenant,
           field("name"), x.name);
}

/// Creates or resizes pool `p.name` of `p.tenant` (an admin's command).
struct put_pool {
  static constexpr command_traits traits{"put_pool", fencing::none, 24};
  pool p;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, put_pool& x) {
  return f(caf::meta::type_name("aisched.put_pool"), field("p"), x.p);
}

/// Creates or replaces calendar `c.name` of `c.tenant` (an admin's command).
struct put_calendar {
  static constexpr command_traits traits{"put_calendar", fencing::none, 25};
  calendar c;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, put_calendar& x) {
  return f(caf::meta::type_name("aisched.put_calendar"), field("c"), x.c);
}

/// Deletes calendar `name` of `tenant`: not_found if there is none,
/// has_dependents (naming them) while a task excludes it.
struct delete_calendar {
  static constexpr command_traits traits{"delete_calendar", fencing::none, 26};
  std::string tenant;
  std::string name;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, delete_calendar& x) {
  return f(caf::meta::type_name("aisched.delete_calendar"), field("tenant"), x.tenant,
           field("name"), x.name);
}

/// Every command, in one list: what the state machine can apply and what a
/// raft entry's type number can name (proto/commands.cpp dispatches on it).
/// A new command is its struct above (with a new type number in its traits),
/// its place here, and its apply in storage/state_machine.cpp. The list has no
/// upper bound.
template <class... Ts>
struct command_list {};
using all_commands =
    command_list<noop, create_task, update_task, delete_task, set_paused, fire, dispatch,
                 report_results, retry, cancel, put_user, delete_user, put_token, delete_token,
                 record_audit, record_load, set_membership, note_waiting, share_worker,
                 retry_instance, put_ai_records, put_data_keys, put_secret, delete_secret, put_pool,
                 put_calendar, delete_calendar, prune_runs, fire_placed, prune_history>;

/// Whether T is a command: a struct with command_traits.
template <class T, class = void>
struct is_command : std::false_type {};
template <class T>
struct is_command<T, std::enable_if_t<std::is_same_v<
                         std::decay_t<decltype(T::traits)>, command_traits>>> : std::true_type {};

/// Whether T is one of the commands of list L.
template <class T, class L>
struct listed;
template <class T, class... Ts>
struct listed<T, command_list<Ts...>> : std::bool_constant<(std::is_same_v<T, Ts> || ...)> {};

/// The bytes of command `x` of type number `type` (proto/codec.hpp's encoding
/// of that struct; `x` points to it). Use to_command.
std::string encode_command_data(command_type type, const void* x);

/// Reads `data` as command type `type` into `out` (pointing to that struct);
/// false when the bytes are not the exact encoding of a valid one. Use command_as.
bool decode_command_data(command_type type, std::string_view data, void* out);

struct command;

/// The command holding `x`: its type number and its encoding.
template <class T>
command to_command(const T& x);

/// A replicated command as raft carries it: opaque to consensus and the log
/// (etcd's raftpb.Entry), a type number and the bytes of that command's
/// struct. Proposers make one from a command struct (implicitly, or with
/// to_command); the state machine reads it back with visit_command
/// (proto/command_visit.hpp), tests and the raft core with command_as.
struct command {
  command_type type = noop::traits.id;
  std::string data;

  command() = default;
  command(command_type t, std::string d) : type(t), data(std::move(d)) {}
  template <class T, std::enable_if_t<is_command<T>::value, int> = 0>
  command(const T& x) : command(to_command(x)) {}  // NOLINT: a command struct is a command

  friend bool operator==(const command& a, const command& b) {
    return a.type == b.type && a.data == b.data;
  }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, command& x) {
  return f(caf::meta::type_name("aisched.command"), field("type"), x.type, field("data"), x.data);
}

/// Whether `c` holds a T (its type number; the bytes are not read).
template <class T>
bool holds(const command& c) {
  return c.type == T::traits.id;
}

template <class T>
command to_command(const T& x) {
  static_assert(listed<T, all_commands>::value, "a command missing from proto::all_commands");
  return command{T::traits.id, encode_command_data(T::traits.id, &x)};
}

/// The T that `c` holds; nothing when it holds another command or its bytes
/// do not decode as a T.
template <class T>
std::optional<T> command_as(const command& c) {
  static_assert(listed<T, all_commands>::value, "a command missing from proto::all_commands");
  if (c.type != T::traits.id) return std::nullopt;
  T x;
  if (!decode_command_data(T::traits.id, c.data, &x)) return std::nullopt;
  return x;
}

/// One entry of the replicated log.
struct log_entry {
  uint64_t index = 0;
  uint64_t term = 0;
  command cmd;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, log_entry& x) {
  return f(caf::meta::type_name("aisched.log_entry"), field("index"), x.index,
           field("term"), x.term, field("cmd"), x.cmd);
}

/// What applying a command produced, returned to the proposer and told to
/// commit listeners: the tasks it created or changed (with their new version),
/// the ids of tasks it deleted, and the instances it created or changed.
/// `waiting_for` is the trigger actor's answer to a manual run held back for
/// its upstreams (nothing was proposed): the upstream task ids it waits for.
/// `pools` and `calendars` are the ones it put; `deleted_calendars` holds the
/// tenant and name of each calendar it deleted; `pruned` counts the runs a
/// prune_runs removed.
struct applied {
  uint64_t index = 0;
  std::vector<task> tasks;
  std::vector<uint64_t> deleted_tasks;
  std::vector<instance> instances;
  std::vector<uint64_t> waiting_for;
  std::vector<pool> pools;
  std::vector<calendar> calendars;
  std::vector<calendar> deleted_calendars;
  uint64_t pruned = 0;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, applied& x) {
  return f(caf::meta::type_name("aisched.applied"), field("index"), x.index,
           field("tasks"), x.tasks, field("deleted_tasks"), x.deleted_tasks,
           field("instances"), x.instances, field("waiting_for"), x.waiting_for,
           field("pools"), x.pools, field("calendars"), x.calendars,
           field("deleted_calendars"), x.deleted_calendars, field("pruned"), x.pruned);
}

/// Short name of the command's kind, for logs and metrics ("unknown" for a
/// type number this build does not know).
const char* command_name(const command& cmd);

/// The traits of command type `type`; nullptr when this build knows none.
const command_traits* traits_of(command_type type);

/// Whether `cmd` is a leader's decision (fencing::leader_term: fire, dispatch,
/// report_results, retry, record_load, note_waiting, ...): the state machine
/// rejects it when the term it carries is not its log entry's (fencing a
/// deposed leader), and a follower never forwards one.
bool fenced_by_leader(const command& cmd);

}  // namespace aisched::proto
