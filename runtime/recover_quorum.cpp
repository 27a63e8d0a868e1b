// `aisched recover --force-new-cluster`: the explicit recovery from a lost quorum
// (actors/raft/quorum_recovery.hpp), run on a stopped member's data directory.
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "actors/raft/membership_guard.hpp"
#include "actors/raft/quorum_recovery.hpp"
#include "common/log.hpp"
#include "proto/errors.hpp"
#include "runtime/node.hpp"
#include "storage/format_version.hpp"
#include "storage/migrations.hpp"
#include "storage/rocks.hpp"

namespace aisched::runtime {

namespace {

/// Whether something accepts a TCP connection at `host_port` within `wait`.
bool answers(const std::string& host_port, std::chrono::milliseconds wait) {
  auto colon = host_port.rfind(':');
  if (colon == std::string::npos) return false;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host_port.substr(0, colon).c_str(), host_port.substr(colon + 1).c_str(),
                    &hints, &found) != 0)
    return false;
  bool open = false;
  for (auto* a = found; a && !open; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      open = true;
    } else if (errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int err = 0;
      socklen_t len = sizeof(err);
      open = ::poll(&p, 1, static_cast<int>(wait.count())) == 1 &&
             ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return open;
}

/// The other voters of `m` that answer at their cluster addresses, as
/// "id (host:port)"; empty when, with this member, they are no majority.
std::vector<std::string> quorum_still_there(const proto::membership& m, const std::string& self) {
  size_t voters = 0;
  std::vector<std::string> up;
  for (auto& x : m) {
    if (!x.voter) continue;
    ++voters;
    if (x.id != self && !x.cluster_addr.empty() &&
        answers(x.cluster_addr, std::chrono::milliseconds(1500)))
      up.push_back(x.id + " (" + x.cluster_addr + ")");
  }
  if (voters < 2 || up.size() + 1 < voters / 2 + 1) return {};
  return up;
}

}  // namespace

int recover_quorum(const config& cfg) {
  auto fail = [](const char* what, const caf::error& err, int code = 1) {
    log::error(what, {{"error", view(err).message}});
    std::fprintf(stderr, "aisched recover: %s: %s\n", what, view(err).message.c_str());
    return code;
  };
  // Nothing is created: a directory without RocksDB's files holds no group.
  std::error_code ec;
  if (!std::filesystem::exists(cfg.data_dir + "/CURRENT", ec))
    return fail("nothing to recover",
                make_error(errc::invalid_argument, "data_dir",
                           cfg.data_dir + " holds no data of a group (no RocksDB database)"),
                2);
  auto format = storage::check_format(cfg.data_dir, AISCHED_VERSION);
  if (!format)
    return fail(view(format.error()).code == errc::invalid_argument
                    ? "refusing to recover"
                    : "cannot read the data directory's format",
                format.error(), view(format.error()).code == errc::invalid_argument ? 2 : 1);
  // A running node holds RocksDB's lock: this open fails on its data.
  auto db = storage::rocks::open(cfg.data_dir, {});
  if (!db) return fail("cannot open the data directory (is its node still running?)", db.error());
  // The entry this writes is of the current format: the log is migrated first.
  auto migrated = storage::migrate_format(**db, cfg.data_dir, *format, AISCHED_VERSION);
  if (!migrated)
    return fail("cannot migrate the data directory", migrated.error(),
                view(migrated.error()).code == errc::invalid_argument ? 2 : 1);
  // A quorum that is only unreachable from here, or members restarting, would
  // go on beside the recovered group: two groups firing every run.
  if (!cfg.quorum_gone) {
    auto stored = raft::stored_membership(**db);
    if (!stored) return fail("cannot read the stored membership", stored.error());
    if (*stored)
      if (auto up = quorum_still_there(**stored, cfg.node_id); !up.empty()) {
        std::string names;
        for (auto& u : up) names += (names.empty() ? "" : ", ") + u;
        return fail("refusing to recover",
                    make_error(errc::invalid_argument, "force-new-cluster",
                               "members " + names +
                                   " answer at their cluster addresses: with this member they "
                                   "are a quorum of the group, so restart this node as it was "
                                   "instead. If they are gone for good (being wiped), pass "
                                   "--i-know-the-quorum-is-gone"),
                    2);
      }
  }
  raft::raft_options opts;
  opts.node_id = cfg.node_id;
  opts.join = cfg.join_group;
  opts.cluster_addr = cfg.cluster.host + ":" + std::to_string(cfg.cluster.port);
  auto done = raft::recover_quorum(**db, opts);
  if (!done)
    return fail("cannot recover", done.error(),
                view(done.error()).code == errc::invalid_argument ? 2 : 1);
  log::warn("quorum recovered: this member is now the only member of a new group",
            {{"members_before", done->members_before},
             {"cluster_before", done->cluster_before},
             {"cluster_after", done->cluster_after},
             {"index", std::to_string(done->last_index)},
             {"term", std::to_string(done->term)}});
  std::printf(
      "Member %s of %s is now the only member of a new group on its data (log index %llu,\n"
      "term %llu). Cluster id %s -> %s: members of the old group that return with their\n"
      "old data are refused. Writes the lost members acknowledged but this member never\n"
      "received are lost.\n"
      "Next:\n"
      "  1. start this node without --peers:  aisched --node-id %s --data-dir %s --cluster-addr %s\n"
      "  2. for each other member: wipe its data directory, start it with --join (under its old\n"
      "     id or a new one), and add it with POST /api/v1/cluster/members\n"
      "     (aischedctl cluster add-member).\n",
      cfg.node_id.c_str(), done->members_before.c_str(),
      static_cast<unsigned long long>(done->last_index),
      static_cast<unsigned long long>(done->term), done->cluster_before.c_str(),
      done->cluster_after.c_str(), cfg.node_id.c_str(), cfg.data_dir.c_str(),
      done->cluster_addr.c_str());
  return 0;
}

}  // namespace aisched::runtime
