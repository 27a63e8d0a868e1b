// Recovery from a lost quorum; see quorum_recovery.hpp.
#include "actors/raft/quorum_recovery.hpp"

#include <set>

#include "actors/raft/membership_guard.hpp"
#include "proto/errors.hpp"
#include "storage/membership_store.hpp"
#include "storage/raft_log.hpp"

namespace aisched::raft {

namespace {

std::string describe(const proto::membership& m) {
  std::set<std::string> ids;
  for (auto& x : m) ids.insert(x.id);
  std::string out = "{";
  for (auto& id : ids) out += (out.size() > 1 ? "," : "") + id;
  return out + "}";
}

}  // namespace

caf::expected<recovery_report> recover_quorum(storage::rocks& db, const raft_options& opts) {
  if (opts.join)
    return make_error(errc::invalid_argument, "join",
                      "recover --force-new-cluster makes this member a group of its own: no --join");
  auto stored = stored_membership(db);
  if (!stored) return stored.error();
  auto log = storage::raft_log::open(db);
  if (!log) return log.error();
  if (!*stored && log->last_index() == 0)
    return make_error(errc::invalid_argument, "data_dir",
                      "the data directory holds no group to recover (it is empty)");
  recovery_report out;
  proto::member_info self{opts.node_id, true, opts.cluster_addr, {}};
  const proto::member_info* stored_self = nullptr;
  if (*stored)
    for (auto& m : **stored)
      if (m.id == opts.node_id) stored_self = &m;
  // A wrong --node-id, or a member that was removed, must not become a group.
  if (*stored && (!stored_self || !stored_self->voter))
    return make_error(errc::invalid_argument, "node-id",
                      "member " + opts.node_id + " is not a voter of the stored membership " +
                          describe(**stored) + ": recover a voter (check --node-id)");
  if (stored_self) {
    self.http_addr = stored_self->http_addr;
    // Where the others know it, unless it never had an address recorded.
    if (!stored_self->cluster_addr.empty()) self.cluster_addr = stored_self->cluster_addr;
  }
  out.members_before = *stored ? describe(**stored) : "{}";
  auto old_id = storage::read_cluster_id(db);
  if (!old_id) return old_id.error();
  out.cluster_before = *old_id;

  // The new cluster id first: should the steps below not all happen, the old
  // group's members are refused already, and running this again completes it.
  proto::membership alone{self};
  out.last_index = log->last_index() + 1;
  out.cluster_after = derive_cluster_id(
      alone, "recovered from " + out.cluster_before + " at " + std::to_string(out.last_index));
  if (auto err = storage::write_cluster_id(db, out.cluster_after)) return err;
  // The newest membership entry wins over every earlier one and over the
  // snapshot's, on restore and in the guard: this member alone, in a term of
  // its own that it voted for (no other leader wrote at this index in it).
  auto hs = log->state();
  out.term = std::max(hs.term, log->last_term()) + 1;
  hs.term = out.term;
  hs.voted_for = opts.node_id;
  proto::log_entry e{out.last_index, out.term, proto::command{proto::set_membership{alone}}};
  if (auto err = log->append({e}, hs)) return err;
  if (auto err = storage::write_bootstrap_membership(db, alone)) return err;
  out.cluster_addr = self.cluster_addr;
  return out;
}

}  // namespace aisched::raft
