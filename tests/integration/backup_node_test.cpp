// Backups on real nodes (issue 46): a node's state saved with GET
// /api/v1/cluster/snapshot and with `aischedctl cluster snapshot save`,
// inspected with `aischedctl snapshot status`, restored with `aisched restore`
// into a new data directory, and a node started on it: its tasks, finished runs
// and secrets (a run still opens its secret) are the saved ones, the run that
// was in flight ended worker_lost, and its cluster id is a new one. A used data
// directory and a damaged file are refused. Scheduled backups (--backup-dir, every
// 1 s here, keep 2) rotate, and the newest restores. One file restored into the three
// members of a new group: they elect a leader, serve the saved tasks and runs under one
// new cluster id, give new ids, fire the periodic task, and two of them go on after the
// leader's SIGKILL. A save cut by the node's SIGKILL leaves no file, and the save after
// the node's restart verifies. In a group of three: backup_group_test.cpp.
#include <gtest/gtest.h>

#include "backup_support.hpp"

using namespace aisched::test;
using namespace aisched::test::backup;

namespace {

TEST_F(backup_node, saved_state_restores_into_a_new_cluster) {
  auto key = write_key(path("secrets.key"));
  auto sleep_arg = unique_sleep_arg(60);
  std::string restored_dir = path("restored");
  std::vector<std::string> tasks_before;
  std::string run_done, run_in_flight, cluster_before, file = path("route.snapshot");
  int64_t uses_secret = 0;
  {
    node_process a(path("data"), {"--secrets-key-file", key});
    ASSERT_TRUE(a.running());
    auto port = a.http_port();
    ASSERT_TRUE(await_ready(port));
    ASSERT_EQ(http_call(port, "PUT", "/api/v1/secrets/db",
                        json::serialize(json::object{{"value", secret_value}}))
                  .status,
              200u);
    create_task(port, R"({"name":"nightly","command":"true","schedule":"0 3 * * *"})");
    auto quick = create_task(port, R"({"name":"quick","command":"true"})");
    auto slow = create_task(port, json::serialize(json::object{
                                      {"name", "slow"}, {"command", "sleep " + sleep_arg}}));
    uses_secret = create_task(
        port, json::serialize(json::object{
                  {"name", "uses-secret"},
                  // The value in two parts: the task never holds it whole.
                  {"command", R"(test "${DB#Rk7-backup-}" = "s3cret-value")"},
                  {"secrets", json::object{{"DB", "db"}}}}));
    ASSERT_TRUE(quick && slow && uses_secret);
    run_done = trigger(port, quick);
    await_state(port, run_done, "success");
    run_in_flight = trigger(port, slow);
    await_state(port, run_in_flight, "running");
    tasks_before = task_rows(port);
    cluster_before = cluster_id_at(port);
    ASSERT_FALSE(cluster_before.empty());

    auto saved = http_call(port, "GET", "/api/v1/cluster/snapshot", "", 30s);
    ASSERT_EQ(saved.status, 200u) << saved.body;
    EXPECT_EQ(saved.content_type, "application/octet-stream");
    EXPECT_FALSE(saved.headers["x-aisched-snapshot-index"].empty());
    EXPECT_EQ(saved.headers["x-aisched-cluster-id"], cluster_before);
    std::ofstream(file, std::ios::binary) << saved.body;

    // The same through aischedctl: FILE.tmp, verified, renamed.
    auto server = "http://127.0.0.1:" + std::to_string(port);
    auto ctl_file = path("ctl.snapshot");
    auto ctl = run_command({AISCHEDCTL_BINARY, "--server", server, "cluster", "snapshot", "save",
                            ctl_file},
                           30s);
    EXPECT_EQ(ctl.exit_code, 0) << ctl.err;
    EXPECT_NE(ctl.out.find("(verified)"), std::string::npos) << ctl.out;
    EXPECT_TRUE(fs::exists(ctl_file));
    EXPECT_FALSE(fs::exists(ctl_file + ".tmp"));
  }  // the old node stops: its run in flight never reports

  auto status = run_command({AISCHEDCTL_BINARY, "snapshot", "status", file});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("checksum: ok"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find(cluster_before), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("tasks"), std::string::npos) << status.out;

  auto done = restore({"--from", file, "--data-dir", restored_dir, "--node-id", "n1",
                       "--secrets-key-file", key});
  ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
  EXPECT_NE(done.out.find("New cluster id"), std::string::npos) << done.out;

  node_process b(restored_dir, {"--secrets-key-file", key});
  ASSERT_TRUE(b.running()) << b.log();
  auto port = b.http_port();
  ASSERT_TRUE(await_ready(port)) << tail(b.log());
  auto cluster_after = cluster_id_at(port);
  EXPECT_FALSE(cluster_after.empty());
  EXPECT_NE(cluster_after, cluster_before);
  EXPECT_EQ(task_rows(port), tasks_before);
  EXPECT_EQ(str(instance_at(port, run_done), "state"), "success");
  auto lost = instance_at(port, run_in_flight);
  EXPECT_EQ(str(lost, "state"), "failed") << json::serialize(lost);
  EXPECT_EQ(str(lost, "error").rfind("worker_lost", 0), 0u) << json::serialize(lost);
  auto secrets = parse(http_call(port, "GET", "/api/v1/secrets")).at("items").as_array();
  ASSERT_EQ(secrets.size(), 1u);
  EXPECT_EQ(str(secrets[0].as_object(), "name"), "db");
  // The secret still opens: a run that compares it succeeds.
  await_state(port, trigger(port, uses_secret), "success");
  all_gone(sleep_arg);  // the old node's run, if it outlived its node
}

TEST_F(backup_node, scheduled_backups_rotate_and_the_newest_restores) {
  auto backups = path("backups");  // created by the node
  std::vector<std::string> tasks_before;
  std::string cluster_before;
  {
    node_process a(path("data"),
                   {"--backup-dir", backups, "--backup-interval", "1s", "--backup-keep", "2"});
    ASSERT_TRUE(a.running());
    auto port = a.http_port();
    ASSERT_TRUE(await_ready(port));
    ASSERT_TRUE(create_task(port, R"({"name":"kept","command":"true","schedule":"@every 1h"})"));
    tasks_before = task_rows(port);
    cluster_before = cluster_id_at(port);
    // Three more backups after the task: the newest holds it, and rotation ran.
    auto written = metric(port, "backups_total");
    ASSERT_GE(written, 0) << "backups_total is not served";
    ASSERT_TRUE(eventually([&] { return metric(port, "backups_total") >= written + 3; }, 20s))
        << tail(a.log());
    EXPECT_EQ(metric(port, "backup_failures_total"), 0);
    EXPECT_GT(metric(port, "backup_last_success_timestamp_seconds"), 0);
    auto kept = names_ending(backups, ".snap");
    EXPECT_GE(kept.size(), 1u);
    EXPECT_LE(kept.size(), 2u) << "--backup-keep 2";
    EXPECT_EQ(http_call(port, "GET", "/readyz").status, 200u);
    // A backup being written when the node stops is abandoned, its .tmp removed.
    EXPECT_EQ(a.stop(SIGTERM), 0) << tail(a.log());
  }
  auto kept = names_ending(backups, ".snap");
  ASSERT_GE(kept.size(), 1u);
  EXPECT_LE(kept.size(), 2u);
  EXPECT_TRUE(names_ending(backups, ".tmp").empty());
  auto newest = backups + "/" + kept.back();
  auto status = run_command({AISCHEDCTL_BINARY, "snapshot", "status", newest});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("checksum: ok"), std::string::npos) << status.out;

  auto restored_dir = path("restored");
  auto done = restore({"--from", newest, "--data-dir", restored_dir, "--node-id", "n1"});
  ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
  node_process b(restored_dir);
  ASSERT_TRUE(b.running()) << b.log();
  ASSERT_TRUE(await_ready(b.http_port())) << tail(b.log());
  EXPECT_EQ(task_rows(b.http_port()), tasks_before);
  EXPECT_NE(cluster_id_at(b.http_port()), cluster_before);
}

TEST_F(backup_node, restore_refuses_a_used_directory_and_a_damaged_file) {
  std::string file = path("node.snapshot");
  {
    node_process a(path("data"));
    ASSERT_TRUE(a.running());
    ASSERT_TRUE(await_ready(a.http_port()));
    create_task(a.http_port(), R"({"name":"kept","command":"true","schedule":"@every 1h"})");
    auto saved = http_call(a.http_port(), "GET", "/api/v1/cluster/snapshot", "", 30s);
    ASSERT_EQ(saved.status, 200u) << saved.body;
    std::ofstream(file, std::ios::binary) << saved.body;
  }
  auto used = path("used");
  fs::create_directories(used);
  std::ofstream(used + "/keep-me") << "an operator's file\n";
  auto r = restore({"--from", file, "--data-dir", used, "--node-id", "n1"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("not empty"), std::string::npos) << r.err;
  EXPECT_EQ(std::distance(fs::directory_iterator(used), fs::directory_iterator()), 1);

  auto bytes = read_all(file);
  ASSERT_GT(bytes.size(), 200u);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x20);
  auto damaged = path("damaged.snapshot");
  std::ofstream(damaged, std::ios::binary) << bytes;
  auto fresh = path("fresh");
  r = restore({"--from", damaged, "--data-dir", fresh, "--node-id", "n1"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("checksum mismatch"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(fresh));
  auto verdict = run_command({AISCHEDCTL_BINARY, "snapshot", "status", damaged});
  EXPECT_NE(verdict.exit_code, 0);
  EXPECT_NE(verdict.err.find("checksum mismatch"), std::string::npos) << verdict.err;
}

TEST_F(backup_node, restore_seeds_a_three_member_group) {
  auto file = path("node.snapshot");
  auto sleep_arg = unique_sleep_arg(60);
  std::vector<std::string> tasks_before, fired_before;
  std::string cluster_before, run_done, run_in_flight;
  int64_t every = 0, held = 0;
  {
    node_process a(path("data"));
    ASSERT_TRUE(a.running());
    auto port = a.http_port();
    ASSERT_TRUE(await_ready(port));
    every = create_task(port, R"({"name":"every","command":"true","schedule":"@every 2s"})");
    held = create_task(port, R"({"name":"held","command":"true","schedule":"@every 2s"})");
    auto in_an_hour = aisched::format_rfc3339(wall_ms() + 3'600'000);
    auto once = create_task(port, json::serialize(json::object{
                                      {"name", "once"}, {"command", "true"}, {"at", in_an_hour}}));
    auto quick = create_task(port, R"({"name":"quick","command":"true"})");
    auto slow = create_task(port, json::serialize(json::object{
                                      {"name", "slow"}, {"command", "sleep " + sleep_arg}}));
    ASSERT_TRUE(every && held && once && quick && slow);
    ASSERT_EQ(http_call(port, "POST", "/api/v1/tasks/" + std::to_string(held) + "/pause").status,
              200u);
    run_done = trigger(port, quick);
    await_state(port, run_done, "success");
    run_in_flight = trigger(port, slow);
    await_state(port, run_in_flight, "running");
    // Runs of the periodic task that ended before the save are in the file.
    ASSERT_TRUE(eventually(
        [&] {
          fired_before = run_ids(port, every, 0, "success");
          return !fired_before.empty();
        },
        20s))
        << tail(a.log());
    tasks_before = task_rows(port);
    cluster_before = cluster_id_at(port);
    ASSERT_FALSE(cluster_before.empty());
    auto server = "http://127.0.0.1:" + std::to_string(port);
    auto ctl = run_command(
        {AISCHEDCTL_BINARY, "--server", server, "cluster", "snapshot", "save", file}, 30s);
    ASSERT_EQ(ctl.exit_code, 0) << ctl.out << ctl.err;
  }  // the old node stops

  // Each member of the new group restored from the same file with the same --peers.
  raft_group g(path("group"), 3, {}, 0, /*start_members=*/false);
  std::set<std::string> new_ids;  // the cluster id each restore names
  for (size_t i = 0; i < 3; ++i) {
    auto done = restore({"--from", file, "--data-dir", g.data_dir(i), "--node-id", g.id(i),
                         "--peers", g.peers()});
    ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(done.out, m, std::regex(R"(New cluster id (\S+))"))) << done.out;
    new_ids.insert(m[1].str());
  }
  ASSERT_EQ(new_ids.size(), 1u) << "one file and one --peers make one cluster id";
  auto new_id = *new_ids.begin();
  EXPECT_NE(new_id, cluster_before);
  auto started_ms = wall_ms();
  for (size_t i = 0; i < 3; ++i) g.start(i);
  ASSERT_TRUE(g.all_running()) << g.dump();
  auto leader = g.await_leader({0, 1, 2});
  ASSERT_NE(leader, none) << "no agreed leader\n" << g.dump();

  // Every member serves the saved tasks and finished runs, with their ids, under the new id.
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(g.id(i));
    auto port = g.port(i);
    EXPECT_EQ(task_rows(port), tasks_before);
    EXPECT_EQ(cluster_id_at(port), new_id);
    EXPECT_EQ(str(instance_at(port, run_done), "state"), "success");
    for (auto& run : fired_before)
      EXPECT_EQ(str(instance_at(port, run), "state"), "success") << run;
  }
  // The run in flight in the backup ended worker_lost, and every member holds the
  // same view of it: the members of one group agree on the state at each index.
  std::set<std::string> lost_views;
  std::string shown;
  for (size_t i = 0; i < 3; ++i) {
    auto lost = instance_at(g.port(i), run_in_flight);
    auto view = json::serialize(lost);
    EXPECT_EQ(str(lost, "state"), "failed") << g.id(i) << ": " << view;
    EXPECT_EQ(str(lost, "error").rfind("worker_lost", 0), 0u) << g.id(i) << ": " << view;
    lost_views.insert(view);
    shown += g.id(i) + ": " + view + "\n";
  }
  EXPECT_EQ(lost_views.size(), 1u) << "the members disagree on the lost run:\n" << shown;

  // A task created now gets an id none of the restored tasks has, on every member.
  std::set<int64_t> restored;
  for (auto& row : tasks_before) restored.insert(std::stoll(row.substr(0, row.find(' '))));
  auto fresh = create_task(g.port(leader), R"({"name":"after-restore","command":"true"})");
  ASSERT_NE(fresh, 0) << g.dump();
  EXPECT_EQ(restored.count(fresh), 0u) << "task id " << fresh << " was given again";
  for (size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(eventually([&] { return has_task(g.port(i), fresh); })) << g.id(i);

  // The periodic task fires on the new group; the paused one stays paused (two runs
  // 2 s apart span a slot of its 2 s schedule).
  ASSERT_TRUE(eventually(
      [&] { return run_ids(g.port(leader), every, started_ms, "success").size() >= 2; }, 30s))
      << g.dump();
  EXPECT_TRUE(run_ids(g.port(leader), held, started_ms).empty()) << "the paused task fired";

  // The leader SIGKILLed: the two others elect one and accept a write.
  g.kill(leader);
  auto rest = g.running_members();
  ASSERT_EQ(rest.size(), 2u);
  ASSERT_NE(g.await_leader(rest, 20s), none) << g.dump();
  int64_t late = 0;
  ASSERT_TRUE(eventually(
      [&] {
        auto r = http_call(g.port(rest[0]), "POST", "/api/v1/tasks",
                           R"({"name":"after-kill","command":"true"})");
        if (r.status == 201) late = num(parse(r).as_object(), "id");
        return late > 0;
      },
      20s))
      << g.dump();
  for (auto m : rest) EXPECT_TRUE(eventually([&] { return has_task(g.port(m), late); })) << g.id(m);
  all_gone(sleep_arg);  // the old node's run, if it outlived its node
}

TEST_F(backup_node, a_save_cut_by_a_leader_kill_leaves_no_file_and_the_next_save_verifies) {
  constexpr int batches = held_batches, per_batch = held_per_batch;
  auto data = path("data"), file = path("cut.snapshot"), tmp = file + ".tmp";
  auto save = [&file](uint16_t port) { return save_args(port, file); };
  {
    node_process a(data);
    ASSERT_TRUE(a.running());
    auto port = a.http_port();
    ASSERT_TRUE(await_ready(port));
    // 5 000 pending runs with a 10 kB payload each: a file of about 50 MB.
    ASSERT_TRUE(fill_with_held_runs(port)) << tail(a.log());

    child_process ctl(save(port), path("ctl.log"));
    // Once the CLI receives, it is stopped: the node can then hand the kernel no
    // more than the socket buffers hold, so the kill falls inside the transfer.
    ASSERT_TRUE(await_bytes(tmp, ctl)) << ctl.log();
    ASSERT_TRUE(freeze(ctl.pid())) << "the save ended before it could be cut\n" << ctl.log();
    a.stop(SIGKILL);
    bool whole = a.log().find(R"("msg":"snapshot saved")") != std::string::npos;
    int status = ctl.stop(SIGCONT, 60s);  // resumes it, then waits for its exit
    ASSERT_TRUE(WIFEXITED(status)) << status << "\n" << ctl.log();
    EXPECT_EQ(WEXITSTATUS(status), 1)
        << ctl.log() << (whole ? "(the node had sent the whole file before its kill)" : "");
    EXPECT_NE(ctl.log().find("incomplete_snapshot"), std::string::npos) << ctl.log();
    EXPECT_NE(ctl.log().find("nothing was kept"), std::string::npos) << ctl.log();
    EXPECT_FALSE(fs::exists(file));
    EXPECT_FALSE(fs::exists(tmp));
  }

  // Restarted on its data dir, the node saves again, and the file verifies offline
  // with every acknowledged run in it.
  node_process b(data, {}, 60s);
  ASSERT_TRUE(b.running()) << b.log();
  ASSERT_TRUE(await_ready(b.http_port())) << tail(b.log());
  auto saved = run_command(save(b.http_port()), 120s);
  ASSERT_EQ(saved.exit_code, 0) << saved.out << saved.err;
  EXPECT_NE(saved.out.find("(verified)"), std::string::npos) << saved.out;
  EXPECT_TRUE(fs::exists(file));
  EXPECT_FALSE(fs::exists(tmp));
  auto status = run_command({AISCHEDCTL_BINARY, "-o", "json", "snapshot", "status", file}, 60s);
  ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
  boost::system::error_code ec;
  auto doc = json::parse(status.out, ec);
  ASSERT_FALSE(ec) << status.out;
  auto& o = doc.as_object();
  EXPECT_EQ(str(o, "checksum"), "ok") << status.out;
  EXPECT_EQ(num(o.at("records_by_column").as_object(), "instances"), batches * per_batch)
      << status.out;
}

}  // namespace
