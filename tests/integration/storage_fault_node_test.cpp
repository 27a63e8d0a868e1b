// Storage faults on real `aisched` nodes, injected through the test hook
// `--fault-file PATH` (RocksDB writes fail while PATH exists): writes answer
// 507 storage_full (503 storage_unavailable for EIO) instead of killing the raft
// actor, /readyz says why while /healthz stays 200, a JSON log line and the
// storage metrics say what failed, and writes resume by themselves once the
// fault clears. In a group of three, a leader that cannot persist steps down,
// the others go on committing, and it rejoins (caught up, ready) afterwards.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/node_process.hpp"
#include "support/prometheus_text.hpp"
#include "support/raft_group_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

const char* a_task = R"({"name":"fault-probe","kind":"noop"})";

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

http_result create_task(uint16_t port) {
  return http_call(port, "POST", "/api/v1/tasks", a_task, 15s);
}

std::string error_code(const http_result& r) {
  boost::system::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec || !v.is_object() || !v.as_object().contains("error")) return "";
  return str(v.at("error").as_object(), "code");
}

/// The "reasons" of a /readyz answer, joined by " | ".
std::string ready_reasons(const http_result& r) {
  boost::system::error_code ec;
  auto v = json::parse(r.body, ec);
  std::string out;
  if (ec || !v.is_object()) return out;
  if (auto* rs = v.as_object().if_contains("reasons"); rs && rs->is_array())
    for (auto& x : rs->as_array())
      if (x.is_string()) out += (out.empty() ? "" : " | ") + std::string(x.get_string());
  return out;
}

/// The first line of `log` that holds every one of `parts` ("" if none).
std::string log_line(const std::string& log, std::initializer_list<const char*> parts) {
  size_t at = 0;
  while (at < log.size()) {
    auto end = log.find('\n', at);
    if (end == std::string::npos) end = log.size();
    auto line = log.substr(at, end - at);
    bool all = true;
    for (auto* p : parts) all = all && line.find(p) != std::string::npos;
    if (all) return line;
    at = end + 1;
  }
  return "";
}

/// Whether child `pid` has exited (a zombie not yet reaped: its status is kept).
bool exited(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, comm, state;
  in >> pid_field >> comm >> state;
  return !in || state == "Z";
}

std::optional<double> metric(uint16_t port, const std::string& name,
                             const std::map<std::string, std::string>& labels = {}) {
  auto r = http_call(port, "GET", "/metrics");
  if (r.status != 200) return std::nullopt;
  return parse_prometheus_text(r.body).value(name, labels);
}

/// The leader of group `g` (whose members read their fault files from `dir`)
/// once its disk fails as `word` says: the member that led, the answer to the
/// write it was given then, and the member that leads next (`none` for both
/// when no leader took a first write, `next` when nobody took over in 15 s).
struct failed_leader {
  size_t led = none, next = none;
  http_result write;
  std::string fault;  // its fault file, to remove when the disk is mended
};

failed_leader fail_the_leader(raft_group& g, const std::string& dir, const std::string& word) {
  failed_leader out;
  auto l = g.await_leader({0, 1, 2});
  if (l == none || !eventually([&] { return create_task(g.port(l)).status == 201; }, 15s))
    return out;
  out.led = l;
  out.fault = dir + "/fault-" + g.id(l);
  write_file(out.fault, word);
  out.write = create_task(g.port(l));
  std::vector<size_t> others;
  for (size_t i = 0; i < 3; ++i)
    if (i != l) others.push_back(i);
  out.next = g.await_leader(others, 15s);
  return out;
}

}  // namespace

