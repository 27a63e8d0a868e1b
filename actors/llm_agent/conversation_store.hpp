// The agent's conversations, in the replicated state (column ai_conversations,
// written through `put_ai_records`, so every member and every snapshot holds
// them): reads from this member's RocksDB, writes through the writer it is
// given (common/propose.hpp). Keys: "c/<id>" the conversation, "m/<id>/<seq
// be64>" its newest `messages_kept` messages in order, "p/<id>/<action>"
// destructive calls waiting for the user. Values are JSON (proto/json_wire.hpp
// has the records and their API views). Blocking: used by the detached
// llm_agent actor only. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/llm_agent/agent_loop.hpp"
#include "common/propose.hpp"
#include "proto/time.hpp"

namespace aisched::storage {
class rocks;
}

namespace aisched::llm {

using proto::conversation;
using proto::stored_message;

/// How much history is replayed to the model: the most recent messages up to
/// both bounds, starting at a user message (never an orphan tool result).
struct history_bounds {
  size_t max_messages = 40;
  size_t max_chars = 24'000;
};

/// Messages kept per conversation: appending past it erases the oldest, so a
/// conversation's share of every member's state stays bounded.
constexpr uint64_t messages_kept = 1000;

class conversation_store {
 public:
  conversation_store(std::shared_ptr<storage::rocks> db, ai_record_writer write);

  /// A new conversation owned by `tenant`/`subject`, created at `now`.
  caf::expected<conversation> create(const std::string& tenant, const std::string& subject,
                                     const std::string& first_message, unix_ms now);
  /// errc::not_found when absent.
  caf::expected<conversation> get(const std::string& id);
  /// Appends messages in order, stamped `now`, and updates the conversation's counters.
  caf::error append(conversation& c, const std::vector<chat_message>& msgs, unix_ms now);
  /// The tenant's conversations, most recently updated first.
  caf::expected<std::vector<conversation>> list(const std::string& tenant, size_t limit);
  /// All messages in order (at most `limit`, the oldest first).
  caf::expected<std::vector<stored_message>> messages(const std::string& id, size_t limit);
  /// The tail replayed to the model.
  caf::expected<std::vector<chat_message>> recent(const std::string& id, history_bounds b);

  caf::error put_pending(const std::string& id, const pending_action& a);
  /// Removes and returns a pending action; errc::not_found if there is none.
  caf::expected<pending_action> take_pending(const std::string& id, const std::string& action_id);

 private:
  std::shared_ptr<storage::rocks> db_;
  ai_record_writer write_;
};

}  // namespace aisched::llm
