// Backups in a group of three (issue 46): a save cut by the leader's SIGKILL
// leaves no partial file, and a save through a surviving member (from the next
// leader) verifies with every run; scheduled backups (every member with its own
// --backup-dir) move to the next leader and rotate in every directory.
#include <gtest/gtest.h>

#include "backup_support.hpp"

using namespace aisched::test;
using namespace aisched::test::backup;

namespace {

/// address its HTTP serves at: what `aischedctl cluster snapshot save` needs to save
/// from the leader through that member.
bool knows_leader_http(uint16_t port) {
  auto r = http_call(port, "GET", "/api/v1/cluster", "", 2s);
  if (r.status != 200) return false;
  boost::system::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec || !v.is_object()) return false;
  auto* members = v.as_object().if_contains("members");
  if (!members || !members->is_array()) return false;
  for (auto& m : members->as_array()) {
    auto& o = m.as_object();
    auto* self = o.if_contains("self");
    auto* reachable = o.if_contains("reachable");
    if (str(o, "role") == "leader" && self && self->is_bool() && !self->get_bool() &&
        reachable && reachable->is_bool() && reachable->get_bool() && !str(o, "http_addr").empty())
      return true;
  }
  return false;
}

TEST_F(backup_node, a_save_cut_by_the_group_leaders_kill_fails_cleanly_and_the_next_leader_saves) {
  auto file = path("cut.snapshot"), tmp = file + ".tmp";
  raft_group g(path("group"), 3);
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  // 5 000 pending runs with a 10 kB payload each: a file of about 50 MB.
  ASSERT_TRUE(fill_with_held_runs(g.port(leader))) << g.dump();

  child_process ctl(save_args(g.port(leader), file), path("ctl.log"));
  // Once the CLI receives, it is stopped: the leader can then hand the kernel no
  // more than the socket buffers hold, so its kill falls inside the transfer.
  ASSERT_TRUE(await_bytes(tmp, ctl)) << ctl.log();
  ASSERT_TRUE(freeze(ctl.pid())) << "the save ended before it could be cut\n" << ctl.log();
  g.kill(leader);
  int status = ctl.stop(SIGCONT, 60s);  // resumes it, then waits for its exit
  ASSERT_TRUE(WIFEXITED(status)) << status << "\n" << ctl.log();
  EXPECT_FALSE(fs::exists(tmp)) << ctl.log();
  if (WEXITSTATUS(status) == 0) {
    // The leader had sent the whole file before its kill: kept only once verified.
    EXPECT_NE(ctl.log().find("(verified)"), std::string::npos) << ctl.log();
    ASSERT_TRUE(fs::exists(file)) << ctl.log();
    EXPECT_EQ(verified_records(file, "instances"), held_batches * held_per_batch);
  } else {
    EXPECT_EQ(WEXITSTATUS(status), 1) << ctl.log();
    EXPECT_NE(ctl.log().find("incomplete_snapshot"), std::string::npos) << ctl.log();
    EXPECT_NE(ctl.log().find("nothing was kept"), std::string::npos) << ctl.log();
    EXPECT_FALSE(fs::exists(file)) << "a partial file was left\n" << ctl.log();
  }

  // The two others elect a leader; a save through the one that follows (the CLI
  // asks it where the leader serves) gets the file from it, with every acknowledged run.
  auto rest = g.running_members();
  ASSERT_EQ(rest.size(), 2u) << g.dump();
  auto next = g.await_leader(rest, 20s);
  ASSERT_NE(next, none) << g.dump();
  auto through = rest[0] == next ? rest[1] : rest[0];
  ASSERT_TRUE(eventually([&] { return knows_leader_http(g.port(through)); }, 15s))
      << g.id(through) << " does not know where its leader serves\n" << g.dump();
  auto file2 = path("next.snapshot");
  auto saved = run_command(save_args(g.port(through), file2), 120s);
  ASSERT_EQ(saved.exit_code, 0) << saved.out << saved.err << "\n" << g.dump();
  EXPECT_NE(saved.out.find("(verified)"), std::string::npos) << saved.out;
  EXPECT_TRUE(fs::exists(file2));
  EXPECT_FALSE(fs::exists(file2 + ".tmp"));
  EXPECT_EQ(verified_records(file2, "instances"), held_batches * held_per_batch)
      << "acknowledged runs are missing from the next leader's snapshot";
}

