// A fixed pool of threads that run blocking work off CAF's scheduler threads:
// task attempts (actors/worker/executor), HTTP dispatch to external workers
// (worker proxies) and webhook POSTs (the alerter). An actor submits jobs;
// each job reports back by message. stop() cancels what runs, then joins every thread, so no
// job outlives the actor system. A job runs on one thread from start to end, and
// a thread exits only after its job: a run's supervisor is that thread's child and
// is told (PR_SET_PDEATHSIG) when the thread, i.e. the node, dies.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace aisched::worker {

class run_pool {
 public:
  /// A job gets the pool's stop flag (set when the pool shuts down).
  using job = std::function<void(const std::atomic<bool>& stopping)>;

  explicit run_pool(size_t threads);
  ~run_pool();
  run_pool(const run_pool&) = delete;
  run_pool& operator=(const run_pool&) = delete;

  /// Queues `j`; returns false once stop() was called. Thread-safe.
  bool submit(job j);

  /// Sets the stop flag (running jobs should cancel), drops queued jobs and
  /// joins all threads. Idempotent. Thread-safe.
  void stop();

  size_t threads() const { return threads_.size(); }

 private:
  void loop();
  std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<job> queue_;
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
};

}  // namespace aisched::worker
