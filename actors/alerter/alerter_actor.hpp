// The alerter actor, leader only: for every run the leader commits as failed
// or timed_out with no attempt left (retries become retry_waiting instead), it
// POSTs a JSON `run_failed` alert to each configured webhook (--alert-webhook).
// The POSTs run on the alerter's own HTTP threads, never on CAF's, so a slow
// or dead receiver cannot stall the scheduler; a failed POST is retried with
// exponential backoff, a bounded number of times. It also POSTs a
// `backup_failed` alert when this node's backup actor reports scheduled
// backups failing (actors/backup: after 3 in a row), with
// `Idempotency-Key: backup_failed#<node>#<failed_at ms>`.
//
// Delivery guarantee: at most once per final failure and webhook, decided by
// the node that leads when the failure is applied (followers ignore it, and a
// new leader does not replay history). A delivery already queued continues
// after this node loses leadership; it is lost only if the node stops before
// it succeeds. Each POST carries `Idempotency-Key: <instance_id>#<attempt>`
// so a receiver can drop the rare duplicate (a failure applied by an old
// leader and again by a new one that had not applied it yet).
// Talks to: raft (subscribes for commits and leadership), store (task names);
// told by the backup actor (actors/backup) when scheduled backups keep failing.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/activity.hpp"
#include "common/run_pool.hpp"
#include "proto/interfaces.hpp"

namespace aisched::alerter {

struct alerter_options {
  std::vector<std::string> webhooks;
  std::string node_id;
  uint32_t max_attempts = 6;        // POSTs per alert and webhook
  duration_ms initial_backoff = 1000;
  duration_ms max_backoff = 60'000;
  long timeout_ms = 5000;           // per POST
  size_t max_queued = 10'000;       // deliveries in flight; more are dropped (logged)
};

struct alerter_state {
  struct delivery {
    std::string url;
    std::string body;
    std::string key;  // instance_id#attempt
    uint32_t attempt = 0;
  };
  proto::store_actor store;
  alerter_options opts;
  std::shared_ptr<worker::run_pool> http;  // the POSTs' threads
  bool leading = false;
  uint64_t next_id = 1;
  std::map<uint64_t, delivery> deliveries;
  std::unordered_set<std::string> seen;  // keys alerted recently (bounded by `seen_order`)
  std::deque<std::string> seen_order;
  uint64_t sent = 0, failed = 0, dropped = 0;
  inspector::activity activity;
  static inline const char* name = "alerter";
};

proto::alerter_actor::behavior_type alerter_actor_impl(
    proto::alerter_actor::stateful_pointer<alerter_state> self, proto::store_actor store,
    alerter_options opts, std::shared_ptr<worker::run_pool> http);

}  // namespace aisched::alerter
