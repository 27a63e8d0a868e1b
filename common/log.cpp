// JSON-lines logger on spdlog; see log.hpp.
#include "common/log.hpp"

#include <atomic>
#include <memory>

#include <boost/json.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace aisched::log {

namespace {

std::string node_id_ = "?";
std::atomic<int> min_level_{static_cast<int>(level::info)};

spdlog::logger& sink() {
  static auto logger = [] {
    auto l = spdlog::stderr_logger_mt("aisched");
    l->set_pattern("%v");  // the line is fully formatted JSON already
    l->flush_on(spdlog::level::trace);
    return l;
  }();
  return *logger;
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
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch());
  boost::json::object o;
  o["ts_ms"] = ms.count();
  o["level"] = level_name(lvl);
  o["node"] = node_id_;
  o["msg"] = boost::json::string_view(msg.data(), msg.size());
  for (auto& [k, v] : fields) o[boost::json::string_view(k.data(), k.size())] = v;
  sink().info(boost::json::serialize(o));
}

}  // namespace aisched::log
