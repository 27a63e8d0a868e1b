// Thread pool for task attempts; see run_pool.hpp.
#include "common/run_pool.hpp"

namespace aisched::worker {

run_pool::run_pool(size_t threads) {
  for (size_t i = 0; i < std::max<size_t>(1, threads); ++i) threads_.emplace_back([this] { loop(); });
}

run_pool::~run_pool() { stop(); }

bool run_pool::submit(job j) {
  {
    std::lock_guard<std::mutex> guard(mtx_);
    if (stopping_) return false;
    queue_.push_back(std::move(j));
  }
  cv_.notify_one();
  return true;
}

void run_pool::stop() {
  {
    std::lock_guard<std::mutex> guard(mtx_);
    stopping_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void run_pool::loop() {
  for (;;) {
    job j;
    {
      std::unique_lock<std::mutex> guard(mtx_);
      cv_.wait(guard, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      j = std::move(queue_.front());
      queue_.pop_front();
    }
    j(stopping_);
  }
}

}  // namespace aisched::worker
