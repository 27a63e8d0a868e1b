// aisched-chaos, workload: REST calls to the group's members; see workload.hpp.
#include "tools/chaos/workload.hpp"

#include <boost/json.hpp>
#include <cmath>

#include "common/clock.hpp"
#include "proto/time.hpp"
#include "tools/common/http_client.hpp"

namespace aisched::chaos {

namespace json = boost::json;
using namespace std::chrono_literals;
using tools::http_client;
using tools::http_reply;

namespace {

http_reply call(const std::string& endpoint, const std::string& method, const std::string& target,
                const std::string& body = "", std::chrono::milliseconds timeout = 5s) {
  if (endpoint.empty()) return {0, "member is down"};
  http_client c("http://" + endpoint, {"", timeout});
  return c.call(method, target, body);
}

std::optional<json::object> parse_object(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  if (ec || !v.is_object()) return std::nullopt;
  return v.as_object();
}

/// `s` seconds as a word for `sleep`: "0.7".
std::string seconds_word(double s) {
  char out[32];
  std::snprintf(out, sizeof out, "%.1f", s);
  return out;
}

std::string status_and_body(const http_reply& r) {
  return std::to_string(r.status) + " " + r.body;
}

}  // namespace

std::string str(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

int64_t num(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  if (!v) return -1;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->get_uint64());
  return -1;
}

// -- reads ---------------------------------------------------------------------

std::optional<int64_t> next_fire_ms(const std::string& endpoint, uint64_t id) {
  auto r = call(endpoint, "GET", "/api/v1/tasks/" + std::to_string(id));
  if (r.status != 200) return std::nullopt;
  auto o = parse_object(r.body);
  if (!o) return std::nullopt;
  auto* next = o->if_contains("next_fire_times");
  if (!next || !next->is_array() || next->as_array().empty() ||
      !next->as_array()[0].is_string())
    return std::nullopt;
  auto at = parse_rfc3339(std::string(next->as_array()[0].get_string()));
  if (!at) return std::nullopt;
  return *at;
}

member_view view_of(const std::string& port) {
  member_view out;
  auto r = call(port, "GET", "/api/v1/cluster", "", 3s);
  if (r.status != 200) return out;
  auto o = parse_object(r.body);
  if (!o) return out;
  out.id = str(*o, "node_id");
  out.leader = str(*o, "leader");
  out.term = static_cast<uint64_t>(num(*o, "term"));
  if (auto* ms = o->if_contains("members"); ms && ms->is_array())
    for (auto& m : ms->as_array()) {
      if (!m.is_object()) continue;
      auto& mo = m.as_object();
      auto* voter = mo.if_contains("voter");
      out.members[str(mo, "id")] = voter && voter->is_bool() && voter->get_bool();
      auto* self = mo.if_contains("self");
      if (!self || !self->is_bool() || !self->get_bool()) continue;
      out.role = str(mo, "role");
      out.commit = static_cast<uint64_t>(num(mo, "commit_index"));
      out.applied = static_cast<uint64_t>(num(mo, "applied_index"));
      out.ok = true;
    }
  return out;
}

std::optional<std::vector<json::object>> list_all(const std::string& port,
                                                 const std::string& route) {
  std::vector<json::object> out;
  std::string cursor;
  // A bound, not an expectation: 1000 pages of 1000 is far beyond any chaos run.
  for (int page = 0; page < 1000; ++page) {
    auto target = route + "?limit=1000" + (cursor.empty() ? "" : "&cursor=" + cursor);
    auto r = call(port, "GET", target, "", 15s);
    if (r.status != 200) return std::nullopt;
    auto o = parse_object(r.body);
    if (!o || !o->contains("items") || !o->at("items").is_array()) return std::nullopt;
    for (auto& item : o->at("items").as_array())
      if (item.is_object()) out.push_back(item.as_object());
    cursor = str(*o, "next_cursor");
    if (cursor.empty()) return out;
  }
  return std::nullopt;
}

std::optional<std::map<uint32_t, json::object>> attempts_of(const std::string& port,
                                                           const std::string& id) {
  auto r = call(port, "GET", "/api/v1/instances/" + id + "/attempts", "", 10s);
  if (r.status != 200) return std::nullopt;
  auto o = parse_object(r.body);
  if (!o || !o->contains("attempts") || !o->at("attempts").is_array()) return std::nullopt;
  std::map<uint32_t, json::object> out;
  for (auto& a : o->at("attempts").as_array())
    if (a.is_object()) out[static_cast<uint32_t>(num(a.as_object(), "attempt"))] = a.as_object();
  return out;
}

// -- port_board ----------------------------------------------------------------

void port_board::set(const std::string& id, std::string endpoint) {
  std::lock_guard<std::mutex> lock(mu_);
  endpoints_[id] = std::move(endpoint);
}

std::vector<std::pair<std::string, std::string>> port_board::up() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& [id, endpoint] : endpoints_)
    if (!endpoint.empty()) out.emplace_back(id, endpoint);
  return out;
}

