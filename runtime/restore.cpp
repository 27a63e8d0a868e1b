// `aisched restore --from FILE --data-dir DIR --node-id ID [--peers ...]
// [--cluster-addr ADDR] [--secrets-key-file K]`: seeds a new cluster's data
// directory from a backup (storage/backup_restore.hpp) and exits. A one-shot
// subcommand like `recover` (runtime/recover_quorum.cpp), with flags of
// its own. Each member of the new cluster is restored from the same file with
// the same --peers, so all record the same membership and the same new cluster
// id, which no member of the old cluster has.
#include <cstdio>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "actors/raft/membership_guard.hpp"
#include "common/secret_crypto.hpp"
#include "proto/errors.hpp"
#include "runtime/config.hpp"
#include "runtime/node.hpp"
#include "storage/backup_restore.hpp"

namespace aisched::runtime {

namespace {

/// The new cluster's membership: --peers (ID=HOST:PORT,...; it must name
/// --node-id), or this node alone at --cluster-addr.
caf::expected<proto::membership> members_from(const std::string& node_id,
                                              const std::string& peers,
                                              const std::string& cluster_addr) {
  proto::membership out;
  if (peers.empty()) {
    auto hp = parse_host_port(cluster_addr, "cluster-addr");
    if (!hp) return hp.error();
    out.push_back({node_id, true, cluster_addr, ""});
    return out;
  }
  bool self_listed = false;
  for (size_t i = 0; i <= peers.size();) {
    auto j = peers.find(',', i);
    if (j == std::string::npos) j = peers.size();
    auto item = peers.substr(i, j - i);
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      return make_error(errc::invalid_argument, "peers",
                        "--peers: expected ID=HOST:PORT, got '" + item + "'");
    auto addr = item.substr(eq + 1);
    auto hp = parse_host_port(addr, "peers");
    if (!hp) return hp.error();
    auto id = item.substr(0, eq);
    if (proto::find_member(out, id))
      return make_error(errc::invalid_argument, "peers", "--peers names " + id + " twice");
    self_listed = self_listed || id == node_id;
    out.push_back({id, true, addr, ""});
    i = j + 1;
  }
  if (!self_listed)
    return make_error(errc::invalid_argument, "peers",
                      "--peers must list this node (--node-id " + node_id + ")");
  return out;
}

std::string ids_of(const proto::membership& m) {
  std::string out;
  for (auto& x : m) out += (out.empty() ? "" : ",") + x.id;
  return "{" + out + "}";
}

int refuse(const caf::error& err) {
  auto v = view(err);
  std::fprintf(stderr, "aisched restore: refused: %s%s%s\n", v.message.c_str(),
               v.field.empty() ? "" : " (", v.field.empty() ? "" : (v.field + ")").c_str());
  // Bad input (the file, its format, the key, a used directory) is a usage
  // error; a failed write is not.
  bool usage = v.code == errc::invalid_argument || v.code == errc::corrupted;
  return usage ? 2 : 1;
}

}  // namespace

int restore_main(int argc, char** argv) {
  CLI::App app{"aisched restore: seed a new cluster's data directory from a backup "
               "(GET /api/v1/cluster/snapshot, aischedctl cluster snapshot save)",
               "aisched restore"};
  std::string from, data_dir, node_id, peers, cluster_addr = "127.0.0.1:7400", key_file;
  app.add_option("--from", from, "the backup file")->required();
  app.add_option("--data-dir", data_dir, "the new member's data directory: absent or empty")
      ->required();
  app.add_option("--node-id", node_id, "the new member's id")->required();
  app.add_option("--peers", peers,
                 "the new cluster's members, ID=HOST:PORT,... (this node among them), as each "
                 "member will be started with; without it this node alone");
  app.add_option("--cluster-addr", cluster_addr,
                 "without --peers: this node's cluster HOST:PORT, as it will be started with")
      ->capture_default_str();
  app.add_option("--secrets-key-file", key_file,
                 "the cluster key file of the cluster the backup was taken from: its key check "
                 "must match the one of the backup's secrets");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto members = members_from(node_id, peers, cluster_addr);
  if (!members) return refuse(members.error());
  storage::restore_plan plan;
  plan.file = from;
  plan.data_dir = data_dir;
  plan.members = *members;
  plan.written_by = AISCHED_VERSION;
  plan.cluster_id_for = [members = *members](const backup::backup_header& h) {
    return raft::derive_cluster_id(members, "restored from cluster " + h.cluster_id + " at index " +
                                                std::to_string(h.index) + " saved at " +
                                                std::to_string(h.created_at_ms));
  };
  if (!key_file.empty()) {
    auto key = secret_crypto::load_key_file(key_file, "--secrets-key-file");
    if (!key) return refuse(key.error());
    plan.secrets_key = *key;
  }
  auto done = storage::restore_backup(plan);
  if (!done) return refuse(done.error());
  auto& h = done->backup.header;
  std::printf(
      "Restored %s into %s: %llu records, the state of cluster %s at index %llu (term %llu),\n"
      "saved by member %s at %s.\n"
      "New cluster id %s with the members %s: members of cluster %s cannot join it.\n",
      from.c_str(), data_dir.c_str(), static_cast<unsigned long long>(done->backup.records),
      h.cluster_id.empty() ? "?" : h.cluster_id.c_str(), static_cast<unsigned long long>(h.index),
      static_cast<unsigned long long>(h.term), h.node_id.c_str(),
      format_rfc3339(h.created_at_ms).c_str(), done->cluster_id.c_str(), ids_of(*members).c_str(),
      h.cluster_id.empty() ? "?" : h.cluster_id.c_str());
  if (done->runs_lost > 0)
    std::printf(
        "%llu runs were in flight in the backup: each attempt ended worker_lost (\"%s\"), %llu\n"
        "of them to be retried per their task's policy, the others failed.\n",
        static_cast<unsigned long long>(done->runs_lost),
        storage::lost_in_restore(h.index, "W").c_str(),
        static_cast<unsigned long long>(done->runs_retrying));
  if (done->secrets_unchecked)
    std::printf("The backup holds secrets, sealed under the cluster key with key check %s, and no\n"
                "--secrets-key-file was given: start the members with that key file.\n",
                h.key_checks.empty() ? "?" : h.key_checks.front().c_str());
  std::printf("Next: start this node with --node-id %s --data-dir %s%s%s (and the other flags of "
              "the old\ncluster: --secrets-key-file, --auth ...); restore every other member of "
              "--peers the same way.\n",
              node_id.c_str(), data_dir.c_str(), peers.empty() ? " --cluster-addr " : " --peers ",
              peers.empty() ? cluster_addr.c_str() : peers.c_str());
  return 0;
}

}  // namespace aisched::runtime
