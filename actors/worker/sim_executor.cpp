// The simulation's executor; see sim_executor.hpp.
#include "actors/worker/sim_executor.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

#include "common/splitmix.hpp"
#include "proto/time.hpp"

namespace aisched::worker {

using namespace proto;

namespace {

/// FNV-1a of `s`: the same on every platform and build (std::hash is not).
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

/// The longest a run may take when its request states no timeout (as execute_task).
constexpr duration_ms default_limit = 3'600'000;

/// One run: started at once, done after its duration (or at its timeout),
/// killed by a cancel seen at a poll, silent once the executor stopped.
/// `observer` (may be empty) is told its start and its end.
caf::behavior sim_run(caf::event_based_actor* self, run_launch run, sim_outcome outcome,
                      duration_ms poll, std::shared_ptr<const std::atomic<bool>> stopped,
                      std::function<void(const sim_run_event&)> observer) {
  const auto& req = run.req;
  auto started = run.clock.now(self->clock());
  auto tell = [=](sim_run_event::kind what, unix_ms at) {
    if (observer)
      observer(sim_run_event{self->id(), run.req.instance_id, run.req.attempt, what, at});
  };
  tell(sim_run_event::kind::started, started);
  caf::anon_send(run.worker, started_atom::value, req.instance_id, req.attempt, started);
  auto output = "simulated run: " + format_duration(outcome.duration) + ", exit " +
                std::to_string(outcome.exit_code) + "\n";
  caf::anon_send(run.worker, output_atom::value, req.instance_id, req.attempt, output);
  auto limit = req.timeout > 0 ? req.timeout : default_limit;
  self->delayed_send(self, std::chrono::milliseconds(std::min(outcome.duration, limit)),
                     done_atom::value);
  if (poll > 0) self->delayed_send(self, std::chrono::milliseconds(poll), caf::tick_atom::value);
  // A killed run's code, as the real executor's: SIGKILL's for a process, -1 for HTTP.
  int32_t killed = req.kind == task_kind::http ? -1 : 128 + 9;
  auto finish = [=](instance_state state, int32_t code, std::string error) {
    run_result r;
    r.instance_id = run.req.instance_id;
    r.state = state;
    r.exit_code = code;
    r.error = std::move(error);
    r.output = output;
    r.started_at = started;
    r.finished_at = run.clock.now(self->clock());
    tell(sim_run_event::kind::ended, r.finished_at);
    caf::anon_send(run.worker, done_atom::value, std::move(r), run.req.attempt);
    self->quit();
  };
  auto silent = [=] {
    tell(sim_run_event::kind::stopped, run.clock.now(self->clock()));
    self->quit();
  };
  return {
      [=](caf::tick_atom) {
        if (stopped->load()) return silent();
        if (run.cancelled->load()) return finish(instance_state::failed, killed, "cancelled");
        self->delayed_send(self, std::chrono::milliseconds(poll), caf::tick_atom::value);
      },
      [=](done_atom) {
        if (stopped->load()) return silent();
        if (run.cancelled->load()) return finish(instance_state::failed, killed, "cancelled");
        if (outcome.duration > limit)
          return finish(instance_state::timed_out, killed,
                        "timed out after " + format_duration(run.req.timeout));
        if (outcome.exit_code == 0) return finish(instance_state::success, 0, "");
        finish(instance_state::failed, outcome.exit_code,
               "exit status " + std::to_string(outcome.exit_code));
      },
  };
}

}  // namespace

sim_executor::sim_executor(sim_options opts)
    : opts_(opts), stopped_(std::make_shared<std::atomic<bool>>(false)) {}

sim_outcome sim_executor::outcome_of(const std::string& instance_id, uint32_t attempt,
                                     uint64_t task_id) const {
  auto h = splitmix64(opts_.seed ^ splitmix64(fnv1a(instance_id) ^ (uint64_t{attempt} << 32)));
  sim_outcome o;
  duration_range range{opts_.min_duration, opts_.max_duration};
  if (opts_.durations_of)
    if (auto own = opts_.durations_of(task_id)) range = *own;
  auto lo = std::max<duration_ms>(range.min, 0);
  auto span = static_cast<uint64_t>(std::max<duration_ms>(range.max - lo, 0)) + 1;
  o.duration = lo + static_cast<duration_ms>(h % span);
  h = splitmix64(h);
  if (opts_.max_exit_code > 0 && h % 1000 < opts_.failure_permille)
    o.exit_code = 1 + static_cast<int32_t>(splitmix64(h) % static_cast<uint64_t>(opts_.max_exit_code));
  return o;
}

bool sim_executor::launch(run_launch run) {
  if (stopped_->load()) return false;
  auto outcome = outcome_of(run.req.instance_id, run.req.attempt, run.req.task_id);
  auto& sys = run.worker.home_system();
  sys.spawn(sim_run, std::move(run), outcome, opts_.poll,
            std::shared_ptr<const std::atomic<bool>>(stopped_), opts_.observer);
  return true;
}

void sim_executor::stop() { stopped_->store(true); }

}  // namespace aisched::worker
