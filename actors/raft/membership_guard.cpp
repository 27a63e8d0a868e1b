// The start-up guard of a member's membership; see membership_guard.hpp.
#include "actors/raft/membership_guard.hpp"

#include <optional>
#include <set>
#include <string>

#include <openssl/evp.h>

#include "actors/raft/membership_links.hpp"
#include "common/log.hpp"
#include "proto/errors.hpp"
#include "proto/invariant.hpp"
#include "storage/membership_store.hpp"
#include "storage/raft_log.hpp"

namespace aisched::raft {

namespace {

std::set<std::string> ids_of(const proto::membership& m) {
  std::set<std::string> out;
  for (auto& x : m) out.insert(x.id);
  return out;
}

/// The member ids, sorted: "{n1,n2,n3}".
std::string describe(const proto::membership& m) {
  std::string out = "{";
  for (auto& id : ids_of(m)) out += (out.size() > 1 ? "," : "") + id;
  return out + "}";
}

/// The latest membership the raft log holds after its snapshot base, if any.
caf::expected<std::optional<proto::membership>> latest_in_log(storage::rocks& db) {
  auto log = storage::raft_log::open(db);
  if (!log) return log.error();
  // Newest first, a bounded span at a time: the whole log is never in memory.
  constexpr uint64_t span = 512;
  for (uint64_t to = log->last_index(); to > log->base().index;) {
    auto from = to > log->base().index + span ? to - span + 1 : log->base().index + 1;
    auto entries = log->read(from, to);
    if (!entries) return entries.error();
    for (auto e = entries->rbegin(); e != entries->rend(); ++e)
      if (proto::holds<proto::set_membership>(e->cmd)) {
        auto x = proto::command_as<proto::set_membership>(e->cmd);
        if (!x)
          return make_error(errc::corrupted, "raft_log",
                            "membership entry " + std::to_string(e->index) + " does not decode");
        return std::optional<proto::membership>{x->members};
      }
    to = from - 1;
  }
  return std::optional<proto::membership>{};
}

/// Whether `db` holds no raft state at all: nothing logged, compacted or voted.
caf::expected<bool> fresh(storage::rocks& db) {
  auto log = storage::raft_log::open(db);
  if (!log) return log.error();
  return log->last_index() == 0 && log->state().term == 0;
}

}  // namespace

std::string derive_cluster_id(const proto::membership& members, const std::string& token) {
  std::string text = "aisched cluster\n" + token + "\n";
  for (auto& id : ids_of(members)) text += id + "\n";
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  auto ok = EVP_Digest(text.data(), text.size(), digest, &size, EVP_sha256(), nullptr) == 1;
  AISCHED_INVARIANT(ok && size >= 16, "SHA-256 failed: no cluster id can be derived");
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < 16 && i < size; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

caf::expected<std::string> stored_cluster_id(storage::rocks& db, const raft_options& opts,
                                             const std::string& token) {
  auto id = storage::read_cluster_id(db);
  if (!id || !id->empty() || opts.join) return id;
  // Only from the bootstrap membership: members whose data holds none (they
  // joined, or changes were applied before the record existed) could derive
  // another id from their current flags, and learn the group's instead.
  auto bootstrap = storage::read_bootstrap_membership(db);
  if (!bootstrap) return bootstrap.error();
  if (!*bootstrap) return std::string();
  auto derived = derive_cluster_id(**bootstrap, token);
  if (auto err = storage::write_cluster_id(db, derived)) return err;
  log::info("cluster id recorded", {{"cluster_id", derived}});
  return derived;
}

caf::expected<std::optional<proto::membership>> stored_membership(storage::rocks& db) {
  auto stored = latest_in_log(db);
  if (!stored || *stored) return stored;
  auto applied = storage::read_membership(db);
  if (!applied || *applied) return applied;
  return storage::read_bootstrap_membership(db);
}

caf::error check_stored_membership(storage::rocks& db, const raft_options& opts) {
  if (opts.join) return {};
  auto flags = initial_members(opts);
  auto bootstrap = storage::read_bootstrap_membership(db);
  if (!bootstrap) return bootstrap.error();
  auto applied = storage::read_membership(db);
  if (!applied) return applied.error();
  auto stored = stored_membership(db);
  if (!stored) return stored.error();
  if (!*stored) {
    // Nothing stored: the first start bootstraps from the flags. Data from
    // before the record (a log but no record) adopts them too, loudly.
    auto is_fresh = fresh(db);
    if (!is_fresh) return is_fresh.error();
    if (!*is_fresh) {
      // Data from an earlier build: its vote is the one trace of its group.
      // A --peers that leaves out the member it voted for is no group it was in.
      auto log = storage::raft_log::open(db);
      if (!log) return log.error();
      auto& vote = log->state().voted_for;
      if (!vote.empty() && !ids_of(flags).count(vote))
        return make_error(errc::invalid_argument, "peers",
                          "--peers (with --node-id) names the members " + describe(flags) +
                              ", but this data directory voted for member " + vote +
                              " in its group: restart with the group's original --peers");
    }
    if (auto err = storage::write_bootstrap_membership(db, flags)) return err;
    if (*is_fresh)
      log::info("bootstrap membership recorded", {{"members", describe(flags)}});
    else
      log::warn(
          "the data directory recorded no membership: --peers recorded as its bootstrap "
          "membership",
          {{"members", describe(flags)}});
    return {};
  }
  // Until a change was applied, restore() starts from the flags' membership, so
  // they must be the bootstrap one; after, it starts from the applied one and
  // the flags decide nothing, so the current set is fine too.
  auto named = ids_of(flags);
  if (*bootstrap && named == ids_of(**bootstrap)) return {};
  if ((*applied || !*bootstrap) && named == ids_of(**stored)) return {};
  auto msg = "--peers (with --node-id) names the members " + describe(flags) +
             ", but the membership stored in the data directory is " + describe(**stored);
  if (*bootstrap && ids_of(**bootstrap) != ids_of(**stored))
    msg += " (bootstrapped as " + describe(**bootstrap) + ")";
  msg +=
      ": the stored membership is authoritative. Restart with --peers naming the stored "
      "members (or --join for a member that joined), and change the membership with the "
      "cluster members API";
  return make_error(errc::invalid_argument, "peers", std::move(msg));
}

}  // namespace aisched::raft
