// Behaviour of the alerter actor; see alerter_actor.hpp.
#include "actors/alerter/alerter_actor.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <chrono>

#include "common/counted.hpp"
#include "common/curl_session.hpp"
#include "obs/metrics.hpp"
#include "common/log.hpp"
#include "proto/backoff.hpp"
#include "proto/json_wire.hpp"

namespace aisched::alerter {

using namespace proto;

namespace {

using self_ptr = alerter_actor::stateful_pointer<alerter_state>;

constexpr auto request_timeout = std::chrono::seconds(10);
constexpr size_t seen_capacity = 100'000;

bool final_failure(const instance& x) {
  return x.state == instance_state::failed || x.state == instance_state::timed_out;
}

/// Hands delivery `id` to an HTTP thread; the outcome comes back as `ack`.
void attempt(self_ptr self, uint64_t id) {
  auto& st = self->state;
  auto i = st.deliveries.find(id);
  if (i == st.deliveries.end()) return;
  auto& d = i->second;
  d.attempt += 1;
  alerter_actor me = self;
  auto url = d.url, body = d.body;
  std::vector<std::string> headers{"Idempotency-Key: " + d.key, "User-Agent: aisched-alerter"};
  auto timeout = st.opts.timeout_ms;
  bool queued = st.http->submit([me, id, url, body, headers, timeout](const std::atomic<bool>&) {
    auto r = http::post_json(url, body, timeout, headers);
    caf::anon_send(me, ack_atom::value, id, r.status >= 200 && r.status < 300);
  });
  if (!queued) st.deliveries.erase(i);  // node stopping
}

void remember(alerter_state& st, const std::string& key) {
  st.seen.insert(key);
  st.seen_order.push_back(key);
  if (st.seen_order.size() > seen_capacity) {
    st.seen.erase(st.seen_order.front());
    st.seen_order.pop_front();
  }
}

/// Queues one delivery of `body` per webhook, with Idempotency-Key `key`.
void post_all(self_ptr self, const std::string& body, const std::string& key) {
  auto& st = self->state;
  for (auto& url : st.opts.webhooks) {
    if (st.deliveries.size() >= st.opts.max_queued) {
      st.dropped += 1;
      obs::get().alerts_failed.inc();
      log::warn("alert dropped: too many undelivered alerts",
                {{"actor", "alerter"}, {"key", key}, {"url", url}});
      continue;
    }
    auto id = st.next_id++;
    st.deliveries[id] = {url, body, key, 0};
    attempt(self, id);
  }
}

/// Queues one delivery of `x`'s alert per webhook.
void alert(self_ptr self, const instance& x, const std::string& task_name) {
  auto body = boost::json::serialize(alert_to_json(x, task_name, self->state.opts.node_id));
  post_all(self, body, x.id + "#" + std::to_string(x.attempt));
}

}  // namespace

alerter_actor::behavior_type alerter_actor_impl(self_ptr self, store_actor store,
                                                alerter_options opts,
                                                std::shared_ptr<worker::run_pool> http) {
  self->state.store = std::move(store);
  self->state.opts = std::move(opts);
  self->state.http = std::move(http);
  return inspector::counted(
      self, {
                [=](inspect_atom) {
                  auto& st = self->state;
                  return inspector::summary_of(
                      self, {{"leading", inspector::text(st.leading)},
                             {"webhooks", std::to_string(st.opts.webhooks.size())},
                             {"queued", std::to_string(st.deliveries.size())},
                             {"sent", std::to_string(st.sent)},
                             {"failed", std::to_string(st.failed)},
                             {"dropped", std::to_string(st.dropped)}});
                },
                [=](leader_atom, const leadership& l) { self->state.leading = l.leading; },
                // From this node's backup actor, which runs only while it leads.
                [=](backup_failed_atom, const std::string& error, const std::string& dir,
                    uint64_t misses, unix_ms failed_at, unix_ms last_success) {
                  auto& st = self->state;
                  if (st.opts.webhooks.empty()) return;
                  auto body = boost::json::serialize(backup_alert_to_json(
                      st.opts.node_id, dir, error, misses, failed_at, last_success));
                  post_all(self, body,
                           "backup_failed#" + st.opts.node_id + "#" + std::to_string(failed_at));
                },
                [=](committed_atom, const applied& a) {
                  auto& st = self->state;
                  if (!st.leading || st.opts.webhooks.empty()) return;
                  for (auto& x : a.instances) {
                    if (!final_failure(x)) continue;
                    auto key = x.id + "#" + std::to_string(x.attempt);
                    if (st.seen.count(key)) continue;  // the same failure applied again
                    remember(st, key);
                    // The task's name makes the alert readable; without it, alert anyway.
                    self->request(st.store, request_timeout, get_task_atom::value, std::string(),
                                  x.task_id)
                        .then([=](task& t) { alert(self, x, t.name); },
                              [=](caf::error&) { alert(self, x, ""); });
                  }
                },
                [=](ack_atom, uint64_t id, bool delivered) {
                  auto& st = self->state;
                  auto i = st.deliveries.find(id);
                  if (i == st.deliveries.end()) return;
                  auto& d = i->second;
                  if (delivered) {
                    obs::get().alerts_ok.inc();
                    st.sent += 1;
                    st.deliveries.erase(i);
                    return;
                  }
                  if (d.attempt >= st.opts.max_attempts) {
                    obs::get().alerts_failed.inc();
                    st.failed += 1;
                    log::warn("alert not delivered; giving up",
                              {{"actor", "alerter"},
                               {"url", d.url},
                               {"key", d.key},
                               {"attempts", std::to_string(d.attempt)}});
                    st.deliveries.erase(i);
                    return;
                  }
                  obs::get().alerts_retried.inc();
                  proto::retry_policy doubling;  // exponential, x2, no jitter
                  doubling.initial = st.opts.initial_backoff;
                  doubling.max = st.opts.max_backoff;
                  auto backoff = retry::backoff(doubling, d.attempt, 0);
                  self->delayed_send(self, std::chrono::milliseconds(backoff), wake_atom::value,
                                     id);
                },
                [=](wake_atom, uint64_t id) { attempt(self, id); },
            });
}

}  // namespace aisched::alerter
