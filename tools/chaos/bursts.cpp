// aisched-chaos, bulk enqueues; see bursts.hpp.
#include "tools/chaos/bursts.hpp"

#include <boost/json.hpp>
#include <set>

namespace aisched::chaos {

namespace json = boost::json;

namespace {

std::string text_of(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

int64_t number_of(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  if (v && v->is_int64()) return v->get_int64();
  if (v && v->is_uint64()) return static_cast<int64_t>(v->get_uint64());
  return -1;
}

std::string batch_name(const acked_batch& b) {
  return "the burst of " + std::to_string(b.sent) + " via " + b.via;
}

}  // namespace

std::vector<std::string> check_bursts(const std::string& member,
                                      const std::map<std::string, json::object>& runs,
                                      const burst_record& bursts) {
  std::vector<std::string> out;
  if (bursts.task == 0) return out;
  // The member's runs of the bulk task by batch instant: their shards.
  std::map<std::string, std::set<int64_t>> batches;
  for (auto& [id, x] : runs)
    if (number_of(x, "task_id") == static_cast<int64_t>(bursts.task))
      batches[text_of(x, "slot")].insert(number_of(x, "shard"));

  std::set<std::string> acked_slots;
  for (auto& b : bursts.acked) {
    if (b.run_ids.size() != b.sent)
      out.push_back(batch_name(b) + " was acknowledged with " + std::to_string(b.run_ids.size()) +
                    " run ids");
    std::string slot;
    for (size_t k = 0; k < b.run_ids.size(); ++k) {
      auto& id = b.run_ids[k];
      auto it = runs.find(id);
      if (it == runs.end()) {
        out.push_back("acknowledged run " + id + " (run " + std::to_string(k) + " of " +
                      batch_name(b) + ") missing on " + member);
        continue;
      }
      auto& x = it->second;
      if (number_of(x, "task_id") != static_cast<int64_t>(bursts.task) ||
          number_of(x, "shard") != static_cast<int64_t>(k))
        out.push_back("run " + id + " on " + member + " is not run " + std::to_string(k) + " of " +
                      batch_name(b) + " (task " + std::to_string(number_of(x, "task_id")) +
                      ", shard " + std::to_string(number_of(x, "shard")) + ")");
      auto at = text_of(x, "slot");
      if (slot.empty())
        slot = at;
      else if (at != slot)
        out.push_back(batch_name(b) + " is split over the instants " + slot + " and " + at +
                      " on " + member);
    }
    if (slot.empty()) continue;
    if (!acked_slots.insert(slot).second)
      out.push_back("two acknowledged bursts share the instant " + slot + " on " + member);
    // Shards are unique per instant (a run's id is its key), so a count says it all.
    auto found = batches.find(slot);
    if (auto n = found == batches.end() ? 0 : found->second.size(); n != b.run_ids.size())
      out.push_back(batch_name(b) + " has " + std::to_string(n) + " runs at " + slot + " on " +
                    member + ", " + std::to_string(b.run_ids.size()) + " acknowledged");
  }

  uint64_t unacknowledged = 0;
  for (auto& [slot, shards] : batches) {
    if (acked_slots.count(slot)) continue;
    ++unacknowledged;
    // One raft command: committed whole or not at all.
    auto n = static_cast<int64_t>(shards.size());
    if (*shards.begin() != 0 || *shards.rbegin() != n - 1)
      out.push_back("the unacknowledged burst at " + slot + " on " + member + " is not whole: " +
                    std::to_string(n) + " runs, shards " + std::to_string(*shards.begin()) +
                    " to " + std::to_string(*shards.rbegin()));
  }
  if (unacknowledged > bursts.uncertain)
    out.push_back(member + " has " + std::to_string(unacknowledged) +
                  " bursts nobody acknowledged, but only " + std::to_string(bursts.uncertain) +
                  " requests went unanswered or failed with 5xx");
  return out;
}

}  // namespace aisched::chaos
