// The load sampler actor, leader only: every sample interval (30 s by default,
// --load-sample-interval) it asks raft whether this node leads and, if so,
// reads every registered worker's load, CPU and memory from the router and
// commits them as one `record_load`, which also
// prunes samples older than the retention (7 days). The history is therefore
// replicated: any member answers GET /api/v1/workers/{id}/load-history, and a
// new leader carries on where the old one stopped. Talks to: raft (status,
// proposes), router (list_workers).
#pragma once

#include <cstdint>

#include "common/activity.hpp"
#include "common/clock.hpp"
#include "proto/interfaces.hpp"

namespace aisched::load_sampler {

struct sampler_options {
  duration_ms interval = 30'000;
  duration_ms retention = 7LL * 24 * 3600 * 1000;
  wall_clock clock{};  // the samples' instant (common/clock.hpp): the system's
};

struct sampler_state {
  proto::raft_actor raft;
  proto::router_actor router;
  sampler_options opts;
  wall_clock clock;  // opts.clock
  bool leading = false;
  uint64_t term = 0;
  uint64_t rounds = 0;       // rounds committed by this node
  uint64_t failures = 0;     // rounds not committed (leader change, timeout)
  unix_ms last_round = 0;
  inspector::activity activity;
  static inline const char* name = "load_sampler";
};

proto::load_sampler_actor::behavior_type load_sampler_actor_impl(
    proto::load_sampler_actor::stateful_pointer<sampler_state> self, proto::raft_actor raft,
    proto::router_actor router, sampler_options opts);

}  // namespace aisched::load_sampler
