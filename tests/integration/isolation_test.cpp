// Run isolation on a real node started as `make run` starts it (issue #14): a run
// sees only stdin/stdout/stderr (not the gateway's socket), cannot read the node's
// secrets, does not run as root, has a HOME outside the data dir; event values in
// a command are data in every quoting context; and no process of a run (setsid'd,
// double-forked) outlives its timeout, its cancel or a SIGKILL of the node, whose
// restart then binds its port again.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A command that leaves processes carrying `arg` behind every way a shell can,
/// then waits: a background child, a setsid'd one, a double-forked setsid'd one.
std::string escaping_command(const std::string& arg) {
  return "sleep " + arg + " & setsid sleep " + arg + " & (setsid sh -c 'sleep " + arg +
         " & exit' &); sleep " + arg;
}

std::string json_string(const std::string& s) { return json::serialize(json::value(s)); }

/// Triggers task `id`; the instance id, "" (and a failure) if none.
std::string trigger(uint16_t port, int64_t id) {
  auto r = http_call(port, "POST", "/api/v1/tasks/" + std::to_string(id) + "/trigger");
  if (r.status != 201) {
    ADD_FAILURE() << "trigger failed (" << r.status << "): " << r.body;
    return "";
  }
  auto v = parse(r);
  auto& items = v.at("instances").as_array();
  return items.empty() ? "" : str(items[0].as_object(), "id");
}

json::object await_state(uint16_t port, const std::string& id,
                         const std::vector<std::string>& states,
                         std::chrono::milliseconds timeout = 15s) {
  json::object last;
  eventually(
      [&] {
        auto r = http_call(port, "GET", "/api/v1/instances/" + id);
        if (r.status != 200) return false;
        last = parse(r).as_object();
        for (auto& s : states)
          if (str(last, "state") == s) return true;
        return false;
      },
      timeout);
  return last;
}

json::object await_terminal(uint16_t port, const std::string& id) {
  return await_state(port, id, {"success", "failed", "timed_out", "cancelled"});
}

/// Whether something still listens on loopback `port` (a bind with SO_REUSEADDR fails).
bool port_taken(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  bool taken = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0;
  close(fd);
  return taken;
}

/// Sets environment variables for the nodes started in its lifetime.
struct scoped_env {
  std::vector<std::string> names;
  scoped_env(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (auto& [k, v] : vars) {
      setenv(k, v, 1);
      names.emplace_back(k);
    }
  }
  ~scoped_env() {
    for (auto& n : names) unsetenv(n.c_str());
  }
};

const char* const auth_secret = "auth-secret-4f8a1c9e2b7d";
const char* const admin_password = "admin-pw-93e1c7";
const char* const llm_key = "llm-key-b62d0e5a";

TEST(isolation, run_sees_no_node_descriptor_secret_or_privilege) {
  temp_dir dir;
  auto data = dir.path() + "/data";
  scoped_env env{{"AISCHED_AUTH_SECRET", auth_secret},
                 {"AISCHED_ADMIN_PASSWORD", admin_password},
                 {"AISCHED_LLM_API_KEY", llm_key}};
  node_process node(data);
  ASSERT_TRUE(node.running()) << tail(node.log());
  auto port = node.http_port();
  auto node_pid = std::to_string(node.pid());
  // Descriptors listed with builtins only (ls, a pipeline or a redirection would
  // add their own); then every environment the run might reach: its parent's, the
  // node's (by pid), init's.
  auto command =
      "fd=0; while [ $fd -lt 1024 ]; do [ -e /proc/self/fd/$fd ] && printf '%s ' $fd; "
      "fd=$((fd+1)); done; echo; "
      "for p in $PPID " + node_pid + " 1; do tr '\\0' '\\n' < /proc/$p/environ; done 2>/dev/null; "
      "echo; id -u; echo \"$HOME\"";
  auto id = create_task(port, "{\"name\":\"peek\",\"command\":" + json_string(command) + "}");
  ASSERT_NE(id, 0);
  auto x = await_terminal(port, trigger(port, id));
  ASSERT_EQ(str(x, "state"), "success") << json::serialize(x) << tail(node.log());
  auto out = str(x, "output");
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_GE(lines.size(), 3u) << out;
  EXPECT_EQ(lines[0], "0 1 2 ") << "the run holds descriptors of the node";
  for (auto* secret : {auth_secret, admin_password, llm_key})
    EXPECT_EQ(out.find(secret), std::string::npos) << "the run read " << secret << ":\n" << out;
  if (geteuid() == 0) EXPECT_NE(lines[lines.size() - 2], "0") << "the run ran as root";
  auto home = lines.back();
  EXPECT_FALSE(home.empty());
  EXPECT_NE(home.rfind(data, 0), 0u) << "HOME " << home << " lies in the data dir " << data;
  EXPECT_FALSE(fs::exists(home)) << "the run's directory was not removed";
  // Not even root finds the secrets in the node's environment any more.
  auto node_env = read_text("/proc/" + node_pid + "/environ");
  for (auto* secret : {auth_secret, admin_password, llm_key})
    EXPECT_EQ(node_env.find(secret), std::string::npos) << secret << " left in the node's environ";
}

