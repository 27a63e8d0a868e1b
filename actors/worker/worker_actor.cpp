// Behaviour of the worker actor; see worker_actor.hpp.
#include "actors/worker/worker_actor.hpp"

#include <chrono>

#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "obs/metrics.hpp"

namespace aisched::worker {

using namespace proto;

namespace {

std::string run_key(const std::string& instance_id, uint32_t attempt) {
  return instance_id + "#" + std::to_string(attempt);
}

/// Drops finished runs older than the dedup TTL (at most once a second).
void purge(worker_actor::stateful_pointer<worker_state> self, unix_ms now) {
  auto& st = self->state;
  if (now - st.last_purge < 1000) return;
  st.last_purge = now;
  for (auto i = st.runs.begin(); i != st.runs.end();) {
    if (i->second.done && now - i->second.last_seen > st.cfg.dedup_ttl) i = st.runs.erase(i);
    else ++i;
  }
}

/// Sends a final report and keeps it (durably) until the scheduler acknowledges it.
void deliver_final(worker_actor::stateful_pointer<worker_state> self, const std::string& key,
                   const worker_proxy_actor& to, const run_result& r) {
  auto& st = self->state;
  auto now = now_ms();
  obs::get().executions[static_cast<size_t>(r.state)].inc();  // each attempt ends here once
  st.unacked[key] = {r, now};
  if (st.box) st.box->put(key, r);
  self->send(to, report_atom::value, r);
}

}  // namespace

worker_actor::behavior_type worker_actor_impl(worker_actor::stateful_pointer<worker_state> self,
                                              worker_config cfg, std::shared_ptr<run_pool> pool) {
  self->state.cfg = std::move(cfg);
  self->state.pool = std::move(pool);
  if (!self->state.cfg.outbox_dir.empty()) {
    if (auto box = outbox::open(self->state.cfg.outbox_dir)) {
      self->state.box = std::move(*box);
      // Reports a previous incarnation could not get acknowledged: send them again.
      for (auto& [key, r] : self->state.box->load()) self->state.unacked[key] = {r, 0};
    }
  }
  self->delayed_send(self, std::chrono::seconds(1), caf::tick_atom::value);
  return {
      [=](execute_atom, const execute_request& req, const worker_proxy_actor& reply_to) -> bool {
        auto& st = self->state;
        auto now = now_ms();
        purge(self, now);
        auto key = run_key(req.instance_id, req.attempt);
        if (auto i = st.runs.find(key); i != st.runs.end()) {
          // A duplicate delivery: never run twice; repeat the outcome if known.
          i->second.reply_to = reply_to;
          i->second.last_seen = now;
          if (i->second.done) self->send(reply_to, report_atom::value, i->second.result);
          return true;
        }
        auto cancelled = std::make_shared<std::atomic<bool>>(false);
        st.runs[key] = worker_state::run{reply_to, cancelled, false, {}, now};
        if (req.kind == task_kind::noop) {
          // Nothing to execute: complete here, without a thread or a `running` report.
          run_result r;
          r.instance_id = req.instance_id;
          r.worker_id = st.cfg.id;
          r.attempt = req.attempt;
          r.state = instance_state::success;
          r.started_at = r.finished_at = now;
          auto& run = st.runs[key];
          run.done = true;
          run.result = r;
          deliver_final(self, key, reply_to, r);
          return true;
        }
        worker_actor me = self;
        auto opts = st.cfg.exec;
        bool queued = st.pool->submit([me, req, opts, cancelled](const std::atomic<bool>& stopping) {
          caf::anon_send(me, started_atom::value, req.instance_id, req.attempt, now_ms());
          // The run stops when cancelled or when the pool shuts down (node stopping:
          // the unreported run times out on the leader and is retried elsewhere).
          auto stop = [&] { return cancelled->load() || stopping.load(); };
          auto result = execute_task(req, opts, stop, {});
          if (stopping.load()) return;
          caf::anon_send(me, done_atom::value, std::move(result), req.attempt);
        });
        if (!queued) {
          st.runs.erase(key);
          return false;
        }
        obs::get().worker_inflight.inc();
        return true;
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
        i->second.done = true;
        i->second.result = r;
        i->second.last_seen = now_ms();
        deliver_final(self, key, i->second.reply_to, r);
      },
      [=](ack_atom, const std::vector<std::string>& keys) {
        auto& st = self->state;
        for (auto& k : keys) {
          if (st.unacked.erase(k) && st.box) st.box->erase(k);
        }
      },
      [=](subscribe_atom, caf::actor sink) { self->state.report_sink = std::move(sink); },
      [=](caf::tick_atom) {
        // Re-send final reports nobody acknowledged (a lost message, a leader that
        // changed, or a restart of this worker) through the router.
        auto& st = self->state;
        auto now = now_ms();
        if (st.report_sink)
          for (auto& [key, p] : st.unacked)
            if (now - p.last_sent >= st.cfg.resend_after) {
              p.last_sent = now;
              self->send(caf::actor_cast<router_actor>(st.report_sink), report_atom::value,
                         p.result);
            }
        purge(self, now);
        self->delayed_send(self, std::chrono::seconds(1), caf::tick_atom::value);
      },
      [=](cancel_run_atom, const std::string& instance_id) {
        // Cancels every attempt of the instance that still runs here.
        for (auto& [key, run] : self->state.runs)
          if (!run.done && key.compare(0, instance_id.size() + 1, instance_id + "#") == 0)
            run.cancelled->store(true);
      },
  };
}

}  // namespace aisched::worker
