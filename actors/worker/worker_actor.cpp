// Behaviour of the worker actor; see worker_actor.hpp.
#include "actors/worker/worker_actor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <tuple>

#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "common/counted.hpp"
#include "obs/metrics.hpp"
#include "proto/errors.hpp"
#include "common/log.hpp"

namespace aisched::worker {

using namespace proto;

namespace {

std::string run_key(const std::string& instance_id, uint32_t attempt) {
  return instance_id + "#" + std::to_string(attempt);
}

/// The run a key "{instance}#{attempt}" names.
held_run held_of(const std::string& key) {
  auto hash = key.rfind('#');
  if (hash == std::string::npos) return {key, 0};
  return {key.substr(0, hash),
          static_cast<uint32_t>(std::strtoul(key.c_str() + hash + 1, nullptr, 10))};
}

/// Forgets settled attempts past the dedup TTL (the cap holds as they are added).
void purge(worker_state& st, unix_ms now) { st.settled.forget_before(now - st.cfg.dedup_ttl); }

/// The leader committed the final report of run `i`: keep only its outcome.
void settle(worker_state& st, std::unordered_map<std::string, worker_state::run>::iterator i,
            unix_ms now) {
  if (i == st.runs.end() || !i->second.done) return;
  auto& r = i->second.result;
  st.settled.add(i->first, {r.state, r.exit_code, r.started_at, r.finished_at}, now);
  st.runs.erase(i);
  purge(st, now);
}

/// The report a duplicate execute of settled attempt `key` is sent again.
run_result result_of(const worker_state& st, const std::string& key,
                     const settled_outcomes::outcome& o) {
  auto held = held_of(key);
  run_result r;
  r.instance_id = std::move(held.instance_id);
  r.attempt = held.attempt;
  r.worker_id = st.cfg.id;
  r.state = o.state;
  r.exit_code = o.exit_code;
  r.started_at = o.started_at;
  r.finished_at = o.finished_at;
  return r;
}

/// Records that the outbox failed (`what`: "open", "write", ...): from now on
/// the worker refuses new runs and registers with no capacity, so the leader
/// places them elsewhere instead of trusting reports that a restart would lose.
void outbox_failed(worker_actor::stateful_pointer<worker_state> self, std::string_view what,
                   const caf::error& err) {
  auto& st = self->state;
  obs::get().worker_outbox_errors.inc();
  auto why = std::string(view(err).message);
  log::error("worker outbox failed: this worker takes no new runs until it is restarted with a "
             "working outbox",
             {{"actor", "worker"},
              {"worker_id", st.cfg.id},
              {"operation", std::string(what)},
              {"dir", st.cfg.outbox_dir},
              {"error", why}});
  if (st.outbox_fault.empty()) st.outbox_fault = std::string(what) + ": " + why;
}

/// Opens the outbox and takes back the reports a previous incarnation could
/// not get acknowledged; on failure the worker is faulted (outbox_failed).
void open_outbox(worker_actor::stateful_pointer<worker_state> self) {
  auto& st = self->state;
  if (st.cfg.outbox_dir.empty()) return;  // reports in memory only, by configuration
  auto box = outbox::open(st.cfg.outbox_dir, st.cfg.outbox_opts);
  if (!box) return outbox_failed(self, "open", box.error());
  st.box = std::move(*box);
  // Their runs count as done here, so a new leader that hands one of them
  // over again (this worker said it holds it) gets the outcome, not a re-run.
  for (auto& [key, r] : st.box->load()) {
    auto& run = st.runs[key];
    run.done = true;
    run.result = std::move(r);
    run.unacked = true;
  }
}

/// The runs one message finished, reported together after one outbox write
/// (deliver_finals): their keys, and the "run started" lines of the no-ops
/// among them. A no-op's start is its end, so its line waits for the write: a
/// line seen before it would name a run whose report a kill can still lose.
struct finished_runs {
  struct started_line {
    uint64_t task_id = 0;
    std::string instance_id;
    std::string trace_id;
    uint32_t attempt = 0;
  };
  std::vector<std::string> keys;
  std::vector<started_line> noop_lines;  // filled only while info lines are written
};

void log_started(const worker_state& st, uint64_t task_id, const std::string& instance_id,
                 const std::string& trace_id, uint32_t attempt) {
  log::info("run started", {{"actor", "worker"},
                            {"task_id", std::to_string(task_id)},
                            {"instance_id", instance_id},
                            {"trace_id", trace_id},
                            {"worker_id", st.cfg.id},
                            {"attempt", std::to_string(attempt)}});
}

/// Keeps the final reports of the finished runs `finished.keys` (done, with
/// their result and proxy) in the outbox, in one write, and only then counts,
/// logs and sends them: a report anyone has heard of survives a kill of this
/// process. Kept until the scheduler acknowledges them.
void deliver_finals(worker_actor::stateful_pointer<worker_state> self,
                    const finished_runs& finished) {
  auto& st = self->state;
  auto& keys = finished.keys;
  if (keys.empty()) return;
  std::vector<std::pair<std::string, const run_result*>> stored;
  std::vector<worker_state::run*> runs;  // node pointers: stable while nothing is erased
  stored.reserve(keys.size());
  runs.reserve(keys.size());
  for (auto& key : keys) {
    auto& run = st.runs.at(key);
    stored.emplace_back(key, &run.result);
    runs.push_back(&run);
  }
  // Sent even when the write fails: the reports are still true, only no
  // longer safe across a restart of this worker (which takes no new runs).
  if (st.box)
    if (auto err = st.box->put(stored)) outbox_failed(self, "write", err);
  for (auto& l : finished.noop_lines)
    log_started(st, l.task_id, l.instance_id, l.trace_id, l.attempt);
  auto now = now_of(self);
  for (auto* run : runs) {
    obs::get().executions[static_cast<size_t>(run->result.state)].inc();  // each attempt once
    run->unacked = true;
    run->last_sent = now;
    self->send(run->reply_to, report_atom::value, run->result);
  }
}

/// Starts attempt `key` of `req`, whose entry in `runs` exists: a no-op
/// completes here (added to `finished`, for the caller to report with the
/// others once it is done with the message), anything else goes to the
/// executor. False (the entry gone) when the executor takes no more runs (the
/// node stops); an error (the entry gone, the run not started) when the
/// outbox cannot record that it may run.
caf::expected<bool> start(worker_actor::stateful_pointer<worker_state> self, const std::string& key,
                          worker_state::run& entry, const execute_request& req,
                          finished_runs& finished) {
  auto& st = self->state;
  auto now = now_of(self);
  bool logging = log::enabled(log::level::info);  // per run: no strings built when off
  if (req.kind == task_kind::noop) {
    // Nothing to execute: complete here, without a thread or a `running` report.
    run_result r;
    r.instance_id = req.instance_id;
    r.worker_id = st.cfg.id;
    r.attempt = req.attempt;
    r.state = instance_state::success;
    r.started_at = r.finished_at = now;
    entry.done = true;
    entry.result = std::move(r);
    finished.keys.push_back(key);  // reported by the caller, with others
    if (logging)
      finished.noop_lines.push_back({req.task_id, req.instance_id, req.trace_id, req.attempt});
    return true;
  }
  // Before the run can start, the outbox holds a report that it may have run,
  // superseded by the real one when it ends. A restart of this process sends
  // that report in its stead: the attempt ends worker_lost (retried per
  // policy), never re-placed as the same attempt. So a run a restarted worker
  // neither holds nor reports never started (the router places it again).
  // Unrecorded, it does not start: a crash would leave no trace of it, and
  // the attempt could run a second time elsewhere.
  if (st.box) {
    run_result maybe_ran;
    maybe_ran.instance_id = req.instance_id;
    maybe_ran.worker_id = st.cfg.id;
    maybe_ran.attempt = req.attempt;
    maybe_ran.state = instance_state::failed;
    maybe_ran.exit_code = -1;
    maybe_ran.error = "worker_lost: worker " + st.cfg.id +
                      " restarted while the attempt may have been running";
    maybe_ran.started_at = maybe_ran.finished_at = now;
    if (auto err = st.box->put({{key, &maybe_ran}})) {
      outbox_failed(self, "write", err);
      st.runs.erase(key);
      return make_error(errc::storage_error, "outbox",
                        "worker " + st.cfg.id + " did not start the run: its outbox failed (" +
                            st.outbox_fault + ")");
    }
  }
  if (logging) log_started(st, req.task_id, req.instance_id, req.trace_id, req.attempt);
  if (!entry.cancelled) entry.cancelled = std::make_shared<std::atomic<bool>>(false);
  // Its executor (run_executor.hpp) tells this actor started, output, done.
  bool queued = st.exec->launch({self, req, entry.cancelled, st.clock, &self->clock()});
  if (!queued) {  // it never starts: no report that it may have run
    if (st.box)
      if (auto err = st.box->erase({key})) outbox_failed(self, "delete", err);
    st.runs.erase(key);
    return false;
  }
  obs::get().worker_inflight.inc();
  return true;
}

/// Raises the highest leader term this worker has seen to `term`, or refuses
/// a request of an older one (not_leader): its leader was deposed, and its
/// successor may have placed the attempt again elsewhere. 0 is not fenced.
caf::error fence(worker_state& st, uint64_t term) {
  if (term == 0) return {};
  if (term < st.leader_term) {
    obs::get().worker_fenced_total.inc();
    return make_error(errc::not_leader, "leader_term",
                      "placed by the leader of term " + std::to_string(term) + ", but worker " +
                          st.cfg.id + " has seen the leader of term " +
                          std::to_string(st.leader_term) + ": the request is stale");
  }
  st.leader_term = term;
  return {};
}

/// Takes delivery `req` from `reply_to`: runs it (or holds it until its
/// instant); true once accepted, a duplicate delivery too (it runs once);
/// false when the node stops; an error when this worker cannot take runs.
/// The caller purges the settled outcomes as of `now` first, and reports the
/// no-ops this finishes (`finished`) once it is done with the message.
caf::expected<bool> take_run(worker_actor::stateful_pointer<worker_state> self,
                             const execute_request& req, const worker_proxy_actor& reply_to,
                             unix_ms now, finished_runs& finished) {
  auto& st = self->state;
  if (auto err = fence(st, req.leader_term)) return err;
  auto key = run_key(req.instance_id, req.attempt);
  auto [i, added] = st.runs.try_emplace(key);
  if (!added) {
    // A duplicate delivery: never run twice; repeat the outcome if known
    // (one finished in this message and not written yet is sent, to this
    // proxy, once written). A run still held takes what it brings (its task
    // changed meanwhile).
    i->second.reply_to = reply_to;
    if (i->second.waiting) *i->second.waiting = req;
    if (i->second.unacked) self->send(reply_to, report_atom::value, i->second.result);
    return true;
  }
  // Not taken after all: its entry goes again (one lookup for the runs taken).
  auto not_taken = [&] { st.runs.erase(i); };
  if (auto* o = st.settled.find(key)) {
    not_taken();
    self->send(reply_to, report_atom::value, result_of(st, key, *o));
    return true;
  }
  if (req.answer_by != 0 && now + max_skew > req.answer_by) {
    // Its sender has counted it a failed attempt by now (or will have before
    // it hears back, its clock ahead of ours by up to max_skew), and the
    // leader retries it: started here, it could run beside the next attempt.
    not_taken();
    auto past = now - req.answer_by;
    return make_error(errc::unavailable, "answer_by",
                      "worker " + st.cfg.id + " reached the request " +
                          (past > 0 ? std::to_string(past) + " ms after its sender stopped waiting"
                                    : std::to_string(-past) + " ms before its sender stops "
                                                              "waiting, less than the clock skew "
                                                              "allowed") +
                          ": not started");
  }
  if (!st.outbox_fault.empty()) {
    not_taken();
    return make_error(errc::storage_error, "outbox",
                      "worker " + st.cfg.id + " takes no runs: its outbox failed (" +
                          st.outbox_fault + ")");
  }
  if (req.hold_ms > max_hold) {
    not_taken();
    return make_error(errc::invalid_argument, "hold_ms",
                      "the run's instant is " + std::to_string(req.hold_ms) +
                          " ms away, more than worker " + st.cfg.id + " holds a run (" +
                          std::to_string(max_hold) + " ms)");
  }
  // Until this worker's clock reaches the instant, but not much longer
  // than the leader meant (a slow clock).
  auto hold = req.hold_ms <= 0 ? duration_ms{0}
                               : std::clamp<duration_ms>(req.not_before - now, 0,
                                                         req.hold_ms + max_skew);
  auto& fresh = i->second;
  fresh.reply_to = reply_to;
  if (hold > 0) {
    // Placed ahead of its instant: held until then.
    fresh.waiting = req;
    auto instant = now + hold;  // by this worker's clock
    auto& due = st.held_until[instant];
    if (due.empty())
      self->delayed_send(self, std::chrono::milliseconds(hold), wake_atom::value, instant);
    due.push_back(std::move(key));
    return true;
  }
  return start(self, key, fresh, req, finished);
}

/// The worker's part of aisched-inspect: runs in progress, finished runs kept
/// for dedup, final reports not yet acknowledged by the leader.
std::map<std::string, std::string> details_of(const worker_state& st) {
  size_t running = 0, held = 0, unacked = 0;
  for (auto& [key, r] : st.runs) {
    running += r.done || r.waiting ? 0 : 1;
    held += r.waiting ? 1 : 0;
    unacked += r.unacked ? 1 : 0;
  }
  return {{"id", st.cfg.id},
          {"running", std::to_string(running)},
          {"held_for_instant", std::to_string(held)},
          {"slots", std::to_string(st.exec ? st.exec->slots() : 0)},
          {"dedup_cached", std::to_string(st.runs.size() - running - held + st.settled.size())},
          {"unacked_reports", std::to_string(unacked)},
          {"outbox_fault", st.outbox_fault},
          {"outbox_segments", std::to_string(st.box ? st.box->segments() : 0)},
          {"connected", inspector::text(static_cast<bool>(st.report_sink))}};
}

}  // namespace

worker_actor::behavior_type worker_actor_impl(worker_actor::stateful_pointer<worker_state> self,
                                              worker_config cfg,
                                              std::shared_ptr<run_executor> exec) {
  self->state.cfg = std::move(cfg);
  self->state.clock = self->state.cfg.clock;
  self->state.settled = settled_outcomes{self->state.cfg.dedup_cap};
  self->state.exec = std::move(exec);
  open_outbox(self);
  self->delayed_send(self, std::chrono::seconds(1), caf::tick_atom::value);
  self->set_down_handler([=](const caf::down_msg& dm) {
    // A follower went away (its client disconnected): stop sending it output.
    for (auto& [key, run] : self->state.runs) {
      auto& fs = run.followers;
      fs.erase(std::remove_if(fs.begin(), fs.end(),
                              [&](const caf::actor& f) { return f.address() == dm.source; }),
               fs.end());
    }
  });
  return inspector::counted(self, {
      [=](inspect_atom) { return inspector::summary_of(self, details_of(self->state)); },
      [=](execute_atom, const execute_request& req,
          const worker_proxy_actor& reply_to) -> caf::result<bool> {
        auto now = now_of(self);
        purge(self->state, now);
        finished_runs finished;
        auto taken = take_run(self, req, reply_to, now, finished);
        deliver_finals(self, finished);
        if (!taken) return taken.error();
        return *taken;
      },
      [=](execute_atom, const std::vector<execute_request>& reqs,
          const worker_proxy_actor& reply_to) {
        auto now = now_of(self);
        purge(self->state, now);
        std::vector<std::string> refusals;  // one per run, "" where taken
        refusals.reserve(reqs.size());
        finished_runs finished;  // the burst's no-ops: one outbox write
        for (auto& req : reqs) {
          auto taken = take_run(self, req, reply_to, now, finished);
          refusals.push_back(!taken   ? view(taken.error()).message
                             : *taken ? std::string()
                                      : "worker " + self->state.cfg.id + " is stopping");
        }
        deliver_finals(self, finished);
        return refusals;
      },
      [=](wake_atom, unix_ms instant) {
        auto& st = self->state;
        auto now = now_of(self);
        if (instant > now) {
          // Never before its instant: a timer that woke early waits the rest.
          self->delayed_send(self, std::chrono::milliseconds(instant - now), wake_atom::value,
                             instant);
          return;
        }
        // Every run due by now starts, one after another; their no-op reports
        // go after the last start, so that reporting does not delay a start.
        finished_runs finished;
        auto due = st.held_until.begin();
        for (; due != st.held_until.end() && due->first <= now; ++due)
          for (auto& key : due->second) {
            auto i = st.runs.find(key);
            if (i == st.runs.end() || !i->second.waiting) continue;  // cancelled meanwhile
            auto req = std::move(*i->second.waiting);
            i->second.waiting.reset();
            auto reply_to = i->second.reply_to;
            // Reached long after its instant (this worker was stopped): the
            // leader may have placed its next attempt meanwhile.
            auto late = now - due->first;
            auto started =
                late > max_late_start
                    ? caf::expected<bool>{make_error(
                          errc::unavailable, "not_before",
                          "worker " + st.cfg.id + " reached the run's instant " +
                              std::to_string(late) + " ms late (it was stopped): not started")}
                    : start(self, key, i->second, req, finished);
            if (started && *started) continue;
            // The node stops, its outbox failed, or it came too late: the run
            // never started. It was taken, so it ends as a failed attempt,
            // retried per policy.
            run_result r;
            r.instance_id = req.instance_id;
            r.worker_id = st.cfg.id;
            r.attempt = req.attempt;
            r.state = instance_state::failed;
            r.exit_code = -1;
            r.error = started ? "worker " + st.cfg.id + " stopped before the run's instant"
                              : std::string(view(started.error()).message);
            r.finished_at = now_of(self);  // no started_at: it never started
            auto& run = st.runs[key];
            run.reply_to = reply_to;
            run.done = true;
            run.result = r;
            finished.keys.push_back(key);
          }
        st.held_until.erase(st.held_until.begin(), due);
        deliver_finals(self, finished);
      },
      [=](flush_atom) {
        // Nothing waits for a flush: a report is written and sent in the
        // message that finishes its run (the interface keeps the handler).
      },
      [=](started_atom, const std::string& instance_id, uint32_t attempt, unix_ms at) {
        auto& st = self->state;
        auto i = st.runs.find(run_key(instance_id, attempt));
        if (i == st.runs.end() || i->second.done) return;
        run_result r;
        r.instance_id = instance_id;
        r.worker_id = st.cfg.id;
        r.attempt = attempt;
        r.state = instance_state::running;
        r.started_at = at;
        self->send(i->second.reply_to, report_atom::value, r);
      },
      [=](done_atom, run_result& r, uint32_t attempt) {
        auto& st = self->state;
        r.worker_id = st.cfg.id;
        r.attempt = attempt;
        auto key = run_key(r.instance_id, attempt);
        auto i = st.runs.find(key);
        if (i == st.runs.end()) return;
        obs::get().worker_inflight.dec();
        auto& run = i->second;
        run.done = true;
        run.result = r;
        // Its own write: a run of the pool took a process, far more than one
        // write(2), and its report must not wait in this process's memory.
        deliver_finals(self, finished_runs{{key}, {}});
        for (auto& f : run.followers) caf::anon_send(f, done_atom::value, r.instance_id);
        run.followers.clear();
        run.live.clear();
        run.live.shrink_to_fit();
      },
      [=](output_atom, const std::string& instance_id, uint32_t attempt, std::string& chunk) {
        auto& st = self->state;
        auto i = st.runs.find(run_key(instance_id, attempt));
        if (i == st.runs.end() || i->second.done) return;
        auto& run = i->second;
        run.live += chunk;
        if (run.live.size() > 2 * st.cfg.live_cap) run.live.erase(0, run.live.size() - st.cfg.live_cap);
        for (auto& f : run.followers) caf::anon_send(f, output_atom::value, instance_id, chunk);
      },
      [=](output_atom, const std::string& instance_id, const caf::actor& follower) -> bool {
        // The attempt of the instance that runs here now (at most one at a time).
        auto& st = self->state;
        for (auto& [key, run] : st.runs) {
          if (run.done || key.compare(0, instance_id.size() + 1, instance_id + "#") != 0) continue;
          auto from = run.live.size() > st.cfg.live_cap ? run.live.size() - st.cfg.live_cap : 0;
          if (from < run.live.size())
            caf::anon_send(follower, output_atom::value, instance_id, run.live.substr(from));
          run.followers.push_back(follower);
          self->monitor(follower);
          return true;
        }
        return false;
      },
      [=](ack_atom, const std::vector<std::string>& keys) {
        auto& st = self->state;
        auto now = now_of(self);
        std::vector<std::string> stored;  // the outbox forgets them in one write
        for (auto& k : keys) {
          auto i = st.runs.find(k);
          if (i != st.runs.end() && i->second.unacked && st.box) stored.push_back(k);
          settle(st, i, now);
        }
        if (st.box)
          if (auto err = st.box->erase(stored)) outbox_failed(self, "delete", err);
      },
      [=](drain_atom) {
        // Runs still going, plus results the scheduler has not acknowledged yet:
        // a draining node waits for both before it exits.
        auto& st = self->state;
        uint32_t busy = 0;
        for (auto& [key, run] : st.runs) busy += !run.done || run.unacked ? 1 : 0;
        return busy;
      },
      [=](held_atom, uint64_t term, const std::string& cluster) {
        // What a leader must not declare lost: attempts executing here, and
        // attempts whose final report is not acknowledged yet. Asked for the
        // leader of `term`: older leaders' requests are refused from now on.
        // Another cluster's terms are not comparable: its leader starts the
        // count again (a group recovered from a lost quorum, or bootstrapped again).
        auto& st = self->state;
        if (cluster != st.leader_cluster) {
          st.leader_cluster = cluster;
          st.leader_term = term;
        } else if (term > st.leader_term) {
          st.leader_term = term;
        }
        std::vector<held_run> out;
        for (auto& [key, run] : st.runs)
          if (!run.done)
            out.push_back(held_of(key));
          else if (run.unacked)
            out.push_back({run.result.instance_id, run.result.attempt});
        return std::make_tuple(std::move(out), st.outbox_fault);
      },
      [=](subscribe_atom, caf::actor sink) { self->state.report_sink = std::move(sink); },
      [=](caf::tick_atom) {
        // Re-send final reports nobody acknowledged (a lost message, a leader that
        // changed, or a restart of this worker) through the router.
        auto& st = self->state;
        auto now = now_of(self);
        if (st.report_sink)
          for (auto& [key, run] : st.runs)
            if (run.unacked && now - run.last_sent >= st.cfg.resend_after) {
              run.last_sent = now;
              self->send(caf::actor_cast<router_actor>(st.report_sink), report_atom::value,
                         run.result);
            }
        purge(st, now);
        self->delayed_send(self, std::chrono::seconds(1), caf::tick_atom::value);
      },
      [=](cancel_run_atom, const std::string& instance_id) {
        // Cancels every attempt of the instance that still runs here; one held
        // for its instant is dropped unstarted (nothing ran: nothing to report).
        auto& runs = self->state.runs;
        for (auto i = runs.begin(); i != runs.end();) {
          auto& [key, run] = *i;
          if (run.done || key.compare(0, instance_id.size() + 1, instance_id + "#") != 0) {
            ++i;
          } else if (run.waiting) {
            for (auto& f : run.followers) caf::anon_send(f, done_atom::value, instance_id);
            i = runs.erase(i);
          } else {
            if (run.cancelled) run.cancelled->store(true);
            ++i;
          }
        }
      },
  });
}

}  // namespace aisched::worker