TEST(storage_fault_node, full_disk_answers_507_readyz_says_why_and_writes_resume) {
  temp_dir dir;
  auto fault = dir.path() + "/fault";
  node_process node(dir.path() + "/data", {"--fault-file", fault});
  ASSERT_TRUE(node.running());
  auto port = node.http_port();
  ASSERT_TRUE(eventually([&] { return create_task(port).status == 201; }, 15s)) << node.log();
  ASSERT_TRUE(eventually([&] { return http_call(port, "GET", "/readyz").status == 200; }))
      << http_call(port, "GET", "/readyz").body;

  write_file(fault, "enospc");
  auto failed = create_task(port);
  EXPECT_EQ(failed.status, 507u) << failed.body;
  EXPECT_EQ(error_code(failed), "storage_full") << failed.body;
  EXPECT_NE(failed.body.find("No space left on device"), std::string::npos) << failed.body;
  // Still fenced, not dead: every write answers the same, never 503 receiver_down.
  auto again = create_task(port);
  EXPECT_EQ(again.status, 507u) << again.body;

  auto ready = http_call(port, "GET", "/readyz");
  EXPECT_EQ(ready.status, 503u) << ready.body;
  EXPECT_NE(ready_reasons(ready).find("storage: "), std::string::npos) << ready.body;
  EXPECT_NE(ready.body.find("No space left on device"), std::string::npos) << ready.body;
  EXPECT_NE(ready.body.find("\"ready\":false"), std::string::npos) << ready.body;
  EXPECT_EQ(http_call(port, "GET", "/healthz").status, 200u);
  EXPECT_EQ(metric(port, "storage_healthy"), 0.0);
  EXPECT_GE(metric(port, "storage_write_errors_total", {{"kind", "no_space"}}).value_or(0), 1.0);
  EXPECT_EQ(metric(port, "raft_is_leader"), 0.0);
  // One JSON error line says what failed.
  EXPECT_TRUE(eventually([&] {
    return !log_line(node.log(), {"\"level\":\"error\"", "storage write failed",
                                  "\"code\":\"storage_full\"", "No space left on device"})
                .empty();
  }, 5s)) << tail(node.log());

  std::filesystem::remove(fault);
  EXPECT_TRUE(eventually([&] { return create_task(port).status == 201; }, 20s))
      << create_task(port).body << tail(node.log());
  EXPECT_EQ(http_call(port, "GET", "/readyz").status, 200u) << http_call(port, "GET", "/readyz").body;
  EXPECT_EQ(metric(port, "storage_healthy"), 1.0);
  // Every task that answered 201 is there, the refused ones are not.
  auto list = http_call(port, "GET", "/api/v1/tasks?limit=100");
  ASSERT_EQ(list.status, 200u);
  EXPECT_EQ(parse(list).at("items").as_array().size(), 2u) << list.body;
  int status = node.stop(SIGTERM);
  ASSERT_TRUE(WIFEXITED(status)) << node.log();
  EXPECT_EQ(WEXITSTATUS(status), 0) << tail(node.log());
}

// RocksDB marks an EIO on its WAL fatal (no in-process resume), so the node
// answers 503 storage_unavailable, then exits non-zero with a log line saying
// which actor ended and why (crash-only), and a restart on the same data dir
// serves everything committed before.
TEST(storage_fault_node, failing_disk_answers_503_then_the_node_exits_and_restarts_whole) {
  temp_dir dir;
  auto fault = dir.path() + "/fault";
  auto data = dir.path() + "/data";
  {
    node_process node(data, {"--fault-file", fault});
    ASSERT_TRUE(node.running());
    auto port = node.http_port();
    ASSERT_TRUE(eventually([&] { return create_task(port).status == 201; }, 15s)) << node.log();
    write_file(fault, "eio");
    auto failed = create_task(port);
    EXPECT_EQ(failed.status, 503u) << failed.body;
    EXPECT_EQ(error_code(failed), "storage_unavailable") << failed.body;
    EXPECT_NE(failed.body.find("Input/output error"), std::string::npos) << failed.body;
    // Nobody stops it: it goes down by itself, saying why.
    EXPECT_TRUE(eventually([&] { return exited(node.pid()); }, 25s)) << tail(node.log());
    int status = node.stop(SIGKILL);  // reaps it; the SIGKILL only hits one that hung
    EXPECT_NE(node.log().find("essential actor terminated"), std::string::npos)
        << tail(node.log());
    EXPECT_TRUE(WIFEXITED(status)) << tail(node.log());
    if (WIFEXITED(status)) {
      EXPECT_EQ(WEXITSTATUS(status), 70) << tail(node.log());
    }
    EXPECT_NE(node.log().find("\"actor\":\"raft\""), std::string::npos) << tail(node.log());
  }
  std::filesystem::remove(fault);
  node_process node(data, {"--fault-file", fault});
  ASSERT_TRUE(node.running());
  ASSERT_TRUE(eventually([&] { return create_task(node.http_port()).status == 201; }, 15s))
      << tail(node.log());
  auto list = http_call(node.http_port(), "GET", "/api/v1/tasks?limit=100");
  EXPECT_EQ(parse(list).at("items").as_array().size(), 2u) << list.body;
}

