// A real full disk, not an injected one: a default node whose data directory is
// a small tmpfs fills it with tasks. The write that no longer fits answers 507
// storage_full, /readyz says why, nothing acknowledged is lost; once the tmpfs
// grows (`mount -o remount,size=`) writes resume without a restart, and a
// restart on the same directory serves every acknowledged task. Before its
// fixes RocksDB aborted the node here (its LOG file and a second writer after a
// failed WAL append), and a 507 create appeared after recovery. Needs
// CAP_SYS_ADMIN to mount; skipped with the reason where the machine refuses.
#include <sys/mount.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

/// A tmpfs of `size` mounted on `path` for the lifetime of the object.
class tmpfs_mount {
 public:
  tmpfs_mount(std::string path, const std::string& size) : path_(std::move(path)) {
    std::filesystem::create_directories(path_);
    auto opts = "size=" + size + ",mode=0700";
    if (::mount("tmpfs", path_.c_str(), "tmpfs", 0, opts.c_str()) == 0)
      mounted_ = true;
    else
      error_ = std::strerror(errno);
  }
  ~tmpfs_mount() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }
  bool resize(const std::string& size) {
    auto opts = "size=" + size + ",mode=0700";
    return ::mount("tmpfs", path_.c_str(), "tmpfs", MS_REMOUNT, opts.c_str()) == 0;
  }

 private:
  std::string path_;
  bool mounted_ = false;
  std::string error_;
};

std::string error_code(const http_result& r) {
  boost::system::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec || !v.is_object() || !v.as_object().contains("error")) return "";
  return str(v.at("error").as_object(), "code");
}

/// A task whose command is `pad` bytes long, so a few hundred fill megabytes.
std::string big_task(int n, size_t pad) {
  json::object t{{"name", "fill-" + std::to_string(n)}, {"kind", "shell"},
                 {"command", "true # " + std::string(pad, 'x')}};
  return json::serialize(t);
}

/// The names of every task the node lists (following the pages).
std::set<std::string> task_names(uint16_t port) {
  std::set<std::string> names;
  std::string cursor;
  for (int page = 0; page < 100; ++page) {
    auto r = http_call(port, "GET",
                       "/api/v1/tasks?limit=100" + (cursor.empty() ? "" : "&cursor=" + cursor));
    if (r.status != 200) break;
    auto v = parse(r).as_object();
    for (auto& t : v.at("items").as_array()) names.insert(str(t.as_object(), "name"));
    auto* next = v.if_contains("next_cursor");
    if (!next || !next->is_string() || next->get_string().empty()) break;
    cursor = std::string(next->get_string());
  }
  return names;
}

}  // namespace

TEST(tmpfs_full, a_full_tmpfs_answers_507_and_writes_resume_when_it_grows) {
  temp_dir dir;
  // The node's log goes next to the data dir (<data>.log), outside the tmpfs.
  auto data = dir.path() + "/data";
  tmpfs_mount disk(data, "12m");
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here: " << disk.error();

  std::set<std::string> acknowledged, maybe;
  // Every acknowledged task is listed; nothing is listed that was refused.
  auto holds = [&](const std::set<std::string>& listed) {
    for (auto& a : acknowledged)
      if (!listed.count(a)) return false;
    for (auto& l : listed)
      if (!acknowledged.count(l) && !maybe.count(l)) return false;
    return true;
  };
  {
    node_process node(data);
    ASSERT_TRUE(node.running()) << node.log();
    auto port = node.http_port();

    // Fill it: at 60 KB a task, 12 MB holds at most a few hundred (bounded loop).
    // A create in the log but not applied when the disk filled answers 503
    // outcome_unknown and may appear later; one refused (507) never does.
    http_result refused;
    for (int n = 0; n < 2000; ++n) {
      auto r = http_call(port, "POST", "/api/v1/tasks", big_task(n, 60 * 1024), 15s);
      auto name = "fill-" + std::to_string(n);
      if (r.status == 201) {
        acknowledged.insert(name);
      } else if (r.status == 503 && error_code(r) == "outcome_unknown") {
        maybe.insert(name);
      } else {
        refused = r;
        break;
      }
    }
    ASSERT_EQ(refused.status, 507u) << refused.body << tail(node.log());
    EXPECT_EQ(error_code(refused), "storage_full") << refused.body;
    ASSERT_FALSE(acknowledged.empty());

    // Fenced, not dead: it says why, and stays alive for its supervisor.
    auto ready = http_call(port, "GET", "/readyz");
    EXPECT_EQ(ready.status, 503u) << ready.body;
    EXPECT_NE(ready.body.find("storage"), std::string::npos) << ready.body;
    EXPECT_EQ(http_call(port, "GET", "/healthz").status, 200u);
    EXPECT_TRUE(holds(task_names(port)));

    // Space returns: writes resume by themselves.
    ASSERT_TRUE(disk.resize("256m"));
    EXPECT_TRUE(eventually([&] {
      auto r = http_call(port, "POST", "/api/v1/tasks", big_task(9999, 16), 15s);
      if (r.status == 201) acknowledged.insert("fill-9999");
      return r.status == 201;
    }, 30s)) << tail(node.log());
    EXPECT_TRUE(eventually([&] { return http_call(port, "GET", "/readyz").status == 200; }, 20s))
        << http_call(port, "GET", "/readyz").body;
    EXPECT_TRUE(holds(task_names(port))) << task_names(port).size() << " listed, "
                                         << acknowledged.size() << " acknowledged, "
                                         << maybe.size() << " unknown";
    int status = node.stop(SIGTERM);
    ASSERT_TRUE(WIFEXITED(status)) << tail(node.log());
    EXPECT_EQ(WEXITSTATUS(status), 0) << tail(node.log());
  }

  // Nothing acknowledged was lost across the fill and a restart.
  node_process again(data);
  ASSERT_TRUE(again.running()) << again.log();
  EXPECT_TRUE(eventually([&] { return holds(task_names(again.http_port())); }, 20s))
      << task_names(again.http_port()).size() << " listed, " << acknowledged.size()
      << " acknowledged";
}
