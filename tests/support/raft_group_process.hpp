// A Raft group of real `aisched` scheduler nodes for integration tests: members
// n1..nN on fixed free loopback cluster ports (`--peers`), each with its own data
// dir, which can be SIGKILLed and restarted on the same dir and port, and the
// members' own views of the group from GET /api/v1/cluster.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

namespace aisched::test {

constexpr size_t none = size_t(-1);

/// One member's own view, from GET /api/v1/cluster (`ok` false if it did not answer).
struct member_view {
  bool ok = false;
  std::string id, role, leader;
  uint64_t term = 0, commit = 0, applied = 0;
};

/// `headers` go with the request (a bearer token: a member started with --auth
/// answers only a caller).
inline member_view view_of(uint16_t port, const std::map<std::string, std::string>& headers = {}) {
  member_view out;
  if (port == 0) return out;
  auto r = http_call(port, "GET", "/api/v1/cluster", "", std::chrono::seconds(2), headers);
  if (r.status != 200) return out;
  boost::system::error_code ec;
  auto v = boost::json::parse(r.body, ec);
  if (ec || !v.is_object()) return out;
  auto& o = v.as_object();
  out.id = str(o, "node_id");
  out.leader = str(o, "leader");
  out.term = uint64_t(num(o, "term"));
  if (auto* ms = o.if_contains("members"); ms && ms->is_array())
    for (auto& m : ms->as_array()) {
      auto& mo = m.as_object();
      auto* self = mo.if_contains("self");
      if (!self || !self->is_bool() || !self->get_bool()) continue;
      out.role = str(mo, "role");
      out.commit = uint64_t(num(mo, "commit_index"));
      out.applied = uint64_t(num(mo, "applied_index"));
      out.ok = true;
    }
  return out;
}

/// A group of scheduler nodes n1..nN on fixed free cluster ports, each with its own
/// data dir under `dir`. A member can be killed and restarted on the same data dir
/// and cluster port. `spares` more nodes get an id, a data dir and a port but are
/// not in `--peers`: start_joiner() starts one with `--join`, for membership
/// changes. Earlier incarnations are kept so that their logs (appended to
/// the same file) stay readable until the group is destroyed, which kills them all.
class raft_group {
 public:
  /// `extra_args` go to every member (e.g. `--roles scheduler,gateway`); `{id}`
  /// in one is replaced by the member's id (a per-member path). With
  /// `start_members` false no member is started: the test seeds their data dirs
  /// first (e.g. `aisched restore ... --peers peers()`), then start()s each.
  raft_group(const std::string& dir, size_t n, std::vector<std::string> extra_args = {},
             size_t spares = 0, bool start_members = true)
      : procs_(n + spares), joiner_(n + spares, false), extra_args_(std::move(extra_args)) {
    std::set<uint16_t> ports;
    while (ports.size() < n + spares) {
      auto p = free_port();
      if (p == 0) {
        ADD_FAILURE() << "no free port";
        return;
      }
      ports.insert(p);
    }
    size_t i = 0;
    for (auto p : ports) {
      ids_.push_back("n" + std::to_string(++i));
      cluster_ports_.push_back(p);
      data_.push_back(dir + "/" + ids_.back());
      if (i <= n)
        peers_ += (peers_.empty() ? "" : ",") + ids_.back() + "=127.0.0.1:" + std::to_string(p);
    }
    if (start_members)
      for (i = 0; i < n; ++i) start(i);
  }

