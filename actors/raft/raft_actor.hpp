// The raft actor: the seam every write goes through, and this node's member of
// the Raft group. It drives the pure raft::core: ticks it, steps it with peer
// messages, and for each `ready` persists (synced, one fsync per batch), sends
// to peers over CAF, applies committed entries to the state machine, answers
// the proposals that committed, and tells the commit listeners (trigger,
// retry, router, backpressure) what was applied and whether this node leads.
// A follower forwards proposals to the leader, so clients never see who leads.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor_clock.hpp>

#include "common/activity.hpp"
#include "actors/raft/core.hpp"
#include "proto/interfaces.hpp"
#include "storage/raft_log.hpp"

namespace aisched::storage {
class rocks;
class state_machine;
class snapshot_export;
class snapshot_staging;
class wal_sync;
}  // namespace aisched::storage

namespace aisched::raft {

using peer_msg_atom = caf::atom_constant<caf::atom("raftmsg")>;
using reconnect_atom = caf::atom_constant<caf::atom("raftconn")>;
using snap_chunk_atom = caf::atom_constant<caf::atom("raftsnap")>;
using hello_atom = caf::atom_constant<caf::atom("rafthello")>;
using storage_retry_atom = caf::atom_constant<caf::atom("raftretry")>;

/// One piece of a state-machine snapshot, leader -> follower, sent as a
/// request: the follower answers with the next `seq` it expects, or
/// `snapshot_complete` when it needs no more. The core's snapshot_request
/// travels as the fields here and is stepped only once every chunk arrived,
/// so the core never learns of a snapshot whose state is not at hand.
struct snapshot_chunk {
  std::string to;
  std::string from;       // the leader
  uint64_t term = 0;      // the leader's term
  uint64_t index = 0;     // the last entry the state reflects
  uint64_t last_term = 0; // that entry's term
  uint64_t seq = 0;       // 0, 1, ... within one transfer; 0 starts a new one
  bool last = false;
  std::string data;       // records, format in storage/snapshot.cpp
  proto::membership members;  // the membership at `index`
  /// The data format `data`'s records are in (storage::current_format of the
  /// leader's build): a member of another format refuses the chunk rather than
  /// misread it, whatever its hello said.
  uint32_t format = 0;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, snapshot_chunk& x) {
  return f(caf::meta::type_name("aisched.raft.snapshot_chunk"), proto::field("to"), x.to,
           proto::field("from"), x.from, proto::field("term"), x.term,
           proto::field("index"), x.index, proto::field("last_term"), x.last_term,
           proto::field("seq"), x.seq, proto::field("last"), x.last, proto::field("data"), x.data,
           proto::field("members"), x.members, proto::field("format"), x.format);
}

/// A follower's answer to a chunk meaning "stop sending, I am done with it".
constexpr uint64_t snapshot_complete = ~uint64_t{0};

/// The full interface of a raft actor: the local one (proto::raft_actor) plus
/// what members send each other and its own timers.
using node_actor = proto::raft_actor::extend<
    caf::reacts_to<peer_msg_atom, message>, caf::reacts_to<caf::tick_atom>,
    caf::reacts_to<reconnect_atom, std::string>, caf::reacts_to<storage_retry_atom, uint64_t>,
    caf::replies_to<snap_chunk_atom, snapshot_chunk>::with<uint64_t>,
    caf::replies_to<hello_atom, std::string, std::string, uint32_t, caf::actor,
                    caf::actor>::with<std::string>>;

/// Which member of a pair opens the connection between them, by `members` (the
/// membership this member holds): a voter dials a learner (one that joins knows
/// nobody's address and cannot dial, whatever its id), else the one with the
/// smaller id; a member that is not in `members`, or a peer that is not, is
/// never dialed by it (a member that joins waits for the group). The dialer
/// reaches the other's raft actor and introduces itself with
/// hello (its id, its cluster id, the data format it speaks, its raft actor and
/// its node's endpoint); the other never dials it, waits for that hello and
/// answers with its cluster id, or refuses a member of another cluster or format. Both record the other's endpoint in
/// proto::remember_member, so that no one else dials a second connection. Two members dialing each other at the same time make CAF
/// 0.17.6's BASP close one connection of the crossing pair on each side as
/// "redundant", and when each side closes the one the other kept, both lose
/// the route and every proxy of the other node (basp/instance.cpp,
/// server_handshake; routing_table::erase_direct). Slow TLS handshakes made
/// that the rule on every reconnect, so a group over TLS never elected. The two
/// sides read the rule from memberships that can differ for a moment (a
/// learner's promotion applied on one side first); a link already up stays up,
/// and a dial refused meanwhile is retried.
bool dials(const proto::membership& members, const std::string& self_id,
           const std::string& peer_id);

/// Another member: its id and cluster address (where its endpoint is published).
struct peer_address {
  std::string id;
  std::string host;
  uint16_t port = 0;
};

struct raft_options {
  std::string node_id = "n1";
  std::vector<peer_address> peers;  // the other members (empty: a group of one)
  /// This member joins a running group (aisched --join): no initial members;
  /// it never campaigns and waits for a leader that added it to contact it.
  bool join = false;
  /// This member's own cluster address (host:port), recorded in the initial
  /// membership so that members added later can reach it.
  std::string cluster_addr;
  duration_ms tick = 50;            // one core tick
  int election_ticks = 10;          // election timeout 10-20 ticks = 0.5-1 s
  /// Compact once this many entries were applied past the last snapshot; the
  /// log in memory and on disk stays below about this many applied entries.
  /// A tenth of it (etcd keeps a tail too) stays behind for followers that are
  /// only a little behind, so they need no snapshot. 0 = never compact.
  uint64_t snapshot_every = 10'000;
  /// Largest snapshot chunk in one CAF message.
  size_t snapshot_chunk_bytes = 1 << 20;
  /// How this member reaches the raft actor of a peer it dials (see dials()).
  /// Empty, as in a node: over the peer's cluster port (its endpoint's handles,
  /// through proto::cluster_connector). Set: a lookup by member id that
  /// answers an invalid handle while the peer is not there (retried like a
  /// failed connection), for groups of actors in one actor system such as the
  /// actor tests on CAF's test coordinator.
  std::function<node_actor(const std::string& id)> resolve_peer;
  /// Seed of the election timeouts; 0 draws one from std::random_device.
  uint64_t seed = 0;
  /// The id of the cluster this member's data belongs to (membership_guard's
  /// stored_cluster_id). Members say it in their hello, and a member of another
  /// cluster is refused. "" (a member that joins, or a test group): learned
  /// from the first member that says hello with one, then recorded.
  std::string cluster_id;
};

struct raft_state {
  struct waiter {
    uint64_t term;
    caf::typed_response_promise<proto::applied> promise;
  };
  struct peer {
    peer_address addr;
    node_actor handle;
    uint64_t generation = 0;  // of the connection attempt; stale replies are ignored
    /// Why its hello, or ours, was refused (it belongs to another cluster);
    /// "" while it is not. Its messages are dropped while set.
    std::string refused;
    /// Its node's endpoint, as its hello gave it (remembered by address once
    /// the address is known).
    proto::endpoint_actor endpoint;
  };
  /// A snapshot this leader streams to one follower, one chunk in flight.
  struct outgoing_snapshot {
    uint64_t id = 0;  // tells this transfer's answers from an earlier one's
    std::shared_ptr<storage::snapshot_export> source;
    snapshot_chunk next;  // header of the next chunk to send
    caf::actor_clock::time_point started;  // on the actor clock
  };
  /// A snapshot this follower is receiving, staged until complete.
  struct incoming_snapshot {
    snapshot_chunk header;  // from, term, index, last_term of the transfer; seq expected next
    std::shared_ptr<storage::snapshot_staging> staging;
    bool complete = false;  // every chunk staged; waits for the core's ready
  };
  raft_options opts;
  std::map<std::string, outgoing_snapshot> sending;  // follower id -> transfer
  uint64_t transfers = 0;
  std::optional<incoming_snapshot> receiving;
  std::shared_ptr<storage::rocks> db;
  std::shared_ptr<storage::state_machine> sm;
  std::shared_ptr<storage::raft_log> log;
  std::shared_ptr<core> member;
  /// Syncs the log in the background while a ready's batch is computed.
  std::shared_ptr<storage::wal_sync> syncer;
  std::map<std::string, peer> peers;
  /// The membership the links were last matched to (membership_links.cpp).
  proto::membership linked_members;
  std::map<uint64_t, waiter> waiting;  // log index -> the local proposal's promise
  /// Proposals this follower forwarded to the leader, by log index: answered
  /// once this member has applied them too, so a client that wrote through this
  /// node reads its write here (a token it just created works here at once).
  std::multimap<uint64_t, std::pair<caf::typed_response_promise<proto::applied>, proto::applied>>
      forwarded;
  bool flush_scheduled = false;
  std::vector<proto::commit_listener_actor> listeners;
  proto::leadership told;            // what listeners were told last
  uint64_t last_applied_term = 0;    // term of the last applied entry
  role observed_role = role::follower;  // role and term the metrics last saw
  uint64_t observed_term = 0;
  /// Set while this member cannot persist (a RocksDB write failed): it is
  /// fenced. It answers proposals with this error, drops peer messages (no
  /// votes, no acks: a leader's followers elect another), tells the listeners
  /// it does not lead, and probes storage with backoff; once a probe write
  /// succeeds it restarts its member from what is on disk (a ready that was
  /// not persisted is lost, as the core's durability contract allows).
  caf::error fault;
  uint64_t fault_generation = 0;         // of the retry timer; stale ones are ignored
  std::chrono::milliseconds retry_delay{0};
  inspector::activity activity;
  static inline const char* name = "raft";
};

/// Restores the member from `db`: hard state and log from the raft log, the
/// applied index from the state machine, and `base_members`, the membership
/// at the applied index (empty: the initial one from `opts`). Call before
/// spawning.
caf::expected<std::unique_ptr<core>> restore(storage::raft_log& log, storage::state_machine& sm,
                                             const raft_options& opts,
                                             proto::membership base_members = {});

/// What raft_actor_impl needs besides the database: the opened log and the
/// restored member.
struct member_parts {
  raft_options opts;
  std::shared_ptr<storage::raft_log> log;
  std::shared_ptr<core> member;
};

/// Opens the raft log in `db` and restores the member described by `opts`.
caf::expected<member_parts> open_member(storage::rocks& db, storage::state_machine& sm,
                                        raft_options opts);

/// Spawn detached: appends fsync. `log` and `member` come from open/restore.
node_actor::behavior_type raft_actor_impl(node_actor::stateful_pointer<raft_state> self,
                                          raft_options opts, std::shared_ptr<storage::rocks> db,
                                          std::shared_ptr<storage::state_machine> sm,
                                          std::shared_ptr<storage::raft_log> log,
                                          std::shared_ptr<core> member);

}  // namespace aisched::raft