// -- workload ------------------------------------------------------------------

workload::workload(const port_board& ports, std::string effects_path, uint64_t seed,
                   workload_options options)
    : ports_(ports), effects_(std::move(effects_path)), opt_(options), rng_(seed) {}

workload::~workload() { stop_creates(); }

json::object workload::task_of(const std::string& name, const std::string& sleep) const {
  // The side effect comes first, so an execution killed while it sleeps has
  // left its line. The shell stays the run's parent (no `exec`): its command
  // line carries the harness's marker (the effects path) for the orphan check.
  json::object t;
  t["name"] = name;
  t["command"] = "echo \"$SCHEDULE_INSTANCE_ID $ATTEMPT\" >> " + effects_ + "; sleep " + sleep +
                 "; true";
  t["timeout"] = "30s";
  // A lost attempt (worker_lost) is retried as the next attempt.
  t["retry"] = json::object{{"policy", "fixed"}, {"interval", "500ms"}, {"max_attempts", 5}};
  // The checks read every run: retention's default (the newest 1 000 of a task)
  // would remove some in runs longer than about 15 minutes.
  t["retention"] = json::object{{"keep_runs", 1'000'000}};
  return t;
}

std::string workload::create_until(const std::string& name, const std::string& body,
                                   int64_t interval_ms, size_t first,
                                   std::chrono::steady_clock::time_point deadline) {
  std::string last;
  for (size_t attempt = first;; ++attempt) {
    if (steady_now() > deadline)
      return "could not create task " + name + ": " + last;
    auto up = ports_.up();
    if (up.empty()) return "no member is up";
    auto& [member, port] = up[attempt % up.size()];
    auto r = call(port, "POST", "/api/v1/tasks", body, opt_.request_timeout);
    if (r.status == 201) {
      auto o = parse_object(r.body);
      if (!o || num(*o, "id") <= 0) return "create answered 201 without an id: " + r.body;
      std::lock_guard<std::mutex> lock(mu_);
      acked_.push_back({static_cast<uint64_t>(num(*o, "id")), name, member, 0, interval_ms});
      ++counts_.creates_sent;
      ++counts_.creates_acked;
      return "";
    }
    last = status_and_body(r);
    std::this_thread::sleep_for(200ms);  // the group is still electing its first leader
  }
}

std::string workload::create_periodic(std::chrono::steady_clock::time_point deadline) {
  auto every = std::to_string(opt_.every.count()) + "ms";
  for (unsigned i = 0; i < opt_.periodic; ++i) {
    auto name = "chaos-every-" + std::to_string(i);
    auto t = task_of(name, "0.3");
    t["schedule"] = "@every " + every;
    if (auto err = create_until(name, json::serialize(t), opt_.every.count(), i, deadline);
        !err.empty())
      return err;
  }
  return "";
}

std::string workload::create_bulk_task(std::chrono::steady_clock::time_point deadline) {
  // Manual (no schedule): only bursts fire it. Run k sees SHARD_NO=k and sleeps
  // 0.2-0.9 s, so a burst ends over a while and a kill finds reports in flight.
  // `allow` never holds a burst back (a 409) while an earlier one still runs.
  auto name = std::string("chaos-bulk");
  auto t = task_of(name, "0.$((SHARD_NO % 8 + 2))");
  t["overlap"] = "allow";
  if (auto err = create_until(name, json::serialize(t), 0, 0, deadline); !err.empty()) return err;
  std::lock_guard<std::mutex> lock(mu_);
  bursts_.task = acked_.back().id;
  return "";
}