  size_t size() const { return procs_.size(); }
  const std::string& id(size_t i) const { return ids_.at(i); }
  size_t index_of(const std::string& id) const {
    for (size_t i = 0; i < ids_.size(); ++i)
      if (ids_[i] == id) return i;
    return none;
  }
  bool running(size_t i) const { return procs_.at(i) && procs_[i]->running(); }
  bool all_running() const {
    for (size_t i = 0; i < size(); ++i)
      if (!running(i)) return false;
    return true;
  }
  uint16_t cluster_port(size_t i) const { return cluster_ports_.at(i); }
  std::string cluster_addr(size_t i) const { return "127.0.0.1:" + std::to_string(cluster_port(i)); }
  /// Member `i`'s log so far ("" if it never started).
  std::string log(size_t i) const { return procs_.at(i) ? procs_[i]->log() : ""; }
  uint16_t port(size_t i) const { return running(i) ? procs_[i]->http_port() : 0; }
  const std::string& data_dir(size_t i) const { return data_.at(i); }
  /// The members' `--peers` value: ID=127.0.0.1:PORT,...
  const std::string& peers() const { return peers_; }
  pid_t pid(size_t i) const { return running(i) ? procs_[i]->pid() : -1; }
  /// Headers of the group's own requests (its views, agreed_leader, dump): a bearer
  /// token once the members run with --auth, which answer GET /api/v1/cluster with
  /// 401 without one.
  void set_headers(std::map<std::string, std::string> headers) { headers_ = std::move(headers); }

  /// (Re)starts member `i` on its data dir and cluster port; waits until it serves HTTP.
  void start(size_t i) {
    if (procs_.at(i)) retired_.push_back(std::move(procs_[i]));
    std::vector<std::string> args{"--node-id", ids_[i]};
    if (joiner_.at(i)) {
      args.push_back("--join");
    } else {
      args.insert(args.end(), {"--peers", peers_});
    }
    for (auto a : extra_args_) {
      if (auto at = a.find("{id}"); at != std::string::npos) a.replace(at, 4, ids_[i]);
      args.push_back(std::move(a));
    }
    procs_[i] = std::make_unique<node_process>(
        data_.at(i), std::move(args), std::chrono::seconds(20),
        "127.0.0.1:" + std::to_string(cluster_ports_.at(i)));
  }

  /// Starts spare `i` empty with `--join` (and so on every restart).
  void start_joiner(size_t i) {
    joiner_.at(i) = true;
    start(i);
  }

  /// SIGKILLs member `i`; returns its wait status.
  int kill(size_t i) { return procs_.at(i)->stop(SIGKILL); }

  std::vector<size_t> running_members() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < size(); ++i)
      if (running(i)) out.push_back(i);
    return out;
  }

  /// The member that all of `members` name as leader and that says it leads; `none`
  /// while they disagree, do not know, or do not answer.
  size_t agreed_leader(const std::vector<size_t>& members) const {
    std::string leader;
    for (auto m : members) {
      auto v = view_of(port(m), headers_);
      if (!v.ok || v.leader.empty() || (!leader.empty() && v.leader != leader)) return none;
      leader = v.leader;
    }
    auto l = index_of(leader);
    if (l == none || std::find(members.begin(), members.end(), l) == members.end()) return none;
    auto v = view_of(port(l), headers_);
    return v.ok && v.role == "leader" && v.leader == leader ? l : none;
  }

  /// Polls until `members` agree on a leader; `none` if they do not within `timeout`.
  size_t await_leader(const std::vector<size_t>& members,
                      std::chrono::milliseconds timeout = std::chrono::seconds(15)) const {
    size_t l = none;
    eventually([&] { return (l = agreed_leader(members)) != none; }, timeout);
    return l;
  }

  /// Every running member's /api/v1/cluster answer and log tail, for failure messages.
  std::string dump(size_t log_chars = 2500) const {
    std::string out;
    for (size_t i = 0; i < size(); ++i) {
      out += "--- " + ids_[i] + (running(i) ? "" : " (not running)") + "\n";
      if (running(i))
        out += http_call(port(i), "GET", "/api/v1/cluster", "", std::chrono::seconds(2), headers_)
                   .body +
               "\n";
      if (procs_[i]) out += tail(procs_[i]->log(), log_chars) + "\n";
    }
    return out;
  }

 private:
  std::vector<std::string> ids_, data_;
  std::vector<uint16_t> cluster_ports_;
  std::string peers_;
  std::vector<std::unique_ptr<node_process>> procs_;    // current incarnation of each member
  std::vector<bool> joiner_;                            // started with --join
  std::vector<std::string> extra_args_;                 // for every member
  std::map<std::string, std::string> headers_;          // of the group's own requests
  std::vector<std::unique_ptr<node_process>> retired_;  // earlier (stopped) incarnations
};

}  // namespace aisched::test
