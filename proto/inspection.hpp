// Actor inspection vocabulary: what every actor answers about itself
// (`inspect` -> actor_summary) and what a node's inspector answers about all
// of them (`inspnode` -> node_summary). aisched-inspect fetches the inspector
// from a node's endpoint (`inspector`) over the cluster port. See DESIGN §2.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "proto/field.hpp"
#include "proto/time.hpp"

namespace aisched::proto {

using inspect_atom = caf::atom_constant<caf::atom("inspect")>;
using inspect_node_atom = caf::atom_constant<caf::atom("inspnode")>;
using inspector_atom = caf::atom_constant<caf::atom("inspector")>;
using enroll_atom = caf::atom_constant<caf::atom("enroll")>;

/// One actor as it sees itself. `mailbox` is the queue length when the actor
/// handled the request; `handled` counts the messages its behaviour matched
/// since it started (replies to its own requests and system messages, e.g.
/// down or exit, are not counted). `details` is the actor's own state summary
/// (keys and values are for people; e.g. raft: role, term, commit_index).
/// An actor that did not answer in time is listed with responsive = false and
/// the error it caused (e.g. request_timeout), everything else zero.
struct actor_summary {
  std::string name;  // as the node registered it ("raft", "worker")
  std::string kind;  // the actor's type ("raft", "worker", "endpoint")
  uint64_t actor_id = 0;
  bool responsive = true;
  std::string error;
  uint64_t mailbox = 0;
  uint64_t handled = 0;
  unix_ms last_active_ms = 0;  // when it last handled a message (0: never)
  std::map<std::string, std::string> details;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_summary& x) {
  return f(caf::meta::type_name("aisched.actor_summary"), field("name"), x.name,
           field("kind"), x.kind, field("actor_id"), x.actor_id, field("responsive"), x.responsive,
           field("error"), x.error, field("mailbox"), x.mailbox, field("handled"), x.handled,
           field("last_active_ms"), x.last_active_ms, field("details"), x.details);
}

/// What a node's inspector answers: the node and one summary per actor.
struct node_summary {
  std::string node_id;
  std::vector<std::string> roles;
  unix_ms started_at_ms = 0;    // when the inspector (the node) started
  unix_ms collected_at_ms = 0;  // when the answer was put together
  std::vector<actor_summary> actors;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_summary& x) {
  return f(caf::meta::type_name("aisched.node_summary"), field("node_id"), x.node_id,
           field("roles"), x.roles, field("started_at_ms"), x.started_at_ms,
           field("collected_at_ms"), x.collected_at_ms, field("actors"), x.actors);
}

/// The one message every inspected actor answers; each actor interface in
/// proto/interfaces.hpp lists it, so any of them converts to this handle.
using inspect_signature = caf::replies_to<inspect_atom>::with<actor_summary>;
using inspectable_actor = caf::typed_actor<inspect_signature>;

/// inspector (actors/inspector): one per node. `inspnode` asks every enrolled
/// actor for its summary, waiting at most the given milliseconds; `enroll`
/// adds an actor under a name (actors spawned after the inspector).
using inspector_actor =
    caf::typed_actor<inspect_signature,
                     caf::replies_to<inspect_node_atom, duration_ms>::with<node_summary>,
                     caf::reacts_to<enroll_atom, std::string, inspectable_actor>>;

}  // namespace aisched::proto