TEST_F(backup_node, scheduled_backups_go_on_after_a_leader_change) {
  // Every member with the same flags, each with its own directory.
  auto backups = [this](const std::string& id) { return path("backups-" + id); };
  raft_group g(path("group"), 3,
               {"--backup-dir", path("backups-{id}"), "--backup-interval", "1s", "--backup-keep",
                "2"});
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  ASSERT_TRUE(create_task(g.port(leader), R"({"name":"kept","command":"true","schedule":"@every 1h"})"))
      << g.dump();
  // Three backups from the leader: its directory was rotated at least once.
  ASSERT_TRUE(eventually([&] { return metric(g.port(leader), "backups_total") >= 3; }, 20s))
      << g.dump();
  ASSERT_FALSE(names_ending(backups(g.id(leader)), ".snap").empty()) << g.dump();

  // What each directory holds at the kill: a new file after it is a new backup.
  std::vector<std::set<std::string>> before;
  for (size_t i = 0; i < 3; ++i) {
    auto names = names_ending(backups(g.id(i)), ".snap");
    before.emplace_back(names.begin(), names.end());
  }
  g.kill(leader);
  auto rest = g.running_members();
  ASSERT_EQ(rest.size(), 2u) << g.dump();
  auto next = g.await_leader(rest, 20s);
  ASSERT_NE(next, none) << g.dump();
  auto next_dir = backups(g.id(next));
  auto new_files = [&](size_t i) {
    std::vector<std::string> out;
    for (auto& n : names_ending(backups(g.id(i)), ".snap"))
      if (!before[i].count(n)) out.push_back(n);
    return out;
  };
  ASSERT_TRUE(eventually([&] { return !new_files(next).empty(); }, 20s))
      << "the new leader " << g.id(next) << " wrote no backup\n" << g.dump();
  for (auto& n : new_files(next)) EXPECT_EQ(n.rfind("aisched-", 0), 0u) << n;
  // Two more from it: its own directory rotated too.
  auto written = metric(g.port(next), "backups_total");
  ASSERT_GE(written, 1) << g.dump();
  ASSERT_TRUE(
      eventually([&] { return metric(g.port(next), "backups_total") >= written + 2; }, 20s))
      << g.dump();
  EXPECT_EQ(metric(g.port(next), "backup_failures_total"), 0) << g.dump();
  // Only the leader writes: the member that follows wrote none since the kill.
  auto follower = rest[0] == next ? rest[1] : rest[0];
  if (g.agreed_leader(rest) == next) {
    EXPECT_TRUE(new_files(follower).empty()) << g.id(follower) << " wrote backups as a follower";
  }

  for (size_t i = 0; i < 3; ++i)
    EXPECT_LE(names_ending(backups(g.id(i)), ".snap").size(), 2u)
        << g.id(i) << ": --backup-keep 2";
  // The newest of the new leader verifies and holds the task (copied first: the
  // leader rotates its directory while the test reads it).
  auto copy = path("newest.snap");
  std::string newest;
  ASSERT_TRUE(eventually(
      [&] {
        auto kept = names_ending(next_dir, ".snap");
        if (kept.empty()) return false;
        newest = kept.back();
        std::error_code ec;
        fs::copy_file(next_dir + "/" + newest, copy, fs::copy_options::overwrite_existing, ec);
        return !ec;
      },
      10s))
      << g.dump();
  EXPECT_FALSE(before[next].count(newest)) << newest << " is older than the kill";
  EXPECT_EQ(verified_records(copy, "tasks"), 1) << newest;
}

}  // namespace