// A disk whose fsyncs fail while its writes succeed (EIO on fsync, as a
// failing device reports it). The raft actor writes a ready's entries
// without sync and syncs them while the state machine computes its batch
// (storage/wal_sync.hpp): the write answers 503 (outcome_unknown: its entry
// is in the log, not known to be durable), and nothing of it shows while
// the fault lasts. After a restart on the mended disk the node holds the
// first task and at most the one whose outcome was unknown: no write shown
// and then lost, none twice.
TEST(storage_fault_node, a_failed_fsync_answers_503_and_shows_nothing_of_the_write) {
  temp_dir dir;
  auto fault = dir.path() + "/fault";
  auto data = dir.path() + "/data";
  auto tasks_listed = [](uint16_t port) -> std::optional<size_t> {
    auto list = http_call(port, "GET", "/api/v1/tasks?limit=100");
    if (list.status != 200) return std::nullopt;
    return parse(list).at("items").as_array().size();
  };
  {
    node_process node(data, {"--fault-file", fault});
    ASSERT_TRUE(node.running());
    auto port = node.http_port();
    ASSERT_TRUE(eventually([&] { return create_task(port).status == 201; }, 15s)) << node.log();
    write_file(fault, "esync");
    auto failed = create_task(port);
    EXPECT_EQ(failed.status, 503u) << failed.body;
    auto code = error_code(failed);
    EXPECT_TRUE(code == "outcome_unknown" || code == "storage_unavailable") << failed.body;
    // Read while the fault lasts (the node may also have gone down: RocksDB
    // may hold an fsync's EIO fatal): never the write whose sync failed.
    for (int i = 0; i < 5; ++i) {
      auto n = tasks_listed(port);
      if (!n) break;
      EXPECT_EQ(*n, 1u) << "a write shown before it was durable";
    }
    std::filesystem::remove(fault);
    node.stop(SIGKILL);
  }
  node_process node(data, {"--fault-file", fault});
  ASSERT_TRUE(node.running());
  ASSERT_TRUE(eventually([&] { return create_task(node.http_port()).status == 201; }, 15s))
      << tail(node.log());
  auto n = tasks_listed(node.http_port());
  ASSERT_TRUE(n);
  EXPECT_GE(*n, 2u);
  EXPECT_LE(*n, 3u);
}

