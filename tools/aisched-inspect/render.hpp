// How aisched-inspect shows a node_summary: a table for people (one row per
// actor, its details as key=value) or JSON (`-o json`).
#pragma once

#include <boost/json/value.hpp>
#include <iosfwd>

#include "proto/inspection.hpp"

namespace aisched::inspect_tool {

/// The summary as a JSON object: node_id, roles, started_at, collected_at and
/// actors[] (name, kind, actor_id, responsive, error, mailbox, handled,
/// last_active (RFC 3339 or null), idle_ms (null when never active), details).
boost::json::value to_json(const proto::node_summary& s);

/// A header line about the node, then the actor table.
void print_table(std::ostream& out, const proto::node_summary& s);

}  // namespace aisched::inspect_tool
