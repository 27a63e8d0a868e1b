// aisched-chaos, workload: what the harness asks of the group over its REST
// API. Periodic shell tasks (`@every`), one-shot shell tasks created at random
// members from a background thread with every acknowledged create recorded,
// bursts of runs of a manual task (bulk enqueue, for kill_mid_burst), the pause
// that ends the workload, the membership changes that replace a member
// (damage_wal), and the reads the checks use (a member's own view from GET
// /api/v1/cluster, paged task and instance lists, attempts).
// Every run appends "$SCHEDULE_INSTANCE_ID $ATTEMPT" to the side-effect file.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <boost/json/object.hpp>

#include "tools/chaos/bursts.hpp"

namespace aisched::chaos {

// -- reads ---------------------------------------------------------------------

/// One member's own view, from GET /api/v1/cluster (`ok` false if it did not answer).
struct member_view {
  bool ok = false;
  std::string id, role, leader;
  uint64_t term = 0, commit = 0, applied = 0;
  std::map<std::string, bool> members;  // the membership it lists: id -> voter
};
/// `endpoint` is a member's "HOST:PORT" ("" for a member that is down).
member_view view_of(const std::string& endpoint);

/// Every item of a paged list route (`/api/v1/tasks`, `/api/v1/instances`) on the
/// member at `endpoint`, following `next_cursor`; nullopt if a page did not answer 200.
std::optional<std::vector<boost::json::object>> list_all(const std::string& endpoint,
                                                        const std::string& route);

/// The next instant (unix ms) task `id` fires, from the first of the
/// `next_fire_times` that GET /api/v1/tasks/{id} lists; nullopt if none answered.
std::optional<int64_t> next_fire_ms(const std::string& endpoint, uint64_t id);

/// The attempts in GET /api/v1/instances/{id}/attempts by attempt number;
/// nullopt if it did not answer 200.
std::optional<std::map<uint32_t, boost::json::object>> attempts_of(const std::string& endpoint,
                                                                   const std::string& id);

/// The string / integer field `key` of `o` ("" / -1 when absent or another type).
std::string str(const boost::json::object& o, const char* key);
int64_t num(const boost::json::object& o, const char* key);

// -- the workload --------------------------------------------------------------

/// The members' current API endpoints, by id ("" while a member is down). The main
/// thread writes it as it kills and restarts members; the create thread reads it.
class port_board {
 public:
  void set(const std::string& id, std::string endpoint);
  std::vector<std::pair<std::string, std::string>> up() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> endpoints_;
};

/// A task whose create a member acknowledged (2xx with its id).
struct acked_task {
  uint64_t id = 0;
  std::string name;
  std::string via;         // the member that answered
  int64_t at_ms = 0;       // one-shot: the `at` instant; else 0
  int64_t interval_ms = 0; // periodic: the `@every` interval; else 0 (both 0: manual)
};

struct workload_options {
  unsigned periodic = 3;             // `@every` tasks
  std::chrono::milliseconds every{1000};
  std::chrono::milliseconds create_gap{500};  // mean gap between one-shot creates
  std::chrono::milliseconds request_timeout{5000};
  size_t burst = 100;  // runs per bulk enqueue (kill_mid_burst), at most 1000
};

struct workload_counts {
  uint64_t creates_sent = 0, creates_acked = 0, creates_refused = 0, creates_unanswered = 0;
  uint64_t pauses_sent = 0, pauses_acked = 0;
  std::map<unsigned, uint64_t> refused_by_status;  // HTTP status of refused creates
  uint64_t bursts_sent = 0, bursts_acked = 0, bursts_refused = 0, bursts_unanswered = 0;
  uint64_t burst_runs_acked = 0;
  std::map<unsigned, uint64_t> bursts_refused_by_status;
};

class workload {
 public:
  workload(const port_board& ports, std::string effects_path, uint64_t seed,
           workload_options options);
  ~workload();  // stops the create thread

  /// Creates the periodic tasks (before faults start); "" or the error.
  std::string create_periodic(std::chrono::steady_clock::time_point deadline);
  /// Creates the manual task that bursts enqueue runs of (before start_creates());
  /// "" or the error.
  std::string create_bulk_task(std::chrono::steady_clock::time_point deadline);
  /// Sends one bulk enqueue of `options.burst` runs of the bulk task to member
  /// `id` at `endpoint` and records the answer; returns its HTTP status (0: no
  /// answer). Thread-safe: a fault kills the member while it waits.
  unsigned enqueue_burst(const std::string& id, const std::string& endpoint);
  /// Starts / stops the thread that sends one-shot creates to random members.
  void start_creates();
  void stop_creates();
  /// Pauses every periodic task, retrying through any member until `deadline`;
  /// "" or the tasks it could not pause.
  std::string pause_periodic(std::chrono::steady_clock::time_point deadline);

  std::vector<acked_task> acknowledged() const;
  workload_counts counts() const;
  burst_record bursts() const;

 private:
  /// A shell task that appends its side-effect line, then sleeps `sleep` (a
  /// shell word: seconds); the caller adds when it fires.
  boost::json::object task_of(const std::string& name, const std::string& sleep) const;
  /// Creates task `name` from `body` through the members in turn until one
  /// acknowledges it (recorded with `interval_ms`) or `deadline`; "" or the error.
  std::string create_until(const std::string& name, const std::string& body, int64_t interval_ms,
                           size_t first, std::chrono::steady_clock::time_point deadline);
  void create_loop();

  const port_board& ports_;
  std::string effects_;
  workload_options opt_;
  mutable std::mutex mu_;  // guards rng_, acked_, counts_, bursts_
  std::mt19937_64 rng_;
  std::vector<acked_task> acked_;
  workload_counts counts_;
  burst_record bursts_;
  std::atomic<bool> running_{false};
  std::thread thread_;
};

}  // namespace aisched::chaos