TEST(storage_fault_group, leader_that_cannot_persist_steps_down_and_rejoins) {
  temp_dir dir;
  raft_group g(dir.path(), 3, {"--fault-file", dir.path() + "/fault-{id}"});
  ASSERT_TRUE(g.all_running());
  auto f = fail_the_leader(g, dir.path(), "enospc");
  ASSERT_NE(f.led, none) << g.dump();
  EXPECT_EQ(f.write.status, 507u) << f.write.body;
  ASSERT_NE(f.next, none) << g.dump();
  auto l = f.led, next = f.next;
  // The group keeps committing without it.
  for (int i = 0; i < 3; ++i) {
    auto r = create_task(g.port(next));
    EXPECT_EQ(r.status, 201u) << r.body;
  }
  auto ready = http_call(g.port(l), "GET", "/readyz");
  EXPECT_EQ(ready.status, 503u) << ready.body;
  EXPECT_NE(ready_reasons(ready).find("storage: "), std::string::npos) << ready.body;
  EXPECT_NE(view_of(g.port(l)).role, "leader");
  EXPECT_EQ(http_call(g.port(l), "GET", "/healthz").status, 200u);
  EXPECT_EQ(http_call(g.port(next), "GET", "/readyz").status, 200u)
      << http_call(g.port(next), "GET", "/readyz").body;

  std::filesystem::remove(f.fault);
  auto target = view_of(g.port(next)).commit;
  EXPECT_TRUE(eventually([&] {
    auto v = view_of(g.port(l));
    return v.ok && v.applied >= target && !v.leader.empty() &&
           http_call(g.port(l), "GET", "/readyz").status == 200;
  }, 20s)) << g.dump();
  // It serves writes again (forwarded to whoever leads) and reads what it missed.
  auto r = create_task(g.port(l));
  EXPECT_EQ(r.status, 201u) << r.body;
  auto list = http_call(g.port(l), "GET", "/api/v1/tasks?limit=100");
  ASSERT_EQ(list.status, 200u);
  EXPECT_EQ(parse(list).at("items").as_array().size(), 5u) << list.body;
  EXPECT_TRUE(g.all_running());
}

// A leader whose fsyncs fail while its writes succeed. It sends its appends
// before its own sync (Raft thesis 10.2.1), so its followers may hold and
// commit an entry it never made durable. The write answers 503, another
// member leads, and once the failed member is back on a mended disk every
// member holds the same tasks: what the leader wrote unsynced neither
// diverges from the group nor shows twice.
TEST(storage_fault_group, a_leader_whose_fsync_fails_rejoins_holding_what_the_group_holds) {
  temp_dir dir;
  raft_group g(dir.path(), 3, {"--fault-file", dir.path() + "/fault-{id}"});
  ASSERT_TRUE(g.all_running());
  auto f = fail_the_leader(g, dir.path(), "esync");
  ASSERT_NE(f.led, none) << g.dump();
  EXPECT_EQ(f.write.status, 503u) << f.write.body;
  ASSERT_NE(f.next, none) << g.dump();
  auto l = f.led, next = f.next;
  auto r = create_task(g.port(next));
  EXPECT_EQ(r.status, 201u) << r.body;

  std::filesystem::remove(f.fault);
  g.kill(l);  // whether EIO on fsync ended it or not: a restart on the mended disk
  g.start(l);
  ASSERT_TRUE(g.running(l)) << g.dump();
  auto ids_on = [&](size_t i) {
    std::vector<int64_t> out;
    auto list = http_call(g.port(i), "GET", "/api/v1/tasks?limit=100");
    if (list.status != 200) return out;
    auto v = parse(list);  // kept: the loop reads into it
    for (auto& t : v.at("items").as_array()) out.push_back(t.at("id").to_number<int64_t>());
    return out;
  };
  auto target = view_of(g.port(next)).commit;
  ASSERT_TRUE(eventually([&] {
    for (size_t i = 0; i < 3; ++i)
      if (view_of(g.port(i)).applied < target) return false;
    return true;
  }, 20s)) << g.dump();
  auto held = ids_on(next);
  EXPECT_GE(held.size(), 2u);
  EXPECT_LE(held.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(ids_on(i), held) << "member " << g.id(i) << g.dump();
}

namespace {

/// The largest write-ahead log file in `data` and its size (0 if none).
std::pair<std::string, uintmax_t> largest_wal(const std::string& data) {
  std::pair<std::string, uintmax_t> out{"", 0};
  for (auto& e : std::filesystem::directory_iterator(data))
    if (e.path().extension() == ".log" && e.file_size() > out.second)
      out = {e.path().string(), e.file_size()};
  return out;
}

/// XORs 64 bytes in the middle of file `path` of `size` bytes; a second call
/// puts them back.
void flip_middle(const std::string& path, uintmax_t size) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  std::string bytes(64, '\0');
  f.seekg(static_cast<std::streamoff>(size / 2));
  f.read(bytes.data(), 64);
  for (auto& c : bytes) c = static_cast<char>(c ^ 0x5a);
  f.seekp(static_cast<std::streamoff>(size / 2));
  f.write(bytes.data(), 64);
}

}  // namespace

