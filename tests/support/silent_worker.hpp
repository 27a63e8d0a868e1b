// A native worker actor that does nothing (tests/actors: router and worker
// proxy tests): it says it took each burst but answers for none of its runs,
// or, stopped as by SIGSTOP, never answers a burst at all; or, cut off one
// way (deaf_worker), answers nothing the leader sends, not even a probe.
#pragma once

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <caf/response_promise.hpp>

#include "proto/interfaces.hpp"

namespace aisched::test {

using burst_promises = std::vector<caf::response_promise>;

/// A worker that says it took a burst but answers for none of its runs (an
/// empty list), and does nothing else; `got` (if any) keeps the requests.
/// With `stopped`, it never answers a burst at all, as one stopped by SIGSTOP:
/// its answers are kept there, never delivered. With `deaf` too, only while
/// `*deaf`, and then it answers no probe (inspect) either.
inline proto::worker_actor::behavior_type deaf_worker(
    proto::worker_actor::pointer self, std::shared_ptr<std::vector<proto::execute_request>> got,
    std::shared_ptr<burst_promises> stopped, std::shared_ptr<bool> deaf) {
  using namespace proto;
  auto silent = [=] { return stopped && (!deaf || *deaf); };
  return {
      [](execute_atom, const execute_request&, const worker_proxy_actor&) { return true; },
      [=](execute_atom, const std::vector<execute_request>& reqs,
          const worker_proxy_actor&) -> caf::result<std::vector<std::string>> {
        if (got) got->insert(got->end(), reqs.begin(), reqs.end());
        if (!silent()) return std::vector<std::string>{};
        stopped->push_back(self->make_response_promise());
        return stopped->back();
      },
      [](cancel_run_atom, const std::string&) {},
      [](started_atom, const std::string&, uint32_t, unix_ms) {},
      [](wake_atom, unix_ms) {},
      [](flush_atom) {},
      [](done_atom, const run_result&, uint32_t) {},
      [](ack_atom, const std::vector<std::string>&) {},
      [](subscribe_atom, const caf::actor&) {},
      [](output_atom, const std::string&, uint32_t, const std::string&) {},
      [](output_atom, const std::string&, const caf::actor&) { return false; },
      [](drain_atom) { return uint32_t{0}; },
      [](held_atom, uint64_t, const std::string&) { return std::make_tuple(std::vector<held_run>{}, std::string()); },
      [](caf::tick_atom) {},
      [=](inspect_atom) -> caf::result<actor_summary> {
        if (!deaf || !silent()) return actor_summary{};
        stopped->push_back(self->make_response_promise());
        return stopped->back();
      },
  };
}

/// deaf_worker, never deaf.
inline proto::worker_actor::behavior_type silent_worker(
    proto::worker_actor::pointer self, std::shared_ptr<std::vector<proto::execute_request>> got,
    std::shared_ptr<burst_promises> stopped) {
  return deaf_worker(self, std::move(got), std::move(stopped), nullptr);
}

}  // namespace aisched::test
