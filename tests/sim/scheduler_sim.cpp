// The scheduler simulation; see scheduler_sim.hpp.
#include "tests/sim/scheduler_sim.hpp"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <iterator>
#include <regex>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/endpoint/endpoint_actor.hpp"
#include "actors/retention/retention_actor.hpp"
#include "actors/store/store_actor.hpp"
#include "actors/worker/registrar_actor.hpp"
#include "actors/worker/worker_actor.hpp"
#include "common/log.hpp"
#include "proto/time.hpp"
#include "tests/sim/worker_link.hpp"
#include "proto/validate.hpp"
#include "storage/state_machine.hpp"

namespace aisched::sim {

namespace {

constexpr unix_ms start_unix = 1'767'225'600'000;  // 2026-01-01T00:00:00Z

// The node's defaults (runtime/config.hpp) where the node sets them.
constexpr duration_ms fire_ahead = 250;
constexpr duration_ms worker_offline_after = 30'000;
constexpr duration_ms worker_dead_after = 45'000;
constexpr uint32_t worker_slots = 16;

// The overlap checks look at the runs active from decided_ahead before a slot.
static_assert(fire_ahead < timeline::decided_ahead);

/// A commit listener that hands every committed change of one member to the
/// history, with the instant the member applied it.
proto::commit_listener_actor::behavior_type recorder(proto::commit_listener_actor::pointer self,
                                                     std::shared_ptr<history> h,
                                                     std::string member, wall_clock clock) {
  return {
      [](proto::leader_atom, const proto::leadership&) {},
      [=](proto::committed_atom, const proto::applied& a) {
        h->record(member, a, clock.now(self->clock()));
      },
  };
}

/// FNV-1a over what the history committed, trace ids aside (they are random
/// by design: proto/random.hpp).
uint64_t fingerprint(const history& h) {
  uint64_t f = 0xcbf29ce484222325ULL;
  auto add = [&](const std::string& s) {
    for (unsigned char c : s) {
      f ^= c;
      f *= 0x100000001b3ULL;
    }
    f ^= 0xff;  // a separator: "ab","c" and "a","bc" differ
    f *= 0x100000001b3ULL;
  };
  for (auto& [index, changes] : h.commits) {
    add(std::to_string(index));
    for (auto& x : changes) {
      add(x.id);
      add(std::string(proto::name_of(x.state)));
      add(std::to_string(x.attempt));
      add(x.worker_id);
      add(std::to_string(x.started_at));
      add(std::to_string(x.finished_at));
      add(std::to_string(x.exit_code));
    }
  }
  return f;
}

}  // namespace

void execution_log::record(const std::string& worker_id, const worker::sim_run_event& e) {
  using kind = worker::sim_run_event::kind;
  if (e.what == kind::started) {
    open[e.run] = items.size();
    items.push_back(execution{worker_id, e.instance_id, e.attempt, e.at, 0, false});
    return;
  }
  auto i = open.find(e.run);
  if (i == open.end()) return;  // started before the observer was set: none is
  auto& x = items[i->second];
  x.ended = e.at;
  x.reported = e.what == kind::ended;
  open.erase(i);
}

// -- setup and teardown ----------------------------------------------------------

scheduler_sim::scheduler_sim(scheduler_sim_options opts)
    : opts_(opts),
      rng_(opts.seed),
      more_(~opts.seed),
      fault_rng_(opts.seed ^ 0x6661756c7473ULL),  // "faults"
      overlap_rng_(opts.seed ^ 0x6f7665726c6170ULL),  // "overlap"
      // Value-initialised: every disk works (fault_kind::none).
      disk_faults_(std::make_shared<std::vector<std::atomic<storage::fault_kind>>>(opts.members)),
      outbox_faults_(std::make_shared<std::vector<bool>>(opts.members, false)),
      worker_cuts_(std::make_shared<std::vector<bool>>(opts.members, false)),
      group_(opts.members, 10'000, 1 + opts.seed * 16,  // raft seeds: never 0 (random)
             [faults = disk_faults_](size_t i) { return faults->at(i).load(); }),
      clock_(wall_clock::simulated(start_unix, group_.sched.clock().now())),
      endpoints_(std::make_shared<std::map<std::string, proto::endpoint_actor>>()),
      history_(std::make_shared<history>()),
      deaths_(std::make_shared<std::vector<std::string>>()),
      executions_(std::make_shared<execution_log>()),
      durations_(std::make_shared<std::map<uint64_t, worker::duration_range>>()) {
  log::set_level(log::level::error);  // not a line per run or per failed attempt
  span_ = timeline::span_of(opts_.rounds);
  group_.set_latency(std::chrono::milliseconds(timeline::link_latency));
  nodes_.resize(opts_.members);
  for (size_t i = 0; i < opts_.members; ++i) {
    recorders_.push_back(group_.sys.spawn(recorder, history_, group_.at(i).id, clock_));
    spawn_node(i);
  }
  group_.sched.run();
}

scheduler_sim::~scheduler_sim() {
  // The coordinator fixture's destructor fires every pending timer until none
  // is left: every actor that ticks must be gone first.
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (group_.at(i).raft) stop_member(i);  // one whose raft ended too
  for (auto& r : recorders_) caf::anon_send_exit(r, caf::exit_reason::kill);
  group_.sched.run();
}

std::vector<caf::actor> scheduler_sim::node::actors() const {
  return {caf::actor_cast<caf::actor>(store),
          caf::actor_cast<caf::actor>(leading.trigger),
          caf::actor_cast<caf::actor>(leading.retrier),
          caf::actor_cast<caf::actor>(leading.router),
          caf::actor_cast<caf::actor>(leading.pressure),
          caf::actor_cast<caf::actor>(endpoint),
          caf::actor_cast<caf::actor>(keeper),
          caf::actor_cast<caf::actor>(worker),
          caf::actor_cast<caf::actor>(link),
          registrar};
}

/// Spawns member `i`'s actors beside its (just spawned, not yet run) raft
/// actor, as runtime/scheduler_node.cpp does; the recorder listens first.
void scheduler_sim::spawn_node(size_t i) {
  auto& sys = group_.sys;
  auto& m = group_.at(i);
  auto raft = caf::actor_cast<proto::raft_actor>(m.raft);
  auto& n = nodes_.at(i);
  n = node{};
  caf::anon_send(raft, proto::subscribe_atom::value, recorders_.at(i));
  // Spawned scheduled, not detached as in the node: detached actors run on
  // threads of their own, outside the test coordinator.
  n.store = sys.spawn(storage::store_actor_impl, m.db,
                      std::shared_ptr<const storage::state_machine>(m.sm));
  runtime::scheduling_options leading;
  leading.clock = clock_;
  leading.fire_ahead = fire_ahead;
  leading.router.heartbeat_timeout = worker_offline_after;
  leading.router.dispatch_rate = 0;  // the node's default: unlimited
  leading.router.dispatch_burst = 0;
  leading.router.dead_after = worker_dead_after;  // no HTTP workers: no http_pool
  n.leading = runtime::spawn_scheduling(sys, raft, n.store, std::move(leading));
  n.endpoint = sys.spawn(endpoint::endpoint_actor_impl, n.leading.router,
                         caf::actor_cast<caf::actor>(m.raft), n.leading.trigger, std::string{},
                         proto::inspector_actor{});
  (*endpoints_)[test::raft_group::address(i)] = n.endpoint;
  retention::retention_options keeping;  // the node's defaults: a sweep every 10 s
  keeping.clock = clock_;
  n.keeper = sys.spawn(retention::retention_actor_impl, raft, n.store, keeping);
  spawn_worker(i);
  // Crash-only, as the node's supervision: an actor that ends on its own
  // leaves a member that answers but cannot schedule. Killed (stop_member,
  // kill_worker) is a crash of the process, not that.
  static const char* const names[] = {"store",        "trigger",  "retry",    "router",
                                      "backpressure", "endpoint", "retention"};
  auto actors = n.actors();
  for (size_t k = 0; k < std::size(names); ++k) watch(actors[k], m.id + "'s " + names[k]);
}

void scheduler_sim::watch(const caf::actor& a, std::string what) {
  a->attach_functor([deaths = deaths_, what = std::move(what)](const caf::error& reason) {
    if (reason != caf::make_error(caf::exit_reason::kill))
      deaths->push_back(what + " terminated on its own: " +
                        (reason ? caf::to_string(reason) : std::string("normal exit")));
  });
}

/// Spawns member `i`'s built-in worker and its registrar, the worker's runs
/// simulated; its outbox in the member's directory, as the node keeps it in
/// its data directory (a restarted worker finds what it had not reported).
void scheduler_sim::spawn_worker(size_t i) {
  auto& sys = group_.sys;
  auto& m = group_.at(i);
  auto& n = nodes_.at(i);
  worker::sim_options runs;
  runs.seed = opts_.seed;
  runs.min_duration = 100;
  runs.max_duration = 4'000;
  runs.failure_permille = 100;
  runs.observer = [log = executions_, id = m.id](const worker::sim_run_event& e) {
    log->record(id, e);
  };
  runs.durations_of = [d = durations_](uint64_t task) -> std::optional<worker::duration_range> {
    auto it = d->find(task);
    if (it == d->end()) return std::nullopt;
    return it->second;
  };
  n.exec = std::make_shared<worker::sim_executor>(runs);
  worker::worker_config wcfg;
  wcfg.id = m.id;
  wcfg.outbox_dir = m.dir + "/worker-outbox";
  wcfg.outbox_opts.fail_writes = [faults = outbox_faults_, i]() -> bool { return faults->at(i); };
  wcfg.clock = clock_;
  n.worker = sys.spawn(worker::worker_actor_impl, wcfg, n.exec);
  worker::registrar_options reg;
  reg.seeds.push_back(test::raft_group::address(i));
  for (size_t j = 0; j < nodes_.size(); ++j)
    if (j != i) reg.seeds.push_back(test::raft_group::address(j));
  reg.own_endpoint = n.endpoint;
  reg.info.id = m.id;
  reg.info.protocol = proto::worker_protocol::native;
  reg.info.address = reg.seeds.front();
  reg.info.max_load = worker_slots;
  auto registrar = std::make_shared<caf::actor_addr>();
  n.link = spawn_worker_link(
      sys, n.worker, [cuts = worker_cuts_, i] { return cuts->at(i); }, registrar);
  reg.worker = n.link;  // the handle it registers; its own messages always pass
  std::weak_ptr<std::map<std::string, proto::endpoint_actor>> dir = endpoints_;
  reg.resolve_member = [dir](const std::string& address) -> proto::endpoint_actor {
    auto d = dir.lock();
    if (!d) return {};
    auto it = d->find(address);
    return it == d->end() ? proto::endpoint_actor{} : it->second;
  };
  n.registrar = sys.spawn(worker::registrar_actor_impl, std::move(reg));
  *registrar = n.registrar.address();
  watch(caf::actor_cast<caf::actor>(n.worker), m.id + "'s worker");
  watch(n.registrar, m.id + "'s registrar");
}

// -- driving -------------------------------------------------------------------

unix_ms scheduler_sim::now() const { return clock_.now(group_.sched.clock()); }

std::string scheduler_sim::at_text(unix_ms t) const {
  auto d = t - (t0_ != 0 ? t0_ : start_unix);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.3fs", static_cast<double>(d) / 1000.0);
  return buf;
}

void scheduler_sim::trace(const char* fmt, ...) {
  char line[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(line, sizeof line, fmt, args);
  va_end(args);
  events_.push_back({now(), line});  // for explain(), at the end
  if (opts_.trace == nullptr) return;
  std::fprintf(opts_.trace, "[seed %llu %s] %s\n", static_cast<unsigned long long>(opts_.seed),
               at_text(now()).c_str(), line);
}

std::string scheduler_sim::explain(const std::string& violation) const {
  // The run it names (task-slot-n), if any: its commits, its executions, and
  // the workload's and faults' events from a minute before its first commit
  // to its last.
  static const std::regex run_id(R"(\b\d+-\d{12,}-\d+\b)");
  std::smatch m;
  if (!std::regex_search(violation, m, run_id)) return "";
  auto id = m.str();
  std::string out = "  the first violation's run " + id + ", as committed (log index, applied):\n";
  unix_ms first = 0, last = 0;
  for (auto& [index, xs] : history_->commits)
    for (auto& x : xs) {
      if (x.id != id) continue;
      auto at = history_->applied_at.count(index) ? history_->applied_at.at(index) : 0;
      if (first == 0) first = at;
      last = std::max(last, at);
      out += "    #" + std::to_string(index) + " " + at_text(at) + " " + describe(x) +
             (x.worker_id.empty() ? "" : " on " + x.worker_id) + "\n";
    }
  out += "  its executions:\n";
  for (auto& e : executions_->items)
    if (e.instance_id == id)
      out += "    attempt " + std::to_string(e.attempt) + " on " + e.worker + " [" +
             at_text(e.started) + ", " + (e.ended ? at_text(e.ended) : "never") + "]" +
             (e.reported ? "" : " unreported") + "\n";
  out += "  the workload and faults meanwhile:\n";
  for (auto& [at, text] : events_)
    if (first != 0 && at >= first - 60'000 && at <= last + 5'000)
      out += "    " + at_text(at) + " " + text + "\n";
  return out;
}

void scheduler_sim::run_to(unix_ms t) {
  if (auto left = t - now(); left > 0) group_.run_for(std::chrono::milliseconds(left));
}

void scheduler_sim::advance_to(unix_ms t) {
  while (!actions_.empty() && actions_.front().at <= t) {
    auto a = std::move(actions_.front());
    actions_.erase(actions_.begin());
    run_to(a.at);
    a.run();
  }
  run_to(t);
}

template <class T, class Handle, class... Ts>
caf::expected<T> scheduler_sim::ask(duration_ms limit, const Handle& to, Ts... xs) {
  // A client actor of its own, not the fixture's scoped actor: an answer that
  // comes late lands in the client, not in a mailbox the next question reads.
  auto answer = std::make_shared<std::optional<caf::expected<T>>>();
  auto timeout = std::chrono::milliseconds(limit);
  group_.sys.spawn([=](caf::event_based_actor* self) {
    self->request(to, timeout, xs...)
        .then([=](T& x) { *answer = caf::expected<T>{std::move(x)}; },
              [=](caf::error& e) { *answer = caf::expected<T>{std::move(e)}; });
  });
  group_.run_until([&] { return answer->has_value(); }, timeout);
  if (!answer->has_value()) return caf::make_error(caf::sec::request_timeout);
  return std::move(**answer);
}

bool scheduler_sim::setup() {
  using namespace std::chrono_literals;
  if (group_.run_until([&] { return group_.agreed_leader() >= 0; }, 10s).count() < 0) {
    violations_.push_back("setup: no agreed leader within 10 s");
    return false;
  }
  // Every worker registered with the leader's router, and online.
  for (int tries = 0; tries < 20; ++tries) {
    auto leader = group_.agreed_leader();
    if (leader >= 0) {
      auto list = ask<proto::worker_list>(1'000, nodes_.at(leader).leading.router,
                                          proto::list_workers_atom::value);
      if (list && std::count_if(list->items.begin(), list->items.end(), [](auto& w) {
                    return w.status == proto::worker_status::online;
                  }) == static_cast<long>(nodes_.size())) {
        t0_ = now();
        trace("setup: %s leads, %zu workers online", group_.at(leader).id.c_str(), nodes_.size());
        return true;
      }
    }
    group_.run_for(std::chrono::milliseconds(500));
  }
  violations_.push_back("setup: the workers did not all register with the leader within 10 s");
  return false;
}

// -- workload ------------------------------------------------------------------

bool scheduler_sim::create_workload() {
  auto plan = plan_workload(rng_, more_, t0_, t0_ + span_.workload_end);
  for (auto& p : plan.tasks) {
    // The pool just before its first task (the tasks of the first draws are
    // created as they were before pools came).
    if (!p.def.pool.empty() && pools_.count(p.def.pool) == 0 && !put_pool(plan.pool)) return false;
    if (!create_task(std::move(p))) return false;
  }
  // The bulk enqueue of the queue task, at an instant before the faults, the
  // cancel of one of its runs, then the backlog on the pool.
  run_to(plan.bulk.at);
  auto& bulk = tasks_.at(plan.bulk.task);
  enqueue_bulk(bulk, plan.bulk.payloads);
  if (!bulk.enqueued.empty()) {
    run_to(now() + plan.cancel_after);
    cancel_run(bulk, bulk.enqueued[plan.cancel_pick % bulk.enqueued.size()]);
  }
  run_to(std::max(now(), plan.backlog.at));
  enqueue_bulk(tasks_.at(plan.backlog.task), plan.backlog.payloads);
  // The pause and resume come due during the faults (advance_to).
  auto k = plan.paused;
  actions_.push_back({plan.pause_at, [this, k] { set_paused(k, true); }});
  actions_.push_back({plan.resume_at, [this, k] { set_paused(k, false); }});
  return true;
}

int scheduler_sim::proposer() {
  int best = -1;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!group_.running(i) || group_.at(i).frozen) continue;
    auto& core = *group_.state(i).member;
    if (core.current_role() != raft::role::leader) continue;
    if (best < 0 || core.term() > group_.state(static_cast<size_t>(best)).member->term())
      best = static_cast<int>(i);
  }
  return best;
}