// #41 item 2: a write-ahead log damaged in the middle (not a record torn at its
// end by a crash) stops the node at start, naming the file, instead of dropping
// every acknowledged write after the damage and handing their ids out again. The
// open changes nothing: with the bytes put back, every task is there and the
// next create gets the next id.
TEST(storage_fault_node, a_wal_damaged_in_the_middle_stops_the_node_and_loses_nothing) {
  temp_dir dir;
  auto data = dir.path() + "/data";
  constexpr int tasks = 300;
  {
    node_process node(data);
    ASSERT_TRUE(node.running()) << tail(node.log());
    ASSERT_TRUE(await_ready(node.http_port()));
    for (int i = 1; i <= tasks; ++i) {
      auto r = http_call(node.http_port(), "POST", "/api/v1/tasks",
                         R"({"name":"acked-)" + std::to_string(i) + R"(","kind":"noop"})", 15s);
      ASSERT_EQ(r.status, 201u) << r.body;
      ASSERT_EQ(num(parse(r).as_object(), "id"), i);
    }
    node.stop(SIGKILL);
  }
  auto [wal, wal_size] = largest_wal(data);
  ASSERT_GT(wal_size, 4096u) << "the tasks are not in a write-ahead log of " << data;
  auto flip = [&] { flip_middle(wal, wal_size); };
  flip();
  auto r = run_command({AISCHED_BINARY, "--data-dir", data, "--http-addr", "127.0.0.1:0",
                        "--cluster-addr", "127.0.0.1:0"},
                       40s);
  auto said = r.out + r.err;
  EXPECT_NE(r.exit_code, 0) << tail(said);
  EXPECT_NE(said.find("damaged"), std::string::npos) << tail(said);
  EXPECT_NE(said.find(std::filesystem::path(wal).filename().string()), std::string::npos)
      << "the error does not name the damaged file:\n" << tail(said);
  flip();
  node_process node(data);
  ASSERT_TRUE(node.running()) << tail(node.log());
  auto port = node.http_port();
  ASSERT_TRUE(await_ready(port));
  for (int i = 1; i <= tasks; ++i)
    ASSERT_EQ(http_call(port, "GET", "/api/v1/tasks/" + std::to_string(i)).status, 200u) << i;
  auto next = http_call(port, "POST", "/api/v1/tasks", R"({"name":"after","kind":"noop"})", 15s);
  ASSERT_EQ(next.status, 201u) << next.body;
  EXPECT_EQ(num(parse(next).as_object(), "id"), tasks + 1);
}

