// Behaviour of the worker proxy; see worker_proxy_actor.hpp.
#include "actors/worker_proxy/worker_proxy_actor.hpp"

#include <chrono>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "proto/errors.hpp"

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

}  // namespace

worker_proxy_actor::behavior_type worker_proxy_impl(self_ptr self, std::string worker_id,
                                                    worker_actor worker, raft_actor raft,
                                                    uint64_t term) {
  auto& st = self->state;
  st.worker_id = std::move(worker_id);
  st.worker = std::move(worker);
  st.raft = std::move(raft);
  st.term = term;
  return {
      [=](execute_atom, const execute_request& req) {
        worker_proxy_actor me = self;
        self->request(self->state.worker, request_timeout, execute_atom::value, req, me)
            .then(
                [=](bool accepted) {
                  if (accepted) return;
                  run_result r;
                  r.instance_id = req.instance_id;
                  r.worker_id = self->state.worker_id;
                  r.state = instance_state::failed;
                  r.exit_code = -1;
                  r.error = "worker " + self->state.worker_id + " refused the run (stopping)";
                  queue_report(self, std::move(r));
                },
                [=](caf::error& err) {
                  run_result r;
                  r.instance_id = req.instance_id;
                  r.worker_id = self->state.worker_id;
                  r.state = instance_state::failed;
                  r.exit_code = -1;
                  r.error = "dispatch to worker " + self->state.worker_id +
                            " failed: " + view(err).message;
                  queue_report(self, std::move(r));
                });
      },
      [=](cancel_run_atom, const std::string& instance_id) {
        self->send(self->state.worker, cancel_run_atom::value, instance_id);
      },
      [=](report_atom, run_result& r) { queue_report(self, std::move(r)); },
      [=](flush_atom) {
        auto& st = self->state;
        st.flush_scheduled = false;
        if (st.pending.empty()) return;
        report_results cmd{st.term, now_ms(), std::move(st.pending)};
        st.pending.clear();
        auto copy = cmd.results;
        self->request(st.raft, request_timeout, propose_atom::value, command{std::move(cmd)})
            .then([](applied&) {},
                  [=](caf::error& err) {
                    // Rejected items (a late report for a cancelled run) are final; a
                    // timeout or storage hiccup is retried so no result is lost.
                    auto code = view(err).code;
                    if (code == errc::illegal_transition || code == errc::not_found ||
                        code == errc::invalid_argument)
                      return;
                    self->delayed_send(self, retry_after, flush_atom::value);
                    for (auto& r : copy) self->state.pending.push_back(r);
                    self->state.flush_scheduled = true;
                  });
      },
  };
}

}  // namespace aisched::worker_proxy