TEST(isolation, event_values_are_literal_text_in_every_quoting_context) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running()) << tail(node.log());
  auto port = node.http_port();
  auto command = std::string(
      "printf '[%s]\\n' {{event.payload.msg}} '{{event.payload.msg}}' \"{{event.payload.msg}}\" "
      "'it'\\''s {{event.payload.msg}}' \"$(printf '%s' '{{event.payload.msg}}')\"");
  auto id = create_task(port, "{\"name\":\"q\",\"event\":\"q\",\"command\":" +
                                  json_string(command) + "}");
  ASSERT_NE(id, 0);
  const std::string msg = "$(echo INJECTED) `echo INJECTED` ' \" \\ ; * a  b";
  auto r = http_call(port, "POST", "/api/v1/events/q", "{\"msg\":" + json_string(msg) + "}");
  ASSERT_EQ(r.status, 200u) << r.body;
  auto v = parse(r);
  auto& items = v.at("instances").as_array();
  ASSERT_EQ(items.size(), 1u) << r.body;
  auto x = await_terminal(port, str(items[0].as_object(), "id"));
  ASSERT_EQ(str(x, "state"), "success") << json::serialize(x) << tail(node.log());
  EXPECT_EQ(str(x, "output"), "[" + msg + "]\n[" + msg + "]\n[" + msg + "]\n[it's " + msg +
                                  "]\n[" + msg + "]\n");
}

TEST(isolation, http_header_with_a_line_break_is_refused_naming_it) {
  temp_dir dir;
  node_process node(dir.path() + "/data");
  ASSERT_TRUE(node.running()) << tail(node.log());
  auto r = http_call(node.http_port(), "POST", "/api/v1/tasks",
                     R"({"name":"h","kind":"http","http":{"url":"http://127.0.0.1:9/x",)"
                     R"("headers":{"X-Foo":"a\r\nX-Injected: 1"}}})");
  EXPECT_EQ(r.status, 400u) << r.body;
  EXPECT_NE(r.body.find("http.headers.X-Foo"), std::string::npos) << r.body;
}

TEST(isolation, no_process_of_a_run_outlives_timeout_cancel_or_node_death) {
  temp_dir dir;
  auto data = dir.path() + "/data";
  {
    node_process node(data);
    ASSERT_TRUE(node.running()) << tail(node.log());
    auto port = node.http_port();
    // Timeout.
    auto arg = unique_sleep_arg();
    auto id = create_task(port, "{\"name\":\"t\",\"timeout\":\"1s\","
                                "\"retry\":{\"policy\":\"fixed\",\"max_attempts\":1},"
                                "\"command\":" + json_string(escaping_command(arg)) + "}");
    ASSERT_NE(id, 0);
    auto run = trigger(port, id);
    ASSERT_TRUE(eventually([&] { return pids_with_arg(arg).size() >= 4; }, 10s))
        << "the run did not start its processes\n" << tail(node.log());
    auto x = await_terminal(port, run);
    EXPECT_EQ(str(x, "state"), "timed_out") << json::serialize(x);
    EXPECT_TRUE(all_gone(arg)) << "processes survived the timeout";

    // Cancel.
    arg = unique_sleep_arg();
    id = create_task(port, "{\"name\":\"c\",\"command\":" + json_string(escaping_command(arg)) + "}");
    ASSERT_NE(id, 0);
    run = trigger(port, id);
    ASSERT_TRUE(eventually([&] { return pids_with_arg(arg).size() >= 4; }, 10s));
    auto r = http_call(port, "POST", "/api/v1/instances/" + run + "/cancel");
    ASSERT_EQ(r.status, 200u) << r.body;
    EXPECT_TRUE(all_gone(arg)) << "processes survived the cancel";

    // SIGKILL of the node: its runs die with it and release its port.
    arg = unique_sleep_arg();
    id = create_task(port, "{\"name\":\"k\",\"command\":" + json_string(escaping_command(arg)) + "}");
    ASSERT_NE(id, 0);
    run = trigger(port, id);
    ASSERT_TRUE(eventually([&] { return pids_with_arg(arg).size() >= 4; }, 10s));
    EXPECT_EQ(node.stop(SIGKILL), SIGKILL);
    EXPECT_TRUE(all_gone(arg)) << "processes survived the node's SIGKILL";
    EXPECT_TRUE(eventually([&] { return !port_taken(port); }, 5s))
        << "port " << port << " is still held after the node died";
  }
  node_process node(data);
  EXPECT_TRUE(node.running()) << tail(node.log());
  EXPECT_EQ(http_call(node.http_port(), "GET", "/healthz").status, 200u);
}

}  // namespace

