// The real executor of the worker's runs; see run_executor.hpp.
#include "actors/worker/run_executor.hpp"

#include <string>
#include <string_view>
#include <utility>

#include <caf/send.hpp>

namespace aisched::worker {

using namespace proto;

process_executor::process_executor(std::shared_ptr<run_pool> pool, exec_options opts)
    : pool_(std::move(pool)), opts_(std::move(opts)) {}

bool process_executor::launch(run_launch run) {
  auto opts = opts_;
  return pool_->submit([run = std::move(run), opts](const std::atomic<bool>& stopping) {
    auto& me = run.worker;
    auto& req = run.req;
    // The start is stamped on the pool's thread, on the worker's wall clock.
    caf::anon_send(me, started_atom::value, req.instance_id, req.attempt,
                   run.clock.now(*run.actor_clock));
    // The run stops when cancelled or when the pool shuts down (node stopping:
    // the unreported run times out on the leader and is retried elsewhere).
    auto stop = [&] { return run.cancelled->load() || stopping.load(); };
    auto live = [&](std::string_view chunk) {
      caf::anon_send(me, output_atom::value, req.instance_id, req.attempt, std::string(chunk));
    };
    auto result = execute_task(req, opts, stop, live);
    if (stopping.load()) return;
    caf::anon_send(me, done_atom::value, std::move(result), req.attempt);
  });
}

}  // namespace aisched::worker
