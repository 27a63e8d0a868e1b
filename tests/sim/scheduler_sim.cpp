// The scheduler simulation; see scheduler_sim.hpp.
#include "tests/sim/scheduler_sim.hpp"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <iterator>
#include <stdexcept>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/endpoint/endpoint_actor.hpp"
#include "actors/store/store_actor.hpp"
#include "actors/worker/registrar_actor.hpp"
#include "actors/worker/worker_actor.hpp"
#include "common/log.hpp"
#include "proto/time.hpp"
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

// Every task of the workload retries a failed run twice, 2 s apart.
constexpr uint32_t max_attempts = 3;
constexpr duration_ms retry_interval = 2'000;

/// SplitMix64's step: a well-mixed 64-bit value of `x`.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// A commit listener that hands every committed change of one member to the history.
proto::commit_listener_actor::behavior_type recorder(proto::commit_listener_actor::pointer,
                                                     std::shared_ptr<history> h,
                                                     std::string member) {
  return {
      [](proto::leader_atom, const proto::leadership&) {},
      [=](proto::committed_atom, const proto::applied& a) { h->record(member, a); },
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

// -- setup and teardown ----------------------------------------------------------

scheduler_sim::scheduler_sim(scheduler_sim_options opts)
    : opts_(opts),
      rng_(mix(opts.seed)),
      group_(opts.members, 10'000, 1 + opts.seed * 16),  // raft seeds: never 0 (random)
      clock_(wall_clock::simulated(start_unix, group_.sched.clock().now())),
      endpoints_(std::make_shared<std::map<std::string, proto::endpoint_actor>>()),
      history_(std::make_shared<history>()),
      deaths_(std::make_shared<std::vector<std::string>>()) {
  log::set_level(log::level::error);  // not a line per run or per failed attempt
  nodes_.resize(opts_.members);
  for (size_t i = 0; i < opts_.members; ++i) {
    recorders_.push_back(group_.sys.spawn(recorder, history_, group_.at(i).id));
    spawn_node(i);
  }
  group_.sched.run();
}

scheduler_sim::~scheduler_sim() {
  // The coordinator fixture's destructor fires every pending timer until none
  // is left: every actor that ticks must be gone first.
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (group_.running(i)) stop_member(i);
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
          caf::actor_cast<caf::actor>(worker),
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
  spawn_worker(i);
  // Crash-only, as the node's supervision: an actor that ends on its own
  // leaves a member that answers but cannot schedule. Killed (stop_member,
  // kill_worker) is a crash of the process, not that.
  static const char* const names[] = {"store", "trigger", "retry", "router", "backpressure",
                                      "endpoint"};
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
  n.exec = std::make_shared<worker::sim_executor>(runs);
  worker::worker_config wcfg;
  wcfg.id = m.id;
  wcfg.outbox_dir = m.dir + "/worker-outbox";
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
  reg.worker = n.worker;
  std::weak_ptr<std::map<std::string, proto::endpoint_actor>> dir = endpoints_;
  reg.resolve_member = [dir](const std::string& address) -> proto::endpoint_actor {
    auto d = dir.lock();
    if (!d) return {};
    auto it = d->find(address);
    return it == d->end() ? proto::endpoint_actor{} : it->second;
  };
  n.registrar = sys.spawn(worker::registrar_actor_impl, std::move(reg));
  watch(caf::actor_cast<caf::actor>(n.worker), m.id + "'s worker");
  watch(n.registrar, m.id + "'s registrar");
}

void scheduler_sim::kill_worker(size_t i) {
  auto& n = nodes_.at(i);
  if (n.exec) n.exec->stop();  // its runs end at their next timer, unreported
  caf::anon_send_exit(n.registrar, caf::exit_reason::kill);
  caf::anon_send_exit(n.worker, caf::exit_reason::kill);
  group_.sched.run();
  n.registrar = nullptr;
  n.worker = nullptr;
  n.exec.reset();
}

// -- faults --------------------------------------------------------------------

void scheduler_sim::stop_member(size_t i) {
  auto& n = nodes_.at(i);
  if (n.frozen) thaw_member(i);
  if (n.exec) n.exec->stop();  // its runs end at their next timer, unreported
  endpoints_->erase(test::raft_group::address(i));
  for (auto& a : n.actors())
    if (a) caf::anon_send_exit(a, caf::exit_reason::kill);
  group_.sched.run();  // the store lets go of the database before raft closes it
  n = node{};
  group_.stop(i);
}

void scheduler_sim::start_member(size_t i) {
  group_.start(i);
  spawn_node(i);
}

void scheduler_sim::freeze_member(size_t i) {
  auto& n = nodes_.at(i);
  if (n.frozen) return;
  group_.freeze(i);
  // Each needs mail to be in the job queue: one it answers without effect
  // (inspect, answered to nobody), or for the registrar (untyped, no
  // inspect) a down message of an actor it does not watch.
  for (auto& a : n.actors()) {
    if (a == n.registrar)
      caf::anon_send(a, caf::down_msg{});
    else
      caf::anon_send(a, proto::inspect_atom::value);
    try {
      group_.freeze_actor(a);
    } catch (const std::runtime_error& e) {  // it terminated: deaths_ says why
      violations_.push_back("freeze of " + group_.at(i).id + ": " + e.what());
    }
  }
  n.frozen = true;
}

void scheduler_sim::thaw_member(size_t i) {
  auto& n = nodes_.at(i);
  if (!n.frozen) return;
  group_.thaw(i);
  for (auto& a : n.actors()) group_.thaw_actor(a);
  n.frozen = false;
}

// -- driving -------------------------------------------------------------------

unix_ms scheduler_sim::now() const { return clock_.now(group_.sched.clock()); }

uint64_t scheduler_sim::draw(uint64_t below) {
  rng_ = mix(rng_);
  return below == 0 ? 0 : rng_ % below;
}

std::string scheduler_sim::at_text(unix_ms t) const {
  auto d = t - (t0_ != 0 ? t0_ : start_unix);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.3fs", static_cast<double>(d) / 1000.0);
  return buf;
}

void scheduler_sim::trace(const char* fmt, ...) const {
  if (opts_.trace == nullptr) return;
  std::fprintf(opts_.trace, "[seed %llu %s] ", static_cast<unsigned long long>(opts_.seed),
               at_text(now()).c_str());
  va_list args;
  va_start(args, fmt);
  std::vfprintf(opts_.trace, fmt, args);
  va_end(args);
  std::fputc('\n', opts_.trace);
}

void scheduler_sim::run_to(unix_ms t) {
  if (auto left = t - now(); left > 0) group_.run_for(std::chrono::milliseconds(left));
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
  auto leader = group_.agreed_leader();
  if (leader < 0) {
    violations_.push_back("workload: no agreed leader");
    return false;
  }
  auto raft = caf::actor_cast<proto::raft_actor>(group_.at(leader).raft);
  // As the gateway creates a task (gateway/task_routes.cpp): its times set
  // to now, validated, proposed as create_task to the leader's raft.
  auto make = [&](std::string name) {
    proto::task t;
    t.name = std::move(name);
    t.kind = proto::task_kind::shell;
    t.command = "simulated";  // never run: the worker's executor is sim_executor
    t.retry.kind = proto::retry_kind::fixed;
    t.retry.max_attempts = max_attempts;
    t.retry.interval = retry_interval;
    t.timeout = 60'000;
    // Every missed slot fires when a new leader catches up, so that every
    // slot must have its run.
    t.misfire = proto::misfire_policy::fire_all;
    return t;
  };
  auto create = [&](proto::task t, sim_task s) {
    t.created_at = t.updated_at = now();
    if (auto err = proto::validate_task(t)) {
      violations_.push_back("workload: task " + t.name + " invalid: " + group_.sys.render(err));
      return false;
    }
    auto a = ask<proto::applied>(5'000, raft, proto::propose_atom::value,
                                 proto::command{proto::create_task{t, ""}});
    if (!a || a->tasks.size() != 1) {
      violations_.push_back("workload: task " + t.name + " not created: " +
                            (a ? std::string("no task in the answer") : group_.sys.render(a.error())));
      return false;
    }
    s.id = a->tasks[0].id;
    s.name = t.name;
    s.max_attempts = t.retry.max_attempts;
    tasks_.push_back(std::move(s));
    return true;
  };
  static constexpr duration_ms intervals[] = {5'000, 10'000, 15'000, 20'000, 30'000};
  auto periodic = between(3, 5);
  for (int64_t k = 0; k < periodic; ++k) {
    auto t = make("every-" + std::to_string(k + 1));
    sim_task s;
    s.every = intervals[draw(std::size(intervals))];
    s.end_at = t0_ + timeline::workload_end;
    t.schedule = "@every " + format_duration(s.every);
    t.end_at = s.end_at;
    if (!create(std::move(t), s)) return false;
    profile_ += "task " + tasks_.back().name + " " + format_duration(s.every) + "; ";
  }
  auto once = between(1, 3);
  for (int64_t k = 0; k < once; ++k) {
    auto t = make("once-" + std::to_string(k + 1));
    sim_task s;
    s.at = t0_ + between(25, 220) * 1'000;
    t.at = s.at;
    if (!create(std::move(t), s)) return false;
    profile_ += "one-shot " + tasks_.back().name + " at " + at_text(s.at) + "; ";
  }
  // A bulk enqueue of a manual task, at an instant before the faults.
  if (!create(make("bulk"), sim_task{})) return false;
  auto bulk_at = t0_ + between(5, 25) * 1'000;
  run_to(bulk_at);
  enqueue_bulk(tasks_.back());
  return true;
}

void scheduler_sim::enqueue_bulk(sim_task& t) {
  auto leader = group_.agreed_leader();
  if (leader < 0) {
    violations_.push_back("bulk enqueue at " + at_text(now()) + ": no agreed leader");
    return;
  }
  std::vector<std::string> payloads;
  auto count = between(3, 8);
  for (int64_t k = 0; k < count; ++k) payloads.push_back("{\"item\":" + std::to_string(k) + "}");
  // As the gateway does (POST /api/v1/tasks/{id}/runs): asked of the leader's trigger.
  auto a = ask<proto::applied>(5'000, nodes_.at(leader).leading.trigger,
                               proto::enqueue_atom::value, std::string("default"), t.id, payloads);
  if (!a) {
    violations_.push_back("bulk enqueue at " + at_text(now()) + " refused: " +
                          group_.sys.render(a.error()));
    return;
  }
  for (auto& x : a->instances) t.enqueued.push_back(x.id);
  profile_ += "bulk " + std::to_string(t.enqueued.size()) + " runs at " + at_text(now()) + "; ";
  trace("bulk enqueue: %zu runs acknowledged", t.enqueued.size());
}

// -- faults --------------------------------------------------------------------

void scheduler_sim::inject_faults() {
  using namespace std::chrono_literals;
  // Three of these, in the order the seed draws.
  std::vector<std::string> kinds{"leader_crash", "follower_crash", "leader_freeze",
                                 "partition",    "one_way",        "worker_death"};
  for (size_t k = kinds.size() - 1; k > 0; --k) std::swap(kinds[k], kinds[draw(k + 1)]);
  kinds.resize(3);
  auto members = nodes_.size();
  for (size_t k = 0; k < kinds.size(); ++k) {
    auto& kind = kinds[k];
    auto start = t0_ + timeline::faults_from +
                 static_cast<duration_ms>(k) * timeline::fault_segment + between(0, 25) * 1'000;
    auto length = kind == "leader_freeze"  ? between(1, 6) * 1'000
                  : kind == "worker_death" ? between(5, timeline::max_worker_death / 1'000) * 1'000
                                           : between(3, timeline::max_fault / 1'000) * 1'000;
    run_to(start);  // a no-op when the previous fault (a long worker death) ended later
    int leader = -1;
    group_.run_until([&] { return (leader = group_.agreed_leader()) >= 0; }, 10s);
    if (leader < 0) {
      violations_.push_back("no agreed leader at " + at_text(now()) + " (before " + kind + ")");
      continue;
    }
    auto victim = static_cast<size_t>(leader);
    size_t other = victim;  // one_way: messages from victim to other are lost
    if (kind == "follower_crash")
      victim = (victim + 1 + draw(members - 1)) % members;
    else if (kind == "partition" || kind == "worker_death")
      victim = draw(members);
    else if (kind == "one_way") {
      victim = draw(members);
      other = (victim + 1 + draw(members - 1)) % members;
    }
    fault_window w{kind, group_.at(victim).id, now(), 0};
    if (kind == "one_way") w.member += "->" + group_.at(other).id;
    trace("%s of %s for %s", kind.c_str(), w.member.c_str(), format_duration(length).c_str());
    if (kind == "leader_freeze") {
      freeze_member(victim);
    } else if (kind == "partition") {
      for (size_t j = 0; j < members; ++j)
        if (j != victim) {
          group_.cut(victim, j);
          group_.cut(j, victim);
        }
    } else if (kind == "one_way") {
      group_.cut(victim, other);
    } else if (kind == "worker_death") {
      kill_worker(victim);
    } else {
      stop_member(victim);
    }
    group_.run_for(std::chrono::milliseconds(length));
    if (kind == "leader_freeze")
      thaw_member(victim);
    else if (kind == "partition" || kind == "one_way")
      group_.heal_all();
    else if (kind == "worker_death")
      spawn_worker(victim);
    else
      start_member(victim);
    w.to = now();
    trace("%s of %s over", kind.c_str(), w.member.c_str());
    profile_ += kind + " " + w.member + " [" + at_text(w.from) + ", " + at_text(w.to) + "]; ";
    faults_.push_back(std::move(w));
  }
}

// -- the run -------------------------------------------------------------------

scheduler_sim_result scheduler_sim::run() {
  if (setup() && create_workload()) {
    inject_faults();
    run_to(t0_ + timeline::length);  // the settle period: no fault since faults_until
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
  if (t0_ != 0) {
    check_bounds b{t0_ + timeline::checked_from, t0_ + timeline::workload_end - 1, timeline::eps,
                   timeline::heal};
    auto add = [&](const std::vector<std::string>& found) {
      violations_.insert(violations_.end(), found.begin(), found.end());
    };
    add(check_slots(tasks_, faults_, runs, b));
    add(check_settled(final_state));
    add(check_history(*history_, runs, final_state));
  }
  violations_.insert(violations_.end(), deaths_->begin(), deaths_->end());
  r.violations = violations_;
  r.profile = profile_;
  r.fingerprint = fingerprint(*history_);
  r.commits = history_->commits.size();
  r.runs = final_state.size();
  return r;
}

// -- entry points --------------------------------------------------------------

scheduler_sim_result run_scheduler_sim(const scheduler_sim_options& opts) {
  scheduler_sim s(opts);
  return s.run();
}

std::string replay_hint(const scheduler_sim_options& opts) {
  return "AISCHED_SIM_SEED=" + std::to_string(opts.seed) +
         " scheduler_sim_test --gtest_filter=scheduler_sim.replay (AISCHED_SIM_TRACE=1 prints "
         "the workload and faults as they happen)";
}

}  // namespace aisched::sim