// #41 item 6: the data directory holds every tenant's definitions, password and
// token hashes and the audit log. A run at the defaults (as user nobody when the
// node is root) cannot list it, cannot read its write-ahead log, and cannot
// connect to the node's HTTP or cluster port on loopback (its own network).
TEST(isolation, a_run_cannot_read_the_data_dir_nor_reach_the_node_ports) {
  temp_dir dir;
  auto data = dir.path() + "/data";
  auto cluster_port = free_port();
  node_process node(data, {}, 20s, "127.0.0.1:" + std::to_string(cluster_port));
  ASSERT_TRUE(node.running()) << tail(node.log());
  auto port = node.http_port();
  ASSERT_TRUE(await_ready(port));
  ASSERT_NE(create_task(port, R"({"name":"first","kind":"noop"})"), 0);
  std::string wal;
  for (auto& e : fs::directory_iterator(data))
    if (e.path().extension() == ".log") wal = e.path().string();
  ASSERT_FALSE(wal.empty()) << "no write-ahead log in " << data;
  // What the node created is its own alone.
  EXPECT_EQ(fs::status(data).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_EQ(fs::status(wal).permissions() & (fs::perms::group_all | fs::perms::others_all),
            fs::perms::none);
  auto probe = "import socket\n"
               "for p in (" + std::to_string(port) + ", " + std::to_string(cluster_port) + "):\n"
               "    s = socket.socket()\n"
               "    s.settimeout(3)\n"
               "    try:\n"
               "        s.connect(('127.0.0.1', p))\n"
               "        print('port:open', p)\n"
               "    except OSError:\n"
               "        print('port:closed', p)\n";
  auto command = "ls " + data + " >/dev/null 2>&1 && echo list:open || echo list:denied; "
                 "head -c 16 " + wal + " >/dev/null 2>&1 && echo wal:open || echo wal:denied; "
                 "/usr/bin/python3 - <<'PY'\n" + probe + "PY\n";
  auto body = "{\"name\":\"snoop\",\"command\":" + json_string(command) + "}";
  auto id = create_task(port, body);
  ASSERT_NE(id, 0);
  auto x = await_terminal(port, trigger(port, id));
  ASSERT_EQ(str(x, "state"), "success") << json::serialize(x) << tail(node.log());
  auto out = str(x, "output");
  EXPECT_NE(out.find("list:denied"), std::string::npos) << out;
  EXPECT_NE(out.find("wal:denied"), std::string::npos) << out;
  EXPECT_NE(out.find("port:closed " + std::to_string(port)), std::string::npos) << out;
  EXPECT_NE(out.find("port:closed " + std::to_string(cluster_port)), std::string::npos) << out;
  EXPECT_EQ(out.find("port:open"), std::string::npos) << out;
}

// A data directory others can read is refused at start, naming its mode and the
// fix; --allow-shared-data-dir accepts it knowingly.
TEST(isolation, a_data_dir_others_can_read_is_refused_unless_allowed) {
  temp_dir dir;
  auto data = dir.path() + "/shared";
  fs::create_directories(data);
  fs::permissions(data, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  auto r = run_command({AISCHED_BINARY, "--data-dir", data, "--http-addr", "127.0.0.1:0",
                        "--cluster-addr", "127.0.0.1:0"},
                       20s);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("0755"), std::string::npos) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("--allow-shared-data-dir"), std::string::npos) << r.out << r.err;
  EXPECT_TRUE(fs::is_empty(data)) << "the refused node wrote into " << data;
  node_process allowed(data, {"--allow-shared-data-dir"});
  EXPECT_TRUE(allowed.running()) << tail(allowed.log());
}
