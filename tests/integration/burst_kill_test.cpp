// A kill in the middle of a burst (issue 41 item 4), on a real single node at
// its defaults: aisched-load's burst of no-op runs due at one instant, the
// node SIGKILLed once some have finished on its built-in worker. A no-op run
// finished on the worker is one its worker logged as started (a no-op ends as
// it starts, and the line comes after its report is in the outbox). After the
// restart every one of them ends `success`: the worker sends again the
// reports its outbox kept; none ends `worker_lost`.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

/// The instance ids of the worker's "run started" lines in `log`.
std::set<std::string> started_in(const std::string& log) {
  std::set<std::string> out;
  size_t at = 0;
  while (at < log.size()) {
    auto end = log.find('\n', at);
    if (end == std::string::npos) break;  // a line still being written
    auto line = log.substr(at, end - at);
    at = end + 1;
    if (line.find("\"run started\"") == std::string::npos) continue;
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (ec || !v.is_object()) continue;
    auto& o = v.as_object();
    if (str(o, "msg") == "run started" && str(o, "actor") == "worker")
      out.insert(str(o, "instance_id"));
  }
  return out;
}

/// Counts the "run started" lines a node appends to its log file, reading
/// only what was added since the last call.
class started_counter {
 public:
  explicit started_counter(const std::string& path) : in_(path, std::ios::binary) {}
  size_t poll() {
    in_.clear();  // past the end last time: read on from there
    std::string chunk(1 << 16, '\0');
    for (;;) {
      in_.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      auto got = static_cast<size_t>(in_.gcount());
      if (got == 0) break;
      // Kept from the previous read: a match split between two reads.
      auto text = carry_ + chunk.substr(0, got);
      for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
        ++n_;
      auto keep = std::min(text.size(), needle.size() - 1);
      carry_ = text.substr(text.size() - keep);
    }
    return n_;
  }

 private:
  static constexpr std::string_view needle = "\"run started\"";
  std::ifstream in_;
  std::string carry_;
  size_t n_ = 0;
};

}  // namespace

TEST(burst_kill, runs_finished_before_a_kill_mid_burst_end_success_after_the_restart) {
  constexpr size_t runs = 3000;
  constexpr size_t kill_after = 1000;  // finished runs seen before the SIGKILL
  temp_dir dir;
  auto data = dir.path() + "/data";
  std::set<std::string> finished;
  {
    node_process node(data);
    ASSERT_TRUE(node.running());
    auto port = node.http_port();
    child_process load({AISCHED_LOAD_BINARY, "burst", "--n", std::to_string(runs), "--lead",
                        "20", "--keep-tasks", "--server",
                        "http://127.0.0.1:" + std::to_string(port), "-o", "json"},
                       dir.path() + "/load.log");
    // Watched closely (not every 20 ms): the burst's runs finish within
    // milliseconds of each other, and the kill must land among them.
    auto deadline = std::chrono::steady_clock::now() + 180s;
    started_counter counter(data + ".log");  // the harness's log file
    bool seen = false;
    while (!seen && std::chrono::steady_clock::now() < deadline) {
      seen = counter.poll() >= kill_after;
      if (!seen) std::this_thread::sleep_for(1ms);
    }
    ASSERT_TRUE(seen) << "the burst did not run: " << tail(load.log()) << tail(node.log());
    EXPECT_EQ(node.stop(SIGKILL), SIGKILL);
    load.stop(SIGKILL);
    finished = started_in(node.log());  // everything the killed process wrote
  }
  ASSERT_GE(finished.size(), kill_after);

  node_process node(data);
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  std::vector<std::string> lost;
  for (auto& id : finished) {
    std::string state, error;
    bool final = eventually(
        [&] {
          auto r = http_call(port, "GET", "/api/v1/instances/" + id);
          if (r.status != 200) return false;
          auto v = parse(r);
          state = str(v.as_object(), "state");
          error = str(v.as_object(), "error");
          return state == "success" || state == "failed" || state == "timed_out" ||
                 state == "cancelled";
        },
        60s);
    ASSERT_TRUE(final) << id << " is still " << state << tail(node.log());
    if (state != "success") lost.push_back(id + " " + state + " " + error);
  }
  EXPECT_TRUE(lost.empty()) << lost.size() << " of " << finished.size()
                            << " runs finished before the kill did not end success, e.g. "
                            << lost.front();
}
