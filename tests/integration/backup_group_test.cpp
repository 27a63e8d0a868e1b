// Backups in a group of three (issue 46): a save cut by the leader's SIGKILL
// leaves no partial file, and a save through a surviving member (from the next
// leader) verifies with every run; scheduled backups (every member with its own
// --backup-dir) move to the next leader and rotate in every directory. A save of a
// live group with --auth and secrets, while a task fires every second, restores into
// a new group with every user, token, secret, pool, calendar, task and ended run made
// before it, nothing made after it, and no slot fired twice.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backup_support.hpp"

using namespace aisched::test;
using namespace aisched::test::backup;

namespace {

/// Whether the member at `port` names a leader other than itself, reachable, with the
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

TEST_F(backup_node, a_live_groups_save_restores_into_a_new_group) {
  // Every member of both groups: one login secret and bootstrap admin, one cluster key,
  // and the cluster secret an --auth group needs between its members.
  auto flags = auth::auth_args(dir_.path());
  auto link_secret = auth::write_file(path("cluster.secret"), std::string(64, 'c'));
  ::chmod(link_secret.c_str(), 0600);
  auto key = write_key(path("secrets.key"));
  flags.insert(flags.end(), {"--secrets-key-file", key, "--cluster-secret-file", link_secret});
  auto file = path("live.snapshot");
  std::string admin, index, cluster_before, kept_token, later_token;
  std::vector<std::string> tasks_before;
  // Lists a restore keeps whole (values and all), as the old group showed them at the save.
  const std::vector<std::string> lists{"/api/v1/users", "/api/v1/tokens", "/api/v1/secrets",
                                       "/api/v1/pools", "/api/v1/calendars"};
  std::map<std::string, std::string> lists_before;
  std::map<std::string, std::string> ended_before;  // periodic runs ended before the save: views
  std::map<std::string, int64_t> old_slots;         // every periodic run of the old group: slots
  int64_t every = 0, kept_task = 0, later_task = 0;

  // One object of each kind, all named `name`, made through the leader at `port`: a
  // user (password NAME-password), an admin API token (its secret, shown once, is
  // returned with the task's id), a secret, a pool, a calendar, and a task that uses
  // the three, whose runs compare the secret (in two parts: the task never holds it).
  auto make = [&](uint16_t port, const std::string& name) {
    auto as_admin = [&](const char* method, const std::string& target, const std::string& body) {
      auto r = auth::call(port, method, target, admin, body);
      EXPECT_TRUE(r.status == 200 || r.status == 201)
          << target << ": " << r.status << " " << r.body;
      return r;
    };
    auth::create_user(port, admin, name, "viewer");
    auto token = as_admin("POST", "/api/v1/tokens",
                          json::serialize(json::object{{"name", name}, {"role", "admin"}}));
    as_admin("PUT", "/api/v1/secrets/" + name,
             json::serialize(json::object{{"value", secret_value}}));
    as_admin("PUT", "/api/v1/pools/" + name, R"({"size":3})");
    as_admin("PUT", "/api/v1/calendars/" + name,
             R"({"description":"freeze","dates":["2031-12-24..2031-12-26"]})");
    auto task = as_admin(
        "POST", "/api/v1/tasks",
        json::serialize(json::object{{"name", name},
                                     {"command", R"(test "${DB#Rk7-backup-}" = "s3cret-value")"},
                                     {"secrets", json::object{{"DB", name}}},
                                     {"pool", name},
                                     {"exclude_calendar", name}}));
    return std::pair{str(parse(token).as_object(), "token"), num(parse(task).as_object(), "id")};
  };

  {
    raft_group g(path("old"), 3, flags);
    ASSERT_TRUE(g.all_running()) << g.dump();
    admin = auth::admin_login(g.port(0));  // polls until the bootstrap admin commits
    ASSERT_FALSE(admin.empty()) << g.dump();
    auto h = auth::bearer(admin);
    g.set_headers(h);
    auto leader = g.await_leader({0, 1, 2});
    ASSERT_NE(leader, none) << g.dump();
    auto port = g.port(leader);
    auto created = auth::call(port, "POST", "/api/v1/tasks", admin,
                              R"({"name":"every","command":"true","schedule":"@every 1s"})");
    ASSERT_EQ(created.status, 201u) << created.body;
    every = num(parse(created).as_object(), "id");
    std::tie(kept_token, kept_task) = make(port, "kept");
    ASSERT_TRUE(!kept_token.empty() && kept_task > 0);
    for (auto& target : lists) lists_before[target] = auth::call(port, "GET", target, admin).body;
    await_state(port, trigger(port, kept_task, h), "success", 20s, h);  // the secret opens
    std::vector<std::string> ended;
    auto two_ended = [&] { return (ended = run_ids(port, every, 0, "success", h)).size() >= 2; };
    ASSERT_TRUE(eventually(two_ended, 20s)) << g.dump();
    for (auto& id : ended) ended_before[id] = json::serialize(instance_at(port, id, h));
    tasks_before = task_rows(port, h);
    cluster_before = cluster_id_at(port, h);
    ASSERT_FALSE(cluster_before.empty());

    // Saved while the periodic task goes on firing.
    auto save = save_args(port, file);
    save.insert(save.end(), {"--token", admin});
    auto saved = run_command(save, 60s);
    ASSERT_EQ(saved.exit_code, 0) << saved.out << saved.err << "\n" << g.dump();
    auto saved_ms = wall_ms();
    std::smatch m;
    ASSERT_TRUE(std::regex_search(saved.out, m, std::regex(R"(at index (\d+) .*\(verified\))")))
        << saved.out;
    index = m[1].str();

    // Made after the save, and runs that end after it: in no file.
    std::tie(later_token, later_task) = make(port, "later");
    ASSERT_TRUE(!later_token.empty() && later_task > 0);
    ASSERT_TRUE(eventually([&] { return run_ids(port, every, saved_ms, "success", h).size() >= 2; },
                           20s))
        << g.dump();
    for (auto& x : runs_of(port, every, h))
      old_slots[str(x.as_object(), "id")] = time_ms(x.as_object().at("slot"));
  }  // the old group is killed

  // Each member of a new group restored from the file, then started with the same flags.
  raft_group g(path("new"), 3, flags, 0, /*start_members=*/false);
  for (size_t i = 0; i < 3; ++i) {
    auto done = restore({"--from", file, "--data-dir", g.data_dir(i), "--node-id", g.id(i),
                         "--peers", g.peers(), "--secrets-key-file", key});
    ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
    EXPECT_NE(done.out.find("at index " + index + " "), std::string::npos) << done.out;
  }
  auto restored_ms = wall_ms();
  for (size_t i = 0; i < 3; ++i) g.start(i);
  ASSERT_TRUE(g.all_running()) << g.dump();
  // The API token made before the save authenticates: every call below is made with it.
  auto h = auth::bearer(kept_token);
  ASSERT_TRUE(eventually(
      [&] { return auth::call(g.port(0), "GET", "/api/v1/auth/whoami", kept_token).status == 200; },
      20s))
      << g.dump();
  g.set_headers(h);
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << g.dump();
  auto port = g.port(leader);
  auto cluster_after = cluster_id_at(port, h);
  EXPECT_FALSE(cluster_after.empty());
  EXPECT_NE(cluster_after, cluster_before);

  // What was made before the save is there with its values, nothing made after it is:
  // the lists are the old group's at the save (the bootstrap admin is the saved one: a
  // member creates it only while no user exists).
  for (auto& target : lists)
    EXPECT_EQ(auth::call(port, "GET", target, kept_token).body, lists_before[target]) << target;
  EXPECT_EQ(task_rows(port, h), tasks_before);
  EXPECT_FALSE(has_task(port, later_task, h));
  EXPECT_FALSE(auth::login(port, "kept", "kept-password").empty());
  http_result refused;
  eventually([&] {  // 503 until this member has settled its bootstrap admin (a no-op here)
    refused = http_call(port, "POST", "/api/v1/auth/login",
                        R"({"username":"later","password":"later-password"})");
    return refused.status != 503;
  });
  EXPECT_EQ(refused.status, 401u) << refused.body;
  EXPECT_EQ(auth::call(port, "GET", "/api/v1/auth/whoami", later_token).status, 401u);
  await_state(port, trigger(port, kept_task, h), "success", 20s, h);  // the secret still opens
  for (auto& [id, view] : ended_before)
    EXPECT_EQ(json::serialize(instance_at(port, id, h)), view) << "a run ended before the save";

  // The periodic task fires on the new group, and no slot fires twice: each slot has one
  // run, each run from the backup is one the old group gave, and each run the new group
  // fired is for a slot after every slot in the backup.
  ASSERT_TRUE(eventually(
      [&] { return run_ids(port, every, restored_ms, "success", h).size() >= 2; }, 30s))
      << g.dump();
  auto fired_here = [&](const json::value& x) {  // by the new group: after the restore
    return time_ms(x.as_object().at("created_at")) >= restored_ms;
  };
  auto runs = runs_of(port, every, h);
  std::set<int64_t> slots;
  int64_t last_saved_slot = -1;
  for (auto& x : runs) {
    auto id = str(x.as_object(), "id");
    auto slot = time_ms(x.as_object().at("slot"));
    EXPECT_TRUE(slots.insert(slot).second) << id << ": its slot fired twice";
    if (fired_here(x)) continue;
    auto old = old_slots.find(id);
    EXPECT_TRUE(old != old_slots.end() && old->second == slot) << id << " is not the old group's";
    last_saved_slot = std::max(last_saved_slot, slot);
  }
  EXPECT_GE(last_saved_slot, 0) << "no run came from the backup";
  for (auto& x : runs)
    if (fired_here(x))
      EXPECT_GT(time_ms(x.as_object().at("slot")), last_saved_slot) << json::serialize(x);
  // The log goes on from the backup's index.
  EXPECT_GT(view_of(port, h).applied, std::stoull(index)) << g.dump();
}

}  // namespace