// The same damage on a member of a group: the member does not start (it would
// vote and lead with less than it acknowledged), the other two go on
// committing, and with its bytes put back it rejoins holding everything.
TEST(storage_fault_group, a_member_whose_wal_is_damaged_does_not_start_and_the_group_goes_on) {
  temp_dir dir;
  raft_group g(dir.path(), 3);
  ASSERT_TRUE(g.all_running());
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  constexpr int tasks = 200;
  for (int i = 1; i <= tasks; ++i) ASSERT_EQ(create_task(g.port(leader)).status, 201u);
  size_t victim = (leader + 1) % 3;
  ASSERT_TRUE(eventually([&] {
    return http_call(g.port(victim), "GET", "/api/v1/tasks/" + std::to_string(tasks)).status ==
           200;
  }, 15s)) << g.dump();
  g.kill(victim);
  auto [wal, wal_size] = largest_wal(g.data_dir(victim));
  ASSERT_GT(wal_size, 4096u) << "the tasks are not in a write-ahead log of member " << victim;
  flip_middle(wal, wal_size);
  std::string peers;
  for (size_t i = 0; i < 3; ++i)
    peers += (i ? "," : "") + g.id(i) + "=" + g.cluster_addr(i);
  auto r = run_command({AISCHED_BINARY, "--node-id", g.id(victim), "--peers", peers, "--data-dir",
                        g.data_dir(victim), "--cluster-addr", g.cluster_addr(victim),
                        "--http-addr", "127.0.0.1:0"},
                       40s);
  auto said = r.out + r.err;
  EXPECT_NE(r.exit_code, 0) << tail(said);
  EXPECT_NE(said.find("damaged"), std::string::npos) << tail(said);
  // Two of three still commit.
  auto more = create_task(g.port(leader));
  EXPECT_EQ(more.status, 201u) << more.body;
  EXPECT_EQ(num(parse(more).as_object(), "id"), tasks + 1);
  flip_middle(wal, wal_size);
  g.start(victim);
  ASSERT_TRUE(g.all_running()) << g.dump();
  EXPECT_TRUE(eventually([&] {
    return http_call(g.port(victim), "GET", "/api/v1/tasks/" + std::to_string(tasks + 1)).status ==
           200;
  }, 20s)) << g.dump();
  EXPECT_EQ(http_call(g.port(victim), "GET", "/api/v1/tasks/1").status, 200u);
}

namespace {

/// Every file under `dir` with its size and modification time, for "nothing changed".
std::map<std::string, std::pair<uintmax_t, std::filesystem::file_time_type>> listing(
    const std::string& dir) {
  std::map<std::string, std::pair<uintmax_t, std::filesystem::file_time_type>> out;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[e.path().string()] = {e.file_size(), e.last_write_time()};
  return out;
}

}  // namespace

// Issue 44: a data directory says its format. Data a newer build wrote is not
// opened by this one (RocksDB writes at open): exit 2 naming both formats and
// the writing build, with every file as it was; a directory of this format
// starts, and one without the file (an earlier build's) gets it.
TEST(storage_fault_node, a_data_directory_of_a_newer_format_is_refused_and_left_as_it_was) {
  temp_dir dir;
  auto data = dir.path() + "/data";
  int64_t id = 0;
  {
    node_process node(data);
    ASSERT_TRUE(node.running()) << tail(node.log());
    auto r = create_task(node.http_port());
    ASSERT_EQ(r.status, 201u) << r.body;
    id = num(parse(r).as_object(), "id");
    node.stop(SIGKILL);
  }
  auto stamp = data + "/FORMAT";
  std::ifstream in(stamp);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "aisched-format 2") << "a new data directory is not stamped";
  write_file(stamp, "aisched-format 7\nwritten-by 9.9.9\n");
  auto before = listing(data);
  auto r = run_command({AISCHED_BINARY, "--data-dir", data, "--http-addr", "127.0.0.1:0",
                        "--cluster-addr", "127.0.0.1:0"},
                       40s);
  auto said = r.out + r.err;
  EXPECT_EQ(r.exit_code, 2) << tail(said);
  for (auto word : {"format 7", "format 2", "9.9.9"})
    EXPECT_NE(said.find(word), std::string::npos) << word << "\n" << tail(said);
  EXPECT_EQ(listing(data), before) << "the refused start changed the data directory";

  // A directory whose stamp is lost (the database records its format) opens,
  // is stamped again, keeps its task.
  std::filesystem::remove(stamp);
  node_process node(data);
  ASSERT_TRUE(node.running()) << tail(node.log());
  EXPECT_EQ(http_call(node.http_port(), "GET", "/api/v1/tasks/" + std::to_string(id)).status,
            200u);
  EXPECT_TRUE(std::filesystem::exists(stamp));
}
