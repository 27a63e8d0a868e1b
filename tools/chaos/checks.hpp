// aisched-chaos, checks: waits for the group to settle once the faults have
// stopped (polling each member's own state with a deadline), then checks the
// history against the promises in the README: acknowledged creates on every
// member, one fire per (task, slot, shard), every execution a distinct recorded
// attempt, every acknowledged bulk-enqueued run there once (bursts), members
// that agree, no run left in a non-final state.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "tools/chaos/workload.hpp"

namespace aisched::chaos {

/// What one member serves from its own state.
struct member_snapshot {
  std::string id;
  bool ok = false;
  std::string error;  // why the read failed
  member_view view;
  std::map<uint64_t, boost::json::object> tasks;
  std::map<std::string, boost::json::object> instances;
  std::vector<std::string> listed_twice;  // run ids the paged list gave more than once
};

struct settle_outcome {
  bool settled = false;
  double seconds = 0;
  std::string reason;                      // why it had not settled (last poll)
  std::string leader;                      // the agreed leader's id, if any
  std::vector<member_snapshot> snapshot;   // the last full read of every member
};

/// Polls until every member is up and agrees on the leader, every run is final,
/// every acknowledged one-shot task has fired, and the members report the same
/// commit and applied index, tasks and runs; or until `deadline`.
settle_outcome settle(const port_board& ports, size_t members, const std::vector<acked_task>& acked,
                      std::chrono::steady_clock::time_point deadline);

/// Figures for the report.
struct run_summary {
  size_t instances = 0, effect_lines = 0, retried_runs = 0, lost_attempts = 0;
  size_t held_by_pause = 0;  // pending runs of the periodic tasks the harness paused
  std::vector<std::string> stuck;  // ids of the runs left neither final nor held by a pause
  std::map<std::string, size_t> by_state;
  std::map<std::string, size_t> ended_attempts;  // earlier attempts of retried runs, by how they ended
};

/// Checks the settled history; returns the violations, one line each.
/// `bursts` are the bulk enqueues sent, `effects_path` is the side-effect file,
/// `leader` the endpoint of the member asked for attempt histories (replicated
/// state: any member answers the same).
std::vector<std::string> check_history(const settle_outcome& s, const std::vector<acked_task>& acked,
                                       const burst_record& bursts, const std::string& effects_path,
                                       const std::string& leader, run_summary& summary);

}  // namespace aisched::chaos
