// Behaviour of the worker proxy; see worker_proxy_actor.hpp.
#include "actors/worker_proxy/worker_proxy_actor.hpp"
#include "actors/worker_proxy/report_batch.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/worker_proxy/http_dispatch.hpp"
#include "common/curl_session.hpp"
#include "proto/errors.hpp"
#include "common/log.hpp"
#include "common/traceparent.hpp"

#include <caf/send.hpp>

namespace aisched::worker_proxy {

using namespace proto;

namespace {

using self_ptr = worker_proxy_actor::stateful_pointer<proxy_state>;

constexpr auto request_timeout = std::chrono::seconds(10);
constexpr auto retry_after = std::chrono::milliseconds(500);

void queue_report(self_ptr self, run_result r) {
  auto& st = self->state;
  st.pending.push_back(std::move(r));
  if (!st.flush_scheduled) {
    st.flush_scheduled = true;
    self->send(self, flush_atom::value);
  }
}

run_result refused(const std::string& instance_id, const std::string& worker_id,
                   std::string why) {
  run_result r;
  r.instance_id = instance_id;
  r.worker_id = worker_id;
  r.state = instance_state::failed;
  r.exit_code = -1;
  r.error = std::move(why);
  return r;
}

/// The committed outcome of a report: one log line with the run's ids.
void log_result(const instance& x) {
  if (x.state == instance_state::running) return;  // "run started" was logged by the worker
  auto lvl = x.state == instance_state::success ? log::level::info : log::level::warn;
  if (!log::enabled(lvl)) return;  // per run: no strings built when off
  log::write(lvl, "run result", {{"actor", "worker_proxy"},
                                 {"task_id", std::to_string(x.task_id)},
                                 {"instance_id", x.id},
                                 {"trace_id", x.trace_id},
                                 {"worker_id", x.worker_id},
                                 {"attempt", std::to_string(x.attempt)},
                                 {"state", std::string(name_of(x.state))},
                                 {"exit_code", std::to_string(x.exit_code)}});
}

/// Proposes the queued reports as one command, a run's start folded into its
/// result when both are queued; transient failures retry.
void flush_reports(self_ptr self) {
  auto& st = self->state;
  st.flush_scheduled = false;
  if (st.pending.empty()) return;
  fold_starts(st.pending);
  report_results cmd{st.term, now_of(self), std::move(st.pending)};
  st.pending.clear();
  // Kept once for both handlers (not copied into each): the reports, to
  // queue again on a transient failure, and the keys of the final ones,
  // which the worker keeps in its outbox until it hears they are settled.
  auto copy = std::make_shared<const std::vector<run_result>>(cmd.results);
  auto keys = std::make_shared<std::vector<std::string>>();
  for (auto& r : *copy)
    if (r.state != instance_state::running && r.attempt != 0)
      keys->push_back(r.instance_id + "#" + std::to_string(r.attempt));
  auto ack = [self, keys] {
    if (self->state.worker && !keys->empty())
      self->send(self->state.worker, ack_atom::value, std::move(*keys));
  };
  self->request(st.raft, request_timeout, propose_atom::value, command{std::move(cmd)})
      .then(
          [=](applied& a) {
            for (auto& x : a.instances) log_result(x);
            ack();
          },
            [=](caf::error& err) {
              // Rejected items (a late report for a cancelled run) are final; a
              // timeout or storage hiccup is retried so no result is lost.
              auto code = view(err).code;
              if (code == errc::illegal_transition || code == errc::not_found ||
                  code == errc::invalid_argument)
                return ack();
              for (auto& r : *copy) self->state.pending.push_back(r);
              self->state.flush_scheduled = true;
              self->delayed_send(self, retry_after, flush_atom::value);
            });
}

/// An external worker's report, verified by the router: proposed on its own
/// (not batched) so its sender hears this report's own outcome.
caf::result<applied> settle_report(self_ptr self, run_result r) {
  auto rp = self->make_response_promise<applied>();
  report_results cmd{self->state.term, now_of(self), {std::move(r)}};
  self->request(self->state.raft, request_timeout, propose_atom::value, command{std::move(cmd)})
      .then(
          [=](applied& a) mutable {
            for (auto& x : a.instances) log_result(x);
            rp.deliver(std::move(a));
          },
          [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

/// Posts run `req` to the external worker at `self`'s callback URL; a post
/// that fails becomes a failed attempt.
void post_execute(self_ptr self, const std::shared_ptr<worker::run_pool>& pool,
                  const execute_request& req) {
  auto& st = self->state;
  auto url = st.callback_url + "/internal/tasks/execute";
  auto body =
      execute_body(req, st.report_base + "/api/v1/instances/" + req.instance_id + "/report");
  worker_proxy_actor me = self;
  auto wid = st.worker_id;
  std::vector<std::string> headers;
  if (auto tp = http::traceparent(req.trace_id); !tp.empty())
    headers.push_back("traceparent: " + tp);
  bool queued = pool->submit([=](const std::atomic<bool>&) {
    auto reply = http::post_json(url, body, 10'000, headers);
    if (reply.status == 202 || reply.status == 200) return;
    auto why = reply.status == 0 ? "dispatch to " + url + " failed: " + reply.error
                                 : "worker " + wid + " answered HTTP " +
                                       std::to_string(reply.status) + " to execute";
    caf::anon_send(me, report_atom::value, refused(req.instance_id, wid, why));
  });
  if (!queued) queue_report(self, refused(req.instance_id, wid, "node is stopping"));
}

/// Sends a native worker the runs handed over since the last send, in one
/// request. A run it refuses never started there: it goes back to the router
/// to be placed again. A run it gives no answer for, or all of them when the
/// request fails, may have been taken: each becomes a failed attempt.
void send_runs(self_ptr self) {
  auto& st = self->state;
  if (st.to_send.empty()) return;
  auto reqs = std::move(st.to_send);
  st.to_send.clear();
  st.to_send.reserve(reqs.size());  // the next burst is likely as large: no regrowth, no moves
  std::vector<std::string> ids;
  std::vector<uint32_t> attempts;
  ids.reserve(reqs.size());
  attempts.reserve(reqs.size());
  // Past this the answer is not awaited and each run counts as a failed
  // attempt: a worker reaching the request later refuses it unstarted.
  auto answer_by =
      now_of(self) + std::chrono::duration_cast<std::chrono::milliseconds>(request_timeout).count();
  for (auto& r : reqs) {
    r.answer_by = answer_by;
    ids.push_back(r.instance_id);
    attempts.push_back(r.attempt);
  }
  worker_proxy_actor me = self;
  self->request(st.worker, request_timeout, execute_atom::value, std::move(reqs), me)
      .then(
          [=](std::vector<std::string>& refusals) {
            auto& wid = self->state.worker_id;
            std::vector<run_result> not_taken;
            for (size_t i = 0; i < ids.size(); ++i) {
              if (i >= refusals.size()) {
                queue_report(self, refused(ids[i], wid,
                                           "dispatch to worker " + wid +
                                               " failed: no answer for it"));
                continue;
              }
              if (refusals[i].empty()) continue;  // taken
              auto r = refused(ids[i], wid, "worker " + wid + " refused it: " + refusals[i]);
              r.attempt = attempts[i];
              not_taken.push_back(std::move(r));
            }
            if (!not_taken.empty())
              self->send(self->state.router, not_taken_atom::value, std::move(not_taken));
          },
          [=](caf::error& err) {
            auto& wid = self->state.worker_id;
            // Not a refusal (the worker is gone, or answered an error): it
            // said nothing in time, so the router stops placing there.
            if (err == caf::sec::request_timeout && self->state.router)
              self->send(self->state.router, unanswered_atom::value, wid);
            for (auto& id : ids)
              queue_report(self, refused(id, wid,
                                         "dispatch to worker " + wid +
                                             " failed: " + view(err).message));
          });
}

}  // namespace

worker_proxy_actor::behavior_type http_worker_proxy_impl(
    self_ptr self, std::string worker_id, std::string callback_url, std::string report_base,
    std::shared_ptr<worker::run_pool> pool, raft_actor raft, uint64_t term, wall_clock clock) {
  auto& st = self->state;
  st.worker_id = std::move(worker_id);
  st.callback_url = std::move(callback_url);
  st.report_base = std::move(report_base);
  st.raft = std::move(raft);
  st.term = term;
  st.clock = clock;
  return {
      [=](execute_atom, const execute_request& req) {
        auto& st = self->state;
        auto i = st.holding.find(req.instance_id);
        auto now = now_of(self);  // the leader's clock, as the instant's
        if (req.hold_ms > 0 && req.not_before > now && i == st.holding.end()) {
          st.holding[req.instance_id] = req;
          self->delayed_send(self, std::chrono::milliseconds(req.not_before - now),
                             wake_atom::value, req.instance_id, req.not_before);
          return;
        }
        if (i != st.holding.end()) {
          // Delivered again while held (its task changed): what it will run;
          // posted at the instant already set, once.
          i->second = req;
          return;
        }
        post_execute(self, pool, req);
      },
      [=](wake_atom, const std::string& instance_id, unix_ms due) {
        auto& held = self->state.holding;
        auto i = held.find(instance_id);
        if (i == held.end()) return;  // dropped by a cancel
        if (auto left = due - now_of(self); left > 0) {  // never before the instant
          self->delayed_send(self, std::chrono::milliseconds(left), wake_atom::value,
                             instance_id, due);
          return;
        }
        auto req = std::move(i->second);
        held.erase(i);
        post_execute(self, pool, req);
      },
      [=](execute_atom, flush_atom) {},  // each run is posted as it comes (above)
      [=](cancel_run_atom, const std::string& instance_id) {
        if (self->state.holding.erase(instance_id) != 0) return;  // never sent: nothing runs
        auto url = self->state.callback_url + "/internal/tasks/cancel";
        auto body = cancel_body(instance_id);
        pool->submit([=](const std::atomic<bool>&) { http::post_json(url, body, 5'000); });
      },
      [=](report_atom, run_result& r) { queue_report(self, std::move(r)); },
      [=](report_atom, run_result& r, settle_atom) { return settle_report(self, std::move(r)); },
      [=](flush_atom) { flush_reports(self); },
  };
}

worker_proxy_actor::behavior_type worker_proxy_impl(self_ptr self, std::string worker_id,
                                                    worker_actor worker,
                                                    not_taken_sink router, raft_actor raft,
                                                    uint64_t term, wall_clock clock) {
  auto& st = self->state;
  st.worker_id = std::move(worker_id);
  st.worker = std::move(worker);
  st.router = std::move(router);
  st.raft = std::move(raft);
  st.term = term;
  st.clock = clock;
  return {
      [=](execute_atom, execute_request& req) {
        auto& st = self->state;
        if (st.to_send.empty()) self->send(self, execute_atom::value, flush_atom::value);
        st.to_send.push_back(std::move(req));
      },
      [=](execute_atom, flush_atom) { send_runs(self); },
      [=](cancel_run_atom, const std::string& instance_id) {
        // Not sent yet: dropped here, as it would otherwise reach the worker
        // after this cancel and run.
        auto& q = self->state.to_send;
        auto i = std::find_if(q.begin(), q.end(),
                              [&](const execute_request& r) { return r.instance_id == instance_id; });
        if (i != q.end()) {
          q.erase(i);
          return;
        }
        self->send(self->state.worker, cancel_run_atom::value, instance_id);
      },
      [=](wake_atom, const std::string&, unix_ms) {},  // a native worker holds runs itself
      [=](report_atom, run_result& r) { queue_report(self, std::move(r)); },
      [=](report_atom, run_result& r, settle_atom) { return settle_report(self, std::move(r)); },
      [=](flush_atom) { flush_reports(self); },
  };
}

}  // namespace aisched::worker_proxy