caf::expected<proto::applied> scheduler_sim::propose_to_leader(const proto::command& cmd,
                                                               int tries) {
  using namespace std::chrono_literals;
  caf::error last = caf::make_error(caf::sec::request_timeout);
  for (int k = 0; k < tries; ++k) {
    int leader = -1;
    group_.run_until([&] { return (leader = proposer()) >= 0; }, 10s);
    if (leader < 0) continue;  // `last` says why
    auto raft = caf::actor_cast<proto::raft_actor>(group_.at(leader).raft);
    auto a = ask<proto::applied>(5'000, raft, proto::propose_atom::value, cmd);
    if (a) return a;
    last = std::move(a.error());
    // As a client backs off after a 503 (a leader whose disk fails answers at
    // once): 1, 2, 4, 8, 16 s, so that six tries outlast a fault window.
    if (k + 1 < tries) group_.run_for(std::chrono::milliseconds(1'000 << k));
  }
  return last;
}

/// As the gateway puts a pool (PUT /api/v1/pools/{name}: gateway/control_routes.cpp).
bool scheduler_sim::put_pool(proto::pool p) {
  p.updated_at = now();
  auto a = propose_to_leader(proto::command{proto::put_pool{p}}, 1);
  if (!a) {
    violations_.push_back("workload: pool " + p.name +
                          " not created: " + group_.sys.render(a.error()));
    return false;
  }
  pools_[p.name] = p.size;
  profile_ += "pool " + p.name + " of " + std::to_string(p.size) + "; ";
  return true;
}

/// As the gateway creates a task (gateway/task_routes.cpp): its times set to
/// now, validated, proposed as create_task to the leader's raft (once: a
/// create repeated without an idempotency key could make two).
bool scheduler_sim::create_task(planned_task p) {
  auto& t = p.def;
  for (auto k : p.upstreams) {
    if (k >= tasks_.size()) {
      violations_.push_back("workload: task " + t.name + " depends on the plan's task " +
                            std::to_string(k) + ", not created before it");
      return false;
    }
    t.depends_on.push_back(tasks_[k].id);
  }
  p.expect.depends_on = t.depends_on;
  t.created_at = t.updated_at = now();
  if (auto err = proto::validate_task(t)) {
    violations_.push_back("workload: task " + t.name + " invalid: " + group_.sys.render(err));
    return false;
  }
  auto a = propose_to_leader(proto::command{proto::create_task{t, ""}}, 1);
  if (!a || a->tasks.size() != 1) {
    violations_.push_back(
        "workload: task " + t.name + " not created: " +
        (a ? std::string("no task in the answer") : group_.sys.render(a.error())));
    return false;
  }
  auto& s = p.expect;
  s.id = a->tasks[0].id;
  // What its retention keeps: its own bound, or the cluster's default (1 000,
  // which a 3 s task passes within an hour of simulation).
  if (s.keep_runs == 0) s.keep_runs = retention::retention_options{}.defaults.keep_runs;
  // Known before its first run starts, unless that run is placed within the
  // create's commit (then it takes the common range: any duration is valid).
  if (p.max_duration > 0) (*durations_)[s.id] = {p.min_duration, p.max_duration};
  std::string what;
  if (s.every > 0)
    what = "task " + s.name + " " + format_duration(s.every);
  else if (!s.cron.empty())
    what = "task " + s.name + " '" + s.cron + "' in " + s.timezone;
  else if (s.at > 0)
    what = "one-shot " + s.name + " at " + at_text(s.at);
  else if (!p.upstreams.empty())
    what = "task " + s.name + " after " + tasks_[p.upstreams.front()].name;
  if (!what.empty())
    profile_ += what + (s.pool.empty() ? "" : " in " + s.pool) +
                (s.max_concurrency == 0 ? "" : " max " + std::to_string(s.max_concurrency)) +
                (s.jitter == 0 ? "" : " jitter " + format_duration(s.jitter)) +
                (s.overlap == proto::overlap_policy::allow
                     ? ""
                     : " overlap " + std::string(proto::name_of(s.overlap))) +
                "; ";
  tasks_.push_back(std::move(s));
  return true;
}

void scheduler_sim::enqueue_bulk(sim_task& t, const std::vector<std::string>& payloads) {
  auto leader = group_.agreed_leader();
  if (leader < 0) {
    violations_.push_back("bulk enqueue at " + at_text(now()) + ": no agreed leader");
    return;
  }
  // As the gateway does (POST /api/v1/tasks/{id}/runs): asked of the leader's trigger.
  auto a = ask<proto::applied>(5'000, nodes_.at(leader).leading.trigger,
                               proto::enqueue_atom::value, std::string("default"), t.id, payloads);
  if (!a) {
    t.unacknowledged += 1;  // it may have committed all the same
    violations_.push_back("bulk enqueue at " + at_text(now()) + " refused: " +
                          group_.sys.render(a.error()));
    return;
  }
  for (auto& x : a->instances) t.enqueued.push_back(x.id);
  profile_ += "bulk " + std::to_string(t.enqueued.size()) + " runs at " + at_text(now()) + "; ";
  trace("bulk enqueue: %zu runs acknowledged", t.enqueued.size());
}

/// As the gateway cancels a run (POST /api/v1/instances/{id}/cancel: gateway/api.cpp).
void scheduler_sim::cancel_run(sim_task& t, const std::string& id) {
  auto asked = now();
  proto::cancel c{"default", id, asked, "cancelled by request"};
  auto a = propose_to_leader(proto::command{c}, 1);
  bool done =
      a && !a->instances.empty() && a->instances[0].state == proto::instance_state::cancelled;
  // Refused (the run ended first) or unanswered (it may have committed): the
  // run may end cancelled, or as it would have.
  t.cancels[id] = done;
  std::string outcome = done ? "acknowledged"
                        : a  ? "answered without the cancel"
                             : "refused (" + group_.sys.render(a.error()) + ")";
  profile_ += "cancel of " + id + " at " + at_text(asked) + " " + outcome + "; ";
  trace("cancel of %s: %s", id.c_str(), done ? "acknowledged" : "not acknowledged");
}

/// As the gateway pauses or resumes a task (POST /api/v1/tasks/{id}/pause,
/// /resume: gateway/task_routes.cpp), asked until acknowledged (set_paused
/// is idempotent), at most six times: the window starts at the first ask.
void scheduler_sim::set_paused(size_t k, bool paused) {
  auto& t = tasks_.at(k);
  auto asked = now();
  proto::set_paused cmd{"default", t.id, paused, asked};
  auto a = propose_to_leader(proto::command{cmd}, 6);
  auto acked = a ? now() : 0;
  if (paused) {
    t.paused.push_back(pause_window{asked, acked, 0, 0});
  } else if (!t.paused.empty()) {
    t.paused.back().resume = asked;
    t.paused.back().to = acked;
  }
  const char* what = paused ? "pause" : "resume";
  if (!a)
    violations_.push_back(std::string("workload: ") + what + " of task " + t.name + " asked at " +
                          at_text(asked) + " not acknowledged: " + group_.sys.render(a.error()));
  profile_ += std::string(what) + " " + t.name + " [" + at_text(asked) + ", " +
              (a ? at_text(acked) : std::string("never")) + "]; ";
  trace("%s of task %s %s", what, t.name.c_str(), a ? "acknowledged" : "not acknowledged");
}

// -- the run -------------------------------------------------------------------

scheduler_sim_result scheduler_sim::run() {
  if (setup() && create_workload()) {
    inject_faults();
    advance_to(t0_ + span_.length);  // the settle period: no fault since faults_until
  }
  return finish();
}

scheduler_sim_result scheduler_sim::finish() {
  using namespace std::chrono_literals;
  scheduler_sim_result r;
  int leader = -1;
  group_.run_until([&] { return (leader = group_.agreed_leader()) >= 0; }, 10s);
  std::map<std::string, proto::instance> final_state;
  if (leader < 0) {
    violations_.push_back("no agreed leader at the end");
  } else {
    auto& sm = *group_.at(leader).sm;
    proto::instance_query q;
    q.tenant = "";
    q.limit = 1'000;
    for (;;) {
      auto page = sm.list_instances(q);
      if (!page) {
        violations_.push_back("cannot read the leader's runs: " + group_.sys.render(page.error()));
        break;
      }
      for (auto& x : page->items) final_state[x.id] = x;
      if (page->next_cursor.empty()) break;
      q.cursor = page->next_cursor;
    }
    r.last_term = group_.state(leader).member->term();
  }
  auto runs = runs_of(*history_);
  auto history_runs = runs.size();
  if (t0_ != 0) {
    slot_bounds b{t0_ + timeline::checked_from, t0_ + span_.workload_end - 1, timeline::eps,
                  timeline::heal, timeline::pause_margin, timeline::decided_ahead};
    auto add = [&](const std::vector<std::string>& found) {
      violations_.insert(violations_.end(), found.begin(), found.end());
    };
    add(check_slots(tasks_, faults_, runs, b));
    add(check_chains(tasks_, faults_, runs, b));
    add(check_total_queue(tasks_, runs));
    add(check_attempts(tasks_, faults_, timeline::heal, runs, executions_->items));
    add(check_bounds(tasks_, pools_, runs));
    add(check_settled(final_state));
    add(check_history(*history_, runs, final_state, tasks_));
    // The liveness bound holds only with its settle period.
    unix_ms last_fault = 0;
    for (auto& w : faults_) last_fault = std::max(last_fault, w.to);
    if (last_fault != 0 && t0_ + span_.length - last_fault < timeline::min_settle)
      violations_.push_back("the last fault ended at " + at_text(last_fault) + ", less than " +
                            format_duration(timeline::min_settle) +
                            " before the end: liveness not judged within its bound");
  }
  // A raft actor that ended on its own ends its node (fail_disk restarts the
  // one whose disk it failed).
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (auto why = group_.ended(i))
      violations_.push_back(group_.at(i).id + "'s raft terminated on its own: " +
                            (*why ? group_.sys.render(*why) : std::string("normal exit")));
  violations_.insert(violations_.end(), deaths_->begin(), deaths_->end());
  r.violations = violations_;
  if (!violations_.empty()) r.explained = explain(violations_.front());
  r.profile = profile_;
  r.fingerprint = fingerprint(*history_);
  r.commits = history_->commits.size();
  r.runs = final_state.size();
  r.removed = history_runs > final_state.size() ? history_runs - final_state.size() : 0;
  r.length = span_.length;
  return r;
}

// -- entry points --------------------------------------------------------------

scheduler_sim_result run_scheduler_sim(const scheduler_sim_options& opts) {
  scheduler_sim s(opts);
  return s.run();
}

std::string replay_hint(const scheduler_sim_options& opts) {
  return "AISCHED_SIM_SEED=" + std::to_string(opts.seed) +
         (opts.every_fault.empty() ? "" : " AISCHED_SIM_FAULT=" + opts.every_fault) +
         (opts.rounds == 1 ? "" : " AISCHED_SIM_ROUNDS=" + std::to_string(opts.rounds)) +
         " scheduler_sim_test --gtest_filter=scheduler_sim.replay (AISCHED_SIM_TRACE=1 prints "
         "the workload and faults as they happen)";
}

}  // namespace aisched::sim
