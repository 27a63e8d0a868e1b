// The typed actor interfaces: the only way aisched's actors know each other.
// Every message an actor accepts is listed here; registration of the message
// types with CAF is in proto/registry.hpp. See DESIGN §2 for who talks to whom.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "proto/commands.hpp"
#include "proto/field.hpp"
#include "proto/inspection.hpp"
#include "proto/types.hpp"

namespace aisched::proto {

// -- atoms (CAF 0.17: at most 10 characters) -----------------------------------

using propose_atom = caf::atom_constant<caf::atom("propose")>;
using raft_status_atom = caf::atom_constant<caf::atom("rstatus")>;
using change_members_atom = caf::atom_constant<caf::atom("chmembers")>;
using get_task_atom = caf::atom_constant<caf::atom("gettask")>;
using list_tasks_atom = caf::atom_constant<caf::atom("lsttasks")>;
using get_instance_atom = caf::atom_constant<caf::atom("getinst")>;
using list_instances_atom = caf::atom_constant<caf::atom("lstinst")>;
using leader_atom = caf::atom_constant<caf::atom("leader")>;
using committed_atom = caf::atom_constant<caf::atom("committed")>;
using pressure_atom = caf::atom_constant<caf::atom("pressure")>;
using execute_atom = caf::atom_constant<caf::atom("execute")>;
using cancel_run_atom = caf::atom_constant<caf::atom("cancelrun")>;
using report_atom = caf::atom_constant<caf::atom("report")>;
using subscribe_atom = caf::atom_constant<caf::atom("subscribe")>;
using flush_atom = caf::atom_constant<caf::atom("flush")>;
using scan_atom = caf::atom_constant<caf::atom("scan")>;
using wake_atom = caf::atom_constant<caf::atom("wake")>;
using trigger_now_atom = caf::atom_constant<caf::atom("trignow")>;
using enqueue_atom = caf::atom_constant<caf::atom("enqueue")>;
using started_atom = caf::atom_constant<caf::atom("runstart")>;
using done_atom = caf::atom_constant<caf::atom("rundone")>;
using register_atom = caf::atom_constant<caf::atom("register")>;
using heartbeat_atom = caf::atom_constant<caf::atom("heartbeat")>;
using list_workers_atom = caf::atom_constant<caf::atom("lstworkers")>;
using event_atom = caf::atom_constant<caf::atom("event")>;
using ack_atom = caf::atom_constant<caf::atom("ack")>;
using settle_atom = caf::atom_constant<caf::atom("settle")>;
using backfill_atom = caf::atom_constant<caf::atom("backfill")>;
using output_atom = caf::atom_constant<caf::atom("output")>;
using drain_atom = caf::atom_constant<caf::atom("drain")>;
using remove_atom = caf::atom_constant<caf::atom("remove")>;
using prune_scan_atom = caf::atom_constant<caf::atom("prunescan")>;
/// Worker sharing: the store answers which tenant a worker id is shared from ("": none);
/// the router applies a mark to the worker registered now.
using share_atom = caf::atom_constant<caf::atom("share")>;
using get_user_atom = caf::atom_constant<caf::atom("getuser")>;
using list_users_atom = caf::atom_constant<caf::atom("lstusers")>;
using get_token_atom = caf::atom_constant<caf::atom("gettoken")>;
using list_tokens_atom = caf::atom_constant<caf::atom("lsttokens")>;
using list_audit_atom = caf::atom_constant<caf::atom("lstaudit")>;
using load_history_atom = caf::atom_constant<caf::atom("loadhist")>;
using attempts_atom = caf::atom_constant<caf::atom("attempts")>;
using held_atom = caf::atom_constant<caf::atom("held")>;
using controls_atom = caf::atom_constant<caf::atom("controls")>;
using backup_done_atom = caf::atom_constant<caf::atom("bkdone")>;
using backup_failed_atom = caf::atom_constant<caf::atom("bkfailed")>;

// -- messages ------------------------------------------------------------------

/// How a raft member sees another member.
struct peer_status {
  std::string id;
  std::string address;  // its cluster address
  bool reachable = false;
  uint64_t match_index = 0;  // the leader's view of its log (0 on followers)
  bool voter = true;         // false: a learner (replicated to, does not vote)
  /// Why the link to it is refused ("" if it is not): it belongs to another
  /// cluster (its cluster id differs from ours).
  std::string refused;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, peer_status& x) {
  return f(caf::meta::type_name("aisched.peer_status"), field("id"), x.id,
           field("address"), x.address, field("reachable"), x.reachable,
           field("match_index"), x.match_index, field("voter"), x.voter,
           field("refused"), x.refused);
}

/// What the raft actor reports about itself (GET /api/v1/cluster).
struct raft_status {
  std::string node_id;
  std::string role;  // "leader" | "follower" | "candidate"
  std::string leader_id;
  uint64_t term = 0;
  uint64_t commit_index = 0;
  uint64_t applied_index = 0;
  uint64_t last_log_index = 0;
  std::vector<peer_status> peers;  // the other members
  std::string http_addr;           // this member's gateway (set by its endpoint; "" if none)
  bool voter = true;               // false: a learner, or not (or no longer) a member
  /// The id of the cluster this member's data belongs to, fixed when the group
  /// bootstrapped ("" while a joining member has not learned it yet).
  std::string cluster_id;
  std::string version;       // the build this member runs ("0.1.0")
  uint32_t data_format = 0;  // the data format it stores and speaks (storage::current_format)
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, raft_status& x) {
  return f(caf::meta::type_name("aisched.raft_status"), field("node_id"), x.node_id,
           field("role"), x.role, field("leader_id"), x.leader_id, field("term"), x.term,
           field("commit_index"), x.commit_index, field("applied_index"), x.applied_index,
           field("last_log_index"), x.last_log_index, field("peers"), x.peers,
           field("http_addr"), x.http_addr, field("voter"), x.voter,
           field("cluster_id"), x.cluster_id, field("version"), x.version,
           field("data_format"), x.data_format);
}

/// Tells leader-only actors (trigger, retry, router, backpressure) whether this
/// node leads. On `leading`, they rebuild their indexes from the store.
struct leadership {
  bool leading = false;
  uint64_t term = 0;
  std::string leader_id;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, leadership& x) {
  return f(caf::meta::type_name("aisched.leadership"), field("leading"), x.leading,
           field("term"), x.term, field("leader_id"), x.leader_id);
}

/// Backpressure level broadcast to trigger, retry and router.
enum class pressure_level : uint8_t { green, yellow, red };
struct pressure {
  pressure_level level = pressure_level::green;
  duration_ms delay = 0;  // yellow: how long to hold new fires
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pressure& x) {
  return f(caf::meta::type_name("aisched.pressure"), field("level"), x.level,
           field("delay"), x.delay);
}

/// A run handed to a worker. The worker dedups by `instance_id`.
struct execute_request {
  std::string instance_id;
  uint64_t task_id = 0;
  task_kind kind = task_kind::shell;
  std::string command;
  http_spec http;
  std::string image;
  uint32_t attempt = 1;
  uint32_t shard = 0;
  uint32_t shards = 1;
  std::string idempotency_key;
  std::string trace_id;
  duration_ms timeout = 0;
  uint32_t memory_mb = 0;  // 0: no cap
  /// Event placeholder values (AISCHED_EVENT_... -> value): `command` refers to them
  /// as shell variables, so a value is never parsed as shell code. The worker adds
  /// them to the run's environment.
  std::map<std::string, std::string> env;
  std::string tenant;  // whose run: the worker may run each tenant as its own OS user
  /// The values of the task's secrets (environment variable -> value), opened
  /// by the leader's router for this attempt only. In memory and on the wire
  /// (authenticated cluster link, external worker's channel) only: nobody
  /// persists a request, and the worker masks `redact` in all output.
  std::map<std::string, std::string> secret_env;
  /// Every secret value this request carries (in secret_env or filled into an
  /// HTTP task's headers and body): masked as *** in the run's output.
  std::vector<std::string> redact;
  /// A run placed ahead of its instant (the trigger's fire-ahead) waits for
  /// it on its worker: `not_before` is the instant, `hold_ms` the instant
  /// less the leader's clock when it was sent. The worker starts it when its
  /// own clock reaches the instant, but holds it at most `hold_ms` plus
  /// max_skew (actors/worker), so a slow clock cannot hold it long.
  /// `hold_ms` 0: start at once.
  unix_ms not_before = 0;
  duration_ms hold_ms = 0;
  /// The raft term of the leader whose router placed this attempt: a fencing
  /// token. A worker refuses a request of a term below the highest it has seen
  /// (errc::not_leader): a deposed leader that wakes up (SIGSTOP, a long GC
  /// pause, a partition) after its successor reached the worker cannot start an
  /// attempt the successor placed again elsewhere. 0: not fenced (a request
  /// made outside a leader's router).
  uint64_t leader_term = 0;
  /// The instant (the sender's clock) past which the proxy that sent it no
  /// longer waits for the answer: it then counts the attempt failed, and the
  /// leader retries it. A worker that reaches the request later than that
  /// (it was stopped: SIGSTOP, a paused VM) refuses it unstarted, so the
  /// attempt it gave up does not run beside the next one. 0: no limit.
  unix_ms answer_by = 0;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, execute_request& x) {
  return f(caf::meta::type_name("aisched.execute_request"), field("instance_id"), x.instance_id,
           field("task_id"), x.task_id, field("kind"), x.kind, field("command"), x.command,
           field("http"), x.http, field("image"), x.image, field("attempt"), x.attempt,
           field("shard"), x.shard, field("shards"), x.shards,
           field("idempotency_key"), x.idempotency_key, field("trace_id"), x.trace_id,
           field("timeout"), x.timeout, field("memory_mb"), x.memory_mb, field("env"), x.env,
           field("tenant"), x.tenant, field("secret_env"), x.secret_env, field("redact"), x.redact,
           field("not_before"), x.not_before, field("hold_ms"), x.hold_ms,
           field("leader_term"), x.leader_term, field("answer_by"), x.answer_by);
}

/// A page of tasks with their runtime facts, for a new leader's rebuild.
struct schedule_page {
  std::vector<task> tasks;
  std::vector<task_runtime> runtimes;  // runtimes[i] belongs to tasks[i]
  std::vector<instance> active;        // non-terminal instances (scan of instances only)
  std::string next_cursor;             // empty on the last page
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, schedule_page& x) {
  return f(caf::meta::type_name("aisched.schedule_page"), field("tasks"), x.tasks,
           field("runtimes"), x.runtimes, field("active"), x.active,
           field("next_cursor"), x.next_cursor);
}

/// Where the run-history retention sweep (actors/retention) goes on: after
/// task `after_task`, or, when `key` is set, inside task `after_task + 1` at
/// the first instance key not below `key`, the walk of that task having
/// looked at `index` records so far (removed ones included) against the
/// `excess` it computed when it began the task. A page that fills inside a
/// task so resumes where it stopped instead of walking the task again, over
/// what the previous pages removed (RocksDB tombstones, until compaction).
struct prune_cursor {
  uint64_t after_task = 0;
  std::string key;  // empty: begin task after_task + 1 (or the next one with runs)
  uint64_t index = 0;
  uint64_t excess = 0;
  bool in_span = false;  // every record the walk looked at in that task so far goes
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, prune_cursor& x) {
  return f(caf::meta::type_name("aisched.prune_cursor"), field("after_task"), x.after_task,
           field("key"), x.key, field("index"), x.index, field("excess"), x.excess,
           field("in_span"), x.in_span);
}

/// One page of the run-history retention sweep: which finished runs of the
/// tasks from `from` on retention lets go at `now`, `defaults` standing for
/// what a task's own policy leaves at 0. A page looks at `max_tasks` tasks
/// and names `limit` runs at most.
struct prune_query {
  prune_cursor from;
  unix_ms now = 0;
  retention_policy defaults;
  uint32_t limit = 500;
  uint32_t max_tasks = 1000;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, prune_query& x) {
  return f(caf::meta::type_name("aisched.prune_query"), field("from"), x.from, field("now"), x.now,
           field("defaults"), x.defaults, field("limit"), x.limit, field("max_tasks"), x.max_tasks);
}

/// A task's runs that go from its oldest on, as one span each; the others that
/// go, by id.
struct prune_page {
  std::vector<prune_span> spans;
  std::vector<std::string> instance_ids;
  prune_cursor next;  // the next page's `from`
  bool done = false;  // no task after the ones looked at has runs
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, prune_page& x) {
  return f(caf::meta::type_name("aisched.prune_page"), field("spans"), x.spans,
           field("instance_ids"), x.instance_ids, field("next"), x.next, field("done"), x.done);
}

// -- interfaces ----------------------------------------------------------------

/// Listeners of committed state (trigger, retry, router, backpressure): told of
/// leadership changes and of every applied command's effect.
using commit_listener_actor =
    caf::typed_actor<caf::reacts_to<leader_atom, leadership>,
                     caf::reacts_to<committed_atom, applied>>;

/// raft (actors/raft): every write goes through `propose`; the reply comes once
/// the command is committed and applied. Followers answer `not_leader`.
/// `subscribe` registers a commit listener (told the current leadership at once).
/// `flush` is internal: the actor sends it to itself to batch queued proposals.
using raft_actor = caf::typed_actor<caf::replies_to<propose_atom, command>::with<applied>,
                                    caf::replies_to<change_members_atom, membership_change>::with<applied>,
                                    caf::replies_to<raft_status_atom>::with<raft_status>,
                                    caf::reacts_to<subscribe_atom, commit_listener_actor>,
                                    caf::reacts_to<flush_atom>, inspect_signature>;

/// Worker load samples in [since, until] of one worker ("" = every worker),
/// oldest first, at most `limit` of them.
struct load_query {
  std::string worker_id;
  unix_ms since = 0;
  unix_ms until = 0;
  uint32_t limit = 50'000;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, load_query& x) {
  return f(caf::meta::type_name("aisched.load_query"), field("worker_id"), x.worker_id,
           field("since"), x.since, field("until"), x.until, field("limit"), x.limit);
}

struct load_history {
  std::vector<load_sample> items;
  bool truncated = false;  // more samples matched than `limit`
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, load_history& x) {
  return f(caf::meta::type_name("aisched.load_history"), field("items"), x.items,
           field("truncated"), x.truncated);
}

/// store (storage/store_actor): reads of the applied state.
/// Tenant "" reads across tenants (internal callers only). Users are found by
/// name, tokens by the hex SHA-256 of their secret.
using store_actor = caf::typed_actor<
    caf::replies_to<get_user_atom, std::string>::with<user>,
    caf::replies_to<list_users_atom, std::string>::with<user_list>,
    caf::replies_to<get_token_atom, std::string>::with<api_token>,
    caf::replies_to<share_atom, std::string>::with<std::string>,
    caf::replies_to<controls_atom, std::string>::with<controls>,
    caf::replies_to<list_tokens_atom, std::string>::with<token_list>,
    caf::replies_to<list_audit_atom, audit_query>::with<audit_page>,
    caf::replies_to<get_task_atom, std::string, uint64_t>::with<task>,
    caf::replies_to<list_tasks_atom, task_query>::with<task_page>,
    caf::replies_to<get_instance_atom, std::string, std::string>::with<instance>,
    caf::replies_to<list_instances_atom, instance_query>::with<instance_page>,
    caf::replies_to<attempts_atom, std::string, std::string>::with<attempt_list>,
    caf::replies_to<scan_atom, task_query>::with<schedule_page>,
    caf::replies_to<scan_atom, instance_query>::with<schedule_page>,
    caf::replies_to<load_history_atom, load_query>::with<load_history>,
    caf::replies_to<prune_scan_atom, prune_query>::with<prune_page>, inspect_signature>;

/// What the trigger proposes its fires through: the leader's router, which
/// decides each broadcast slot's fanout, places the runs a fire creates on
/// free workers in the same command (fire_placed) and answers with the
/// commit. Without one (tests of the trigger alone) the trigger proposes to
/// raft, and a broadcast slot creates its task's shards (fanout 0).
using fire_proposer_actor = caf::typed_actor<caf::replies_to<propose_atom, fire>::with<applied>>;

/// trigger (actors/trigger): fires due slots on the leader. `trigger_now` fires a
/// manual slot (subject to the overlap policy) and answers once it is committed;
/// `event` (tenant, name, JSON payload) fires every subscriber once; `backfill`
/// (tenant, task, from, to) fires the schedule's slots in that range;
/// `enqueue` (tenant, task, JSON payloads) fires one slot with one run per
/// payload (a bulk enqueue) and answers once it is committed;
/// `subscribe` names the proposer of its fires (the router);
/// `wake` (with a timer generation) and the schedule_page replies are internal.
using trigger_actor = commit_listener_actor::extend<
    caf::reacts_to<pressure_atom, pressure>,
    caf::reacts_to<subscribe_atom, fire_proposer_actor>,
    caf::replies_to<trigger_now_atom, std::string, uint64_t>::with<applied>,
    caf::replies_to<event_atom, std::string, std::string, std::string>::with<applied>,
    caf::replies_to<backfill_atom, std::string, uint64_t, unix_ms, unix_ms>::with<applied>,
    caf::replies_to<enqueue_atom, std::string, uint64_t, std::vector<std::string>>::with<applied>,
    caf::reacts_to<wake_atom, uint64_t>, inspect_signature>;

/// `not_taken`: the runs a native worker refused to take, each as the refusal
/// its proxy would have reported (instance, worker, attempt, why). They never
/// started there, so the router places each again as the same attempt
/// (issue 41 item 3). A proxy sends them to its router (not_taken_sink).
using not_taken_atom = caf::atom_constant<caf::atom("nottaken")>;
/// `unanswered`: the worker (its id) left a dispatch unanswered for its
/// proxy's request timeout: stopped (SIGSTOP, a paused VM), hung, or cut off.
/// The router places nothing new there until it hears from it again (its
/// next heartbeat): a stopped worker holds no slot for what it swallowed, and
/// would otherwise draw each retry of it (issue 45, worker_freeze).
using unanswered_atom = caf::atom_constant<caf::atom("unanswered")>;
using not_taken_sink =
    caf::typed_actor<caf::reacts_to<not_taken_atom, std::vector<run_result>>,
                     caf::reacts_to<unanswered_atom, std::string>>;

/// worker_proxy (actors/worker_proxy): the leader's handle on one worker, and
/// the one proposer of that worker's reports. The router hands it `execute` and
/// `cancel_run`; a native worker sends it `report`s, which it batches into
/// committed `report_results`. `report` with `settle` is an external worker's
/// report, already verified by the router: proposed on its own, it answers
/// with the commit or the error the state machine gave. `flush`, `wake` (an
/// http proxy's run held for its instant is due) and `(execute, flush)` (a
/// native proxy sends the runs handed to it meanwhile in one message) are
/// internal.
using worker_proxy_actor = caf::typed_actor<caf::reacts_to<report_atom, run_result>,
                                            caf::replies_to<report_atom, run_result,
                                                            settle_atom>::with<applied>,
                                            caf::reacts_to<execute_atom, execute_request>,
                                            caf::reacts_to<cancel_run_atom, std::string>,
                                            caf::reacts_to<wake_atom, std::string, unix_ms>,
                                            caf::reacts_to<execute_atom, flush_atom>,
                                            caf::reacts_to<flush_atom>>;

/// worker (actors/worker): runs instances. `execute` answers true once accepted
/// (a duplicate delivery too; it runs once); reports go to the given proxy.
/// `execute` with several requests (what a proxy sends) takes each the same
/// way and answers one string per run: "" where taken, else why not.
/// `runstart` / `rundone` are internal: the run threads tell the actor; so is
/// `wake` (the runs held for an instant, execute_request::hold_ms, are due).
/// `ack` (run keys "{instance}#{attempt}") confirms final reports are committed;
/// until then the worker keeps them in its outbox and re-sends them through the
/// router it was given (`subscribe`), surviving proxy and worker restarts.
/// `tick` drives that re-send loop.
/// Live output: the run threads send `output` chunks; `output` with an
/// instance id and a follower answers true when an attempt of it runs here,
/// then sends the follower `(output, instance_id, chunk)` messages (what was
/// written so far first) and `(done, instance_id)` when the run ends.
/// `drain` answers how many runs are in progress or not yet acknowledged here.
/// `held` answers the runs held here (executing, or final and unacknowledged):
/// the registrar sends them with each registration (proto::worker::held),
/// and why the worker's outbox failed ("" while it works): a faulted worker
/// registers with max_load 0 and answers `execute` with storage_error. Its
/// arguments are the term and cluster id of the leader the registrar registers
/// with: from then on the worker refuses an `execute` of an older term
/// (execute_request::leader_term), so a run a deposed leader places late is
/// never started after its successor read what the worker holds. Another
/// cluster id (a group recovered from a lost quorum, or bootstrapped again)
/// starts the count again at its leader's term.
using worker_actor = caf::typed_actor<
    caf::replies_to<execute_atom, execute_request, worker_proxy_actor>::with<bool>,
    caf::replies_to<execute_atom, std::vector<execute_request>,
                    worker_proxy_actor>::with<std::vector<std::string>>,
    caf::reacts_to<cancel_run_atom, std::string>,
    caf::reacts_to<started_atom, std::string, uint32_t, unix_ms>,
    caf::reacts_to<wake_atom, unix_ms>,
    caf::reacts_to<flush_atom>,
    caf::reacts_to<done_atom, run_result, uint32_t>,
    caf::reacts_to<ack_atom, std::vector<std::string>>,
    caf::reacts_to<subscribe_atom, caf::actor>,
    caf::reacts_to<output_atom, std::string, uint32_t, std::string>,
    caf::replies_to<output_atom, std::string, caf::actor>::with<bool>,
    caf::replies_to<drain_atom>::with<uint32_t>,
    caf::replies_to<held_atom, uint64_t, std::string>::with<std::vector<held_run>, std::string>,
    caf::reacts_to<caf::tick_atom>, inspect_signature>;

/// The registered workers, for GET /api/v1/workers.
struct worker_list {
  std::vector<worker> items;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_list& x) {
  return f(caf::meta::type_name("aisched.worker_list"), field("items"), x.items);
}

/// router (actors/router): the leader's worker registry; dispatches pending
/// instances to workers by labels, strategy and capacity. Native workers
/// register with their actor handle (and are monitored); external HTTP workers
/// register over REST and keep themselves online with heartbeats (the reply is
/// false for an unknown worker, which then registers again). Registering an
/// external worker issues its credential (in the reply only); its heartbeats
/// and its reports (`report` with the credential, answered with what the
/// commit changed) must carry it, and a report counts only for the attempt
/// dispatched to that worker. Workers serve their own tenant's runs, or every
/// tenant's when `shared`. `drain` (true)
/// stops new dispatches to a worker while its runs finish, (false) takes it
/// back; `remove` forgets a worker. `output` subscribes a follower to the live
/// output of a running instance (see worker_actor; false: not running on a
/// native worker here). `propose` with a fire commits it, first deciding how
/// many runs each slot of a broadcast task creates (one per matching online
/// worker, fire_slot::fanout), and places the runs it creates when workers are
/// free and no run waits (fire_proposer_actor). `not_taken` (from its worker
/// proxies) places again runs a worker refused; `unanswered` (from them too)
/// takes a worker that left a dispatch unanswered offline until its next
/// heartbeat. `tick` is internal.
using router_actor = commit_listener_actor::extend<
    caf::reacts_to<not_taken_atom, std::vector<run_result>>,
    caf::reacts_to<unanswered_atom, std::string>,
    caf::reacts_to<pressure_atom, pressure>,
    caf::replies_to<propose_atom, fire>::with<applied>,
    caf::reacts_to<register_atom, worker, worker_actor>,
    caf::replies_to<register_atom, worker>::with<worker>,
    caf::replies_to<heartbeat_atom, worker_heartbeat>::with<bool>,
    caf::reacts_to<report_atom, run_result>,
    caf::replies_to<report_atom, run_result, std::string>::with<applied>,
    caf::replies_to<list_workers_atom>::with<worker_list>,
    caf::replies_to<drain_atom, std::string, bool>::with<worker>,
    caf::replies_to<share_atom, std::string, std::string, bool>::with<bool>,
    caf::replies_to<remove_atom, std::string>::with<bool>,
    caf::replies_to<output_atom, std::string, caf::actor>::with<bool>,
    caf::reacts_to<wake_atom, uint64_t>,
    caf::reacts_to<caf::tick_atom>, inspect_signature>;

using handles_atom = caf::atom_constant<caf::atom("handles")>;

using trigger_atom = caf::atom_constant<caf::atom("trigger")>;

/// endpoint (actors/endpoint): published on a scheduler node's cluster port;
/// how other nodes (worker nodes, CLI tools, other members' gateways) find the
/// node's actors. `handles` answers with the router and the raft actor
/// (untyped here: its full interface lives in actors/raft; members cast it to
/// raft::node_actor); `trigger` with the trigger, so a follower's gateway can
/// hand manual runs, events and backfills to the leader's; `rstatus` with the
/// member's raft status including its HTTP address; `inspector` with the
/// node's inspector. Worker nodes publish one too, for `inspector` only
/// (`handles`, `trigger` and `rstatus` are errors there).
using endpoint_actor =
    caf::typed_actor<caf::replies_to<handles_atom>::with<router_actor, caf::actor>,
                     caf::replies_to<trigger_atom>::with<trigger_actor>,
                     caf::replies_to<raft_status_atom>::with<raft_status>,
                     caf::replies_to<inspector_atom>::with<inspector_actor>, inspect_signature>;

/// What GET /api/v1/backpressure shows.
struct pressure_status {
  pressure current;
  uint64_t backlog = 0;
  uint64_t max_backlog = 0;
  double worker_load = 0;
  bool leading = false;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pressure_status& x) {
  return f(caf::meta::type_name("aisched.pressure_status"), field("current"), x.current,
           field("backlog"), x.backlog, field("max_backlog"), x.max_backlog,
           save_finite(x.worker_load), field("worker_load"), x.worker_load,
           load_finite(x.worker_load), field("leading"), x.leading);
}

using pressure_status_atom = caf::atom_constant<caf::atom("pstatus")>;

/// backpressure (actors/backpressure): leader only; computes the level from the
/// backlog and worker load and tells the trigger and router. `tick` is internal.
using backpressure_actor = commit_listener_actor::extend<
    caf::replies_to<pressure_status_atom>::with<pressure_status>, caf::reacts_to<caf::tick_atom>,
    inspect_signature>;

/// load sampler (actors/load_sampler): on the leader, every sample interval,
/// reads each worker's load from the router and commits one `record_load`.
/// `tick` is internal.
using load_sampler_actor =
    commit_listener_actor::extend<caf::reacts_to<caf::tick_atom>, inspect_signature>;

/// retention (actors/retention): on the leader, sweeps the finished runs
/// run-history retention lets go and commits their removal (`prune_history`).
/// `tick` is internal.
using retention_actor = caf::typed_actor<caf::reacts_to<caf::tick_atom>, inspect_signature>;

/// alerter (actors/alerter): on the leader, POSTs a run_failed alert to the
/// configured webhooks for every run committed as finally failed, and a
/// backup_failed alert when the backup actor says so (`bkfailed`: the last
/// error, the backup directory, the failures in a row, when the last one
/// failed and when a backup last succeeded, 0 if never). Internal: `ack`
/// (delivery id, delivered) from the HTTP threads, `wake` (delivery id) when a
/// retry is due.
using alerter_actor = commit_listener_actor::extend<
    caf::reacts_to<backup_failed_atom, std::string, std::string, uint64_t, unix_ms, unix_ms>,
    caf::reacts_to<ack_atom, uint64_t, bool>, caf::reacts_to<wake_atom, uint64_t>,
    inspect_signature>;

/// backup (actors/backup): on the leader, every backup interval, writes a
/// backup file into the backup directory and rotates it. Internal: `tick`, and
/// `bkdone` (round, the file written or "", its index, the error or "") from
/// the thread that writes the files.
using backup_actor = caf::typed_actor<
    caf::reacts_to<caf::tick_atom>,
    caf::reacts_to<backup_done_atom, uint64_t, std::string, uint64_t, std::string>,
    inspect_signature>;

/// retry (actors/retry): re-proposes retry_waiting instances at their deadline
/// and turns dispatched runs past their deadline into timed_out results.
using retry_actor =
    commit_listener_actor::extend<caf::reacts_to<wake_atom, uint64_t>, inspect_signature>;

}  // namespace aisched::proto
