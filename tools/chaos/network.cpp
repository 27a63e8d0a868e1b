// aisched-chaos, network: namespaces, veth links and the bridge; see network.hpp.
#include "tools/chaos/network.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace aisched::chaos {

namespace {

constexpr const char* bridge = "chaos0";

/// Runs `args` (args[0] an absolute path) to completion, output discarded;
/// "" on exit status 0, else what failed.
std::string run(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  std::vector<std::string> copy = args;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return std::string("fork: ") + strerror(errno);
  if (pid == 0) {
    int null = ::open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  std::string cmd;
  for (auto& a : args) cmd += (cmd.empty() ? "" : " ") + a;
  return "`" + cmd + "` failed (wait status " + std::to_string(status) + ")";
}

std::string ip(std::vector<std::string> args) {
  args.insert(args.begin(), "/usr/sbin/ip");
  return run(args);
}

}  // namespace

network::network(bool wanted) {
  if (!wanted) {
    skipped_ = "--no-partitions was given";
    return;
  }
  if (access("/usr/sbin/ip", X_OK) != 0 || access("/usr/bin/nsenter", X_OK) != 0) {
    skipped_ = "iproute2 (/usr/sbin/ip) or util-linux nsenter is missing";
    return;
  }
  if (unshare(CLONE_NEWNET) != 0) {
    skipped_ = std::string("network namespaces are not permitted here (unshare(CLONE_NEWNET): ") +
               strerror(errno) + ")";
    return;
  }
  // From here on the harness lives in its own namespace: nothing it does to
  // links touches the host's network, and it all vanishes when the harness exits.
  for (auto& step : std::vector<std::vector<std::string>>{
           {"link", "set", "lo", "up"},
           {"link", "add", bridge, "type", "bridge"},
           {"addr", "add", "10.99.0.254/24", "dev", bridge},
           {"link", "set", bridge, "up"}})
    if (auto err = ip(step); !err.empty()) {
      skipped_ = "cannot set up the bridge: " + err;
      // Still in the private namespace: loopback works there as on the host.
      return;
    }
  enabled_ = true;
}

std::string network::host_of(int slot) const {
  return enabled_ ? "10.99.0." + std::to_string(slot) : "127.0.0.1";
}

std::string network::link_name(int slot) const {
  return "ch" + std::to_string(slot) + "g" + std::to_string(generation_[slot]);
}

std::string network::attach(pid_t pid, int slot) {
  if (!enabled_) return "";
  ++generation_[slot];
  auto host_end = link_name(slot), node_end = host_end + "n";
  if (auto err = ip({"link", "add", host_end, "type", "veth", "peer", "name", node_end});
      !err.empty())
    return err;
  if (auto err = ip({"link", "set", node_end, "netns", std::to_string(pid)}); !err.empty())
    return err;
  if (auto err = ip({"link", "set", host_end, "master", bridge, "up"}); !err.empty()) return err;
  auto in_ns = "/usr/sbin/ip link set lo up && /usr/sbin/ip addr add " + host_of(slot) +
               "/24 dev " + node_end + " && /usr/sbin/ip link set " + node_end + " up";
  return run({"/usr/bin/nsenter", "-t", std::to_string(pid), "-n", "/bin/sh", "-c", in_ns});
}

std::string network::set_link(int slot, bool up) {
  if (!enabled_) return "partitions are not enabled";
  return ip({"link", "set", link_name(slot), up ? "up" : "down"});
}

}  // namespace aisched::chaos
