// A background WAL sync; see wal_sync.hpp. It times a real fsync on its own
// thread, so it reads the system's steady clock (allowed by
// tests/layers/check_clock_injection.py).
#include "storage/wal_sync.hpp"

#include "common/clock.hpp"
#include "storage/rocks.hpp"

namespace aisched::storage {

wal_sync::wal_sync(rocks& db) : db_(db), thread_([this] { run(); }) {}

wal_sync::~wal_sync() {
  {
    std::lock_guard<std::mutex> guard(mtx_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void wal_sync::start() {
  {
    std::lock_guard<std::mutex> guard(mtx_);
    requested_ = true;
    done_ = false;
  }
  started_ = true;
  cv_.notify_all();
}

caf::error wal_sync::wait() {
  if (!started_) return {};
  started_ = false;
  std::unique_lock<std::mutex> lock(mtx_);
  cv_.wait(lock, [this] { return done_; });
  done_ = false;
  return std::move(result_);
}

void wal_sync::run() {
  std::unique_lock<std::mutex> lock(mtx_);
  for (;;) {
    cv_.wait(lock, [this] { return requested_ || stop_; });
    if (!requested_) return;  // stopping, nothing asked
    requested_ = false;
    lock.unlock();
    auto began = steady_now();
    auto err = db_.sync_wal();
    auto took = steady_now() - began;
    lock.lock();
    result_ = std::move(err);
    duration_ = took;
    done_ = true;
    cv_.notify_all();
  }
}

}  // namespace aisched::storage
