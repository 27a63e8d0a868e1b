// The web console in a real browser: starts a real `aisched` node (all roles,
// built-in worker) and a second one with --auth and a scripted LLM
// (tests/support/scripted_llm.py; login, the audit log and the AI chat are
// checked against it), installs playwright-core into build/e2e when it is missing,
// and runs tests/e2e/console.spec.mjs against the node in headless Chromium.
// Skipped, loudly, only when Chromium cannot start on this machine (the spec
// exits 77 then).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/node_process.hpp"
#include "support/scripted_llm.hpp"

using namespace aisched::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

constexpr int chromium_unavailable = 77;
constexpr const char* admin_password = "console-admin-password-1";

std::string write_file(const std::string& path, const std::string& content) {
  std::ofstream(path) << content << "\n";
  return path;
}

/// Installs the pinned playwright-core next to build/e2e/package.json once.
bool install_driver() {
  if (fs::exists(fs::path(AISCHED_E2E_DIR) / "node_modules/playwright-core/package.json")) return true;
  auto r = run_command({AISCHED_NPM, "install", "--prefix", AISCHED_E2E_DIR, "--no-audit", "--no-fund",
                        "--no-package-lock"},
                       300s);
  EXPECT_EQ(r.exit_code, 0) << "npm install of playwright-core failed:\n" << r.out << r.err;
  return r.exit_code == 0;
}

TEST(console_e2e_test, create_run_follow_and_pause_a_task_in_the_browser) {
  ASSERT_TRUE(install_driver());
  temp_dir dir;
  node_process node(dir.path() + "/n1");
  ASSERT_TRUE(node.running()) << node.log();
  auto url = "http://127.0.0.1:" + std::to_string(node.http_port());
  // The spec's chat on the auth node: a read-only tool call; a delete of
  // task 1 (the first task created there, through the form) that waits for
  // the Confirm button; then a create and a pause of the new task 2 in two
  // tool rounds (task ids are never reused, so the created task is 2).
  scripted_llm llm(dir.path(),
                   {scripted_llm::call("w1", "query_workers", "{}"),
                    scripted_llm::say("One worker is online."),
                    scripted_llm::call("d1", "delete_task", R"({"task_id":1})"),
                    scripted_llm::say("Deleted task 1."),
                    scripted_llm::call("c1", "create_task",
                                       R"({"name":"from-chat","kind":"noop","schedule":"@every 1h"})"),
                    scripted_llm::call("p1", "pause_task", R"({"task_id":2})"),
                    scripted_llm::say("Created from-chat and paused it.")});
  node_process auth_node(dir.path() + "/auth",
                         {"--auth", "--auth-secret-file",
                          write_file(dir.path() + "/secret", "console-e2e-secret-0123456789abcdef"),
                          "--admin-password-file", write_file(dir.path() + "/admin", admin_password),
                          "--llm-endpoint", llm.endpoint(), "--llm-model", "scripted",
                          "--llm-api-key", "sk-test", "--llm-timeout", "10"});
  ASSERT_TRUE(auth_node.running()) << auth_node.log();
  auto auth_url = "http://127.0.0.1:" + std::to_string(auth_node.http_port());

  auto r = run_command({AISCHED_NODE, AISCHED_E2E_SPEC, "--url", url, "--auth-url", auth_url,
                        "--admin-password", admin_password, "--modules", AISCHED_E2E_DIR,
                        "--artifacts", AISCHED_ARTIFACTS, "--chromium", AISCHED_CHROMIUM},
                       300s);
  if (r.exit_code == chromium_unavailable)
    GTEST_SKIP() << "\n!!! Chromium cannot start here: the console browser test is SKIPPED !!!\n"
                 << r.err;
  ASSERT_EQ(r.exit_code, 0) << "console.spec.mjs failed:\n"
                            << r.out << r.err << "\nnode log:\n"
                            << node.log() << "\nauth node log:\n"
                            << auth_node.log();
  std::cout << r.out;

  // The API agrees with what the browser did: the task exists, ran, and is paused.
  auto pos = r.out.find("TASK_ID=");
  ASSERT_NE(pos, std::string::npos) << r.out;
  auto id = std::stoul(r.out.substr(pos + 8));
  auto task = http_call(node.http_port(), "GET", "/api/v1/tasks/" + std::to_string(id));
  ASSERT_EQ(task.status, 200u) << task.body;
  auto t = boost::json::parse(task.body).as_object();
  EXPECT_TRUE(t.at("paused").as_bool());
  EXPECT_EQ(t.at("command").as_string(), "echo hi");
  auto runs = http_call(node.http_port(), "GET",
                        "/api/v1/instances?state=success&task_id=" + std::to_string(id));
  ASSERT_EQ(runs.status, 200u) << runs.body;
  EXPECT_FALSE(boost::json::parse(runs.body).at("items").as_array().empty());
  EXPECT_TRUE(fs::exists(fs::path(AISCHED_ARTIFACTS) / "console.png"));
}

}  // namespace
