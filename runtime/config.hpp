// The node's configuration: defaults < config file < AISCHED_* environment
// < command-line flags. Parsed with CLI11; validated before anything starts.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <vector>
#include <string>

#include <caf/expected.hpp>

#include "common/llm_client.hpp"
#include "actors/worker/sandbox.hpp"

namespace aisched::runtime {

struct host_port {
  std::string host;
  uint16_t port = 0;
};

/// A member of the scheduler group: its stable id and cluster address.
struct member_address {
  std::string id;
  host_port addr;
};

/// An external worker silent this long is offline (no new runs go there).
constexpr int64_t worker_offline_after_ms = 30'000;

struct config {
  std::string node_id = "n1";
  std::string data_dir = "./data";
  host_port http{"127.0.0.1", 8080};
  host_port cluster{"127.0.0.1", 7400};
  host_port join;  // worker nodes: a scheduler node's cluster address
  /// Scheduler nodes: `--join` without an address. Start empty, as a member
  /// that a running group adds (POST /api/v1/cluster/members); never campaign
  /// before the leader has made it a voter.
  bool join_group = false;
  std::vector<member_address> peers;  // all scheduler members incl. this one (empty: alone)
  /// --cluster-token: mixed into the cluster id a group derives when it
  /// bootstraps; another token makes another cluster on the same addresses.
  std::string cluster_token = "aisched";
  /// --i-know-the-quorum-is-gone (`aisched recover --force-new-cluster`,
  /// runtime/recover_quorum.cpp): recover even though other members answer at
  /// their cluster addresses (by default that refuses: the group can still form
  /// a quorum, and a second group beside it would fire every run twice).
  bool quorum_gone = false;
  std::set<std::string> roles{"scheduler", "worker", "gateway"};
  std::string log_level = "info";
  unsigned threads = 2;
  size_t max_body_bytes = 1 << 20;
  size_t worker_slots = 64;  // concurrent runs of the built-in worker (README "Sizing")
  uint64_t max_backlog = 1000;  // pending + dispatched runs at which pressure is red (x0.9)
  double dispatch_rate = 0;  // dispatches per second; 0 = unlimited (free worker slots bound it)
  int64_t fire_ahead_ms =
      250;  // a slot fires this long before its instant (README "Start on time")
  std::map<std::string, std::string> worker_labels;
  // This node's worker takes runs of this tenant only, or of every tenant
  // when shared (a cluster member: the operator who starts it decides).
  std::string worker_tenant = "default";
  bool worker_shared = false;
  unsigned drain_seconds = 30;
  /// A worker silent this long is dead: the leader ends its runs' attempts
  /// `worker_lost` (retried per policy). Longer than worker_offline_after_ms,
  /// so a worker that may still run an attempt gets no second one meanwhile.
  int64_t worker_dead_after_ms = 45'000;
  // Cluster TLS (all three or none; runtime/tls.hpp): this node's certificate
  // and key, and the private cluster CA that signs every node's certificate.
  std::string tls_cert, tls_key, tls_ca, tls_key_password;
  // Cluster admission (README "Cluster admission"): the content of
  // --cluster-secret-file, the same on every node; "" admits any peer.
  std::string cluster_secret;
  // Secrets (README "Secrets"): the cluster key file, the same on every
  // member; "" disables the secret store. The previous key opens data keys
  // not yet re-wrapped during a rotation.
  std::string secrets_key_file;
  std::string secrets_previous_key_file;
  // Authentication (README "Authentication"): off by default. The secret signs
  // JWTs and must be the same on every node; the admin password creates the
  // first user while there is none.
  bool auth = false;
  std::string auth_secret;
  std::string admin_password;
  unsigned token_ttl_seconds = 3600;
  std::vector<std::string> alert_webhooks;  // run_failed alerts are POSTed here
  int64_t load_sample_interval_ms = 30'000;  // worker load history sampling (leader)
  // Run-history retention (README "Run history"): the leader's sweep interval
  // and what a task's own policy leaves at 0 (0 here: unbounded).
  int64_t retention_interval_ms = 10'000;
  int64_t retention_keep_for_ms = 7LL * 24 * 3'600'000;
  uint32_t retention_keep_runs = 1000;
  // Scheduled backups (README "Backups"): the leader writes a backup file into
  // backup_dir every interval and keeps the newest backup_keep; "" is off.
  std::string backup_dir;
  int64_t backup_interval_ms = 3'600'000;
  uint32_t backup_keep = 24;
  llm::llm_config llm;  // the AI agent's model; empty endpoint: AI routes answer llm_not_configured
  // Runs (README "Run isolation"): the user shell commands execute as (resolved at
  // parse time; keep = the node's own) and the root of their scratch directories.
  worker::run_user run_user;
  std::map<std::string, worker::run_user> tenant_users;  // --tenant-run-as TENANT=USER
  std::string scratch_dir;  // default /tmp/aisched-runs-<node uid>
  std::string supervisor;   // aisched-supervisor, found at startup (not a flag)
  // --run-network: "none" (a network namespace with only its own loopback: no
  // route to the node's ports) or "host". `run_network_given` is false when the
  // default applies: a node that cannot make namespaces then warns and shares.
  std::string run_network = "none";
  bool run_network_given = false;
  // --allow-shared-data-dir: start on a data directory others may read.
  bool allow_shared_data_dir = false;
  uint64_t snapshot_every = 10'000;  // raft: compact after this many applied entries (advanced)
  /// Test hook (--fault-file, hidden): while this file exists every RocksDB
  /// write fails with ENOSPC (EIO if the file holds "eio"). Empty: off.
  std::string fault_file;
};

/// Parses "host:port" (port 0 allowed: pick a free one).
caf::expected<host_port> parse_host_port(const std::string& s, const char* field);

/// Outcome of parsing the command line: run with `cfg`, or exit with `exit_code`
/// (after --help / --version, or a usage error already printed).
struct parse_outcome {
  bool run = false;
  int exit_code = 0;
  config cfg;
};

parse_outcome parse_command_line(int argc, char** argv);

/// Overwrites and removes the secrets parse_command_line read from the environment
/// (AISCHED_AUTH_SECRET, ..._PASSWORD, ..._API_KEY), so no later reader of this
/// process's environment finds them. Call before any thread starts.
void scrub_secret_environment();

}  // namespace aisched::runtime
