// JSON-lines logger on spdlog; see log.hpp.
#include "common/log.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <boost/json.hpp>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "common/clock.hpp"

namespace aisched::log {

namespace {

std::string node_id_ = "?";
std::atomic<int> min_level_{static_cast<int>(level::info)};

/// A line that comes this soon after the last write waits in the buffer...
constexpr auto burst_gap = std::chrono::milliseconds(1);
/// ...at most this long (a flusher thread).
constexpr auto flush_period = std::chrono::milliseconds(10);

/// Lines to stderr (fd 2), through a buffer while they come in a burst. Written
/// a line at a time, a busy node's info lines (four a run) cost a write(2) each
/// under the lock and took more than half of its actors' time (BENCHMARKS.md
/// 2026-12-05 sixth). Now a line is written at once when the last write was
/// burst_gap ago or more (a quiet node logs as before: a line is in the file
/// when the call returns), and so is a warn or error line, with what waits
/// before it; the lines of a burst wait until then, 64 KiB of them, or
/// flush_period (the flusher thread), and are written at exit. A node killed
/// outright loses at most the last flush_period of a burst's info lines.
class buffered_stderr final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    buf_.append(msg.payload.data(), msg.payload.size());  // a JSON line already
    buf_.push_back('\n');
    if (msg.level >= spdlog::level::warn || buf_.size() >= (64u << 10) ||
        steady_now() - last_write_ >= burst_gap)
      flush_();
  }

  void flush_() override {
    if (buf_.empty()) return;  // the flusher's call with nothing waiting: not a write
    size_t done = 0;
    while (done < buf_.size()) {
      auto n = ::write(STDERR_FILENO, buf_.data() + done, buf_.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // nowhere to write: the lines are dropped, not kept growing
      done += static_cast<size_t>(n);
    }
    buf_.clear();
    last_write_ = steady_now();
  }

 private:
  std::string buf_;
  std::chrono::steady_clock::time_point last_write_;
};

spdlog::logger& sink() {
  // Never destroyed: the flusher thread and atexit use it until the process ends.
  static auto* logger = [] {
    auto l = std::make_shared<spdlog::logger>("aisched", std::make_shared<buffered_stderr>());
    l->set_level(spdlog::level::trace);
    auto* kept = new std::shared_ptr<spdlog::logger>(l);
    std::thread([l] {
      for (;;) {
        std::this_thread::sleep_for(flush_period);
        l->flush();
      }
    }).detach();
    std::atexit([] { sink().flush(); });
    return kept;
  }();
  return **logger;
}

}  // namespace

const char* level_name(level l) {
  switch (l) {
    case level::debug: return "debug";
    case level::info: return "info";
    case level::warn: return "warn";
    case level::error: return "error";
  }
  return "info";
}

void set_level(level min_level) { min_level_ = static_cast<int>(min_level); }

level current_level() { return static_cast<level>(min_level_.load()); }

bool enabled(level lvl) { return static_cast<int>(lvl) >= min_level_.load(); }

void init(std::string node_id, level min_level) {
  node_id_ = std::move(node_id);
  min_level_ = static_cast<int>(min_level);
  sink();
}

bool parse_level(std::string_view s, level& out) {
  if (s == "debug") out = level::debug;
  else if (s == "info") out = level::info;
  else if (s == "warn") out = level::warn;
  else if (s == "error") out = level::error;
  else return false;
  return true;
}

void write(level lvl, std::string_view msg, std::initializer_list<field> fields) {
  if (!enabled(lvl)) return;
  boost::json::object o;
  o["ts_ms"] = system_now_ms();  // logging is outside the simulation: the system's time
  o["level"] = level_name(lvl);
  o["node"] = node_id_;
  o["msg"] = boost::json::string_view(msg.data(), msg.size());
  for (auto& [k, v] : fields) o[boost::json::string_view(k.data(), k.size())] = v;
  auto spd = lvl == level::error  ? spdlog::level::err
             : lvl == level::warn ? spdlog::level::warn
             : lvl == level::info ? spdlog::level::info
                                  : spdlog::level::debug;
  sink().log(spd, boost::json::serialize(o));
}

}  // namespace aisched::log