unsigned workload::enqueue_burst(const std::string& id, const std::string& endpoint) {
  uint64_t task = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    task = bursts_.task;
  }
  json::array payloads;
  for (size_t k = 0; k < opt_.burst; ++k) payloads.push_back(json::object{});
  auto r = call(endpoint, "POST", "/api/v1/tasks/" + std::to_string(task) + "/runs",
                json::serialize(json::object{{"payloads", std::move(payloads)}}),
                opt_.request_timeout);
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_.bursts_sent;
  if (r.status == 202) {
    acked_batch b{id, opt_.burst, {}};
    auto o = parse_object(r.body);
    auto* ids = o ? o->if_contains("instance_ids") : nullptr;
    if (ids && ids->is_array())
      for (auto& x : ids->as_array())
        if (x.is_string()) b.run_ids.emplace_back(x.get_string());
    counts_.burst_runs_acked += b.run_ids.size();
    bursts_.acked.push_back(std::move(b));
    ++counts_.bursts_acked;
  } else if (r.status == 0) {
    ++counts_.bursts_unanswered;
    ++bursts_.uncertain;  // it may have been committed
  } else {
    ++counts_.bursts_refused;
    ++counts_.bursts_refused_by_status[r.status];
    // A 5xx (e.g. 503 outcome_unknown) may yet be, or have been, committed.
    if (r.status >= 500) ++bursts_.uncertain;
  }
  return r.status;
}

void workload::start_creates() {
  running_ = true;
  thread_ = std::thread([this] { create_loop(); });
}

void workload::stop_creates() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
}

void workload::create_loop() {
  for (uint64_t n = 0; running_; ++n) {
    std::chrono::milliseconds gap;
    double sleep_s, lead_s;
    size_t pick;
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::exponential_distribution<double> gaps(1.0 / static_cast<double>(opt_.create_gap.count()));
      gap = std::chrono::milliseconds(static_cast<int64_t>(std::min(gaps(rng_), 5000.0)));
      sleep_s = std::uniform_real_distribution<double>(0.2, 2.0)(rng_);
      lead_s = std::uniform_real_distribution<double>(1.0, 3.0)(rng_);
      pick = rng_();
    }
    auto up = ports_.up();
    if (!up.empty()) {
      auto [member, port] = up[pick % up.size()];
      auto at_ms = system_now_ms() + static_cast<int64_t>(lead_s * 1000);
      auto name = "chaos-once-" + std::to_string(n);
      auto t = task_of(name, seconds_word(sleep_s));
      t["at"] = format_rfc3339(at_ms);
      auto r = call(port, "POST", "/api/v1/tasks", json::serialize(t), opt_.request_timeout);
      std::lock_guard<std::mutex> lock(mu_);
      ++counts_.creates_sent;
      if (r.status >= 200 && r.status < 300) {
        auto o = parse_object(r.body);
        if (o && num(*o, "id") > 0) {
          acked_.push_back({static_cast<uint64_t>(num(*o, "id")), name, member, at_ms, 0});
          ++counts_.creates_acked;
        } else {
          ++counts_.creates_refused;  // a 2xx without an id is no acknowledgement
          ++counts_.refused_by_status[r.status];
        }
      } else if (r.status == 0) {
        ++counts_.creates_unanswered;  // may or may not have been committed
      } else {
        ++counts_.creates_refused;
        ++counts_.refused_by_status[r.status];
      }
    }
    for (auto slept = 0ms; running_ && slept < gap; slept += 50ms)
      std::this_thread::sleep_for(std::min(50ms, gap - slept));
  }
}

std::string workload::pause_periodic(std::chrono::steady_clock::time_point deadline) {
  std::string missing;
  for (auto& t : acknowledged()) {
    if (t.interval_ms == 0) continue;
    bool paused = false;
    std::string last;
    for (size_t attempt = 0; !paused && steady_now() < deadline; ++attempt) {
      auto up = ports_.up();
      if (up.empty()) break;
      auto r = call(up[attempt % up.size()].second, "POST",
                    "/api/v1/tasks/" + std::to_string(t.id) + "/pause", "", opt_.request_timeout);
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++counts_.pauses_sent;
        if (r.status >= 200 && r.status < 300) ++counts_.pauses_acked;
      }
      // 409: a retried pause whose first try committed (already paused).
      paused = (r.status >= 200 && r.status < 300) || r.status == 409;
      last = std::to_string(r.status) + " " + r.body;
      if (!paused) std::this_thread::sleep_for(200ms);
    }
    if (!paused) missing += (missing.empty() ? "" : "; ") + t.name + " (" + last + ")";
  }
  return missing;
}

std::vector<acked_task> workload::acknowledged() const {
  std::lock_guard<std::mutex> lock(mu_);
  return acked_;
}

workload_counts workload::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

burst_record workload::bursts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bursts_;
}

}  // namespace aisched::chaos
