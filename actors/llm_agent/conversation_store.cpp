// The agent's conversations in RocksDB; see conversation_store.hpp.
#include "actors/llm_agent/conversation_store.hpp"

#include <algorithm>

#include <boost/json.hpp>
#include <rocksdb/db.h>

#include "proto/errors.hpp"
#include "proto/json_wire.hpp"
#include "proto/random.hpp"
#include "storage/keys.hpp"
#include "storage/rocks.hpp"

namespace aisched::llm {

namespace json = boost::json;
using storage::column;

namespace {

constexpr column cf = column::ai_conversations;
constexpr size_t max_scan = 10'000;  // conversations read to build a list

std::string conv_key(const std::string& id) { return "c/" + id; }
std::string msg_prefix(const std::string& id) { return "m/" + id + "/"; }
std::string msg_key(const std::string& id, uint64_t seq) {
  auto k = msg_prefix(id);
  storage::keys::put_u64(k, seq);
  return k;
}
std::string pending_key(const std::string& id, const std::string& action) {
  return "p/" + id + "/" + action;
}

/// A conversation id from the kernel's randomness: ids are not guessable.
std::string random_id() { return "c-" + proto::random_hex(8); }

proto::ai_record put(std::string key, std::string value) {
  return {proto::ai_column::conversations, std::move(key), std::move(value), false};
}

proto::ai_record erase(std::string key) {
  return {proto::ai_column::conversations, std::move(key), "", true};
}

/// A stored record's JSON; errc::corrupted when it is not JSON at all.
caf::expected<json::value> parse_record(const std::string& raw) {
  json::error_code ec;
  auto v = json::parse(raw, ec);
  if (ec) return make_error(errc::corrupted, "unreadable conversation record");
  return v;
}

caf::expected<conversation> read_conversation(const std::string& raw) {
  auto v = parse_record(raw);
  if (!v) return v.error();
  return proto::conversation_from_record(*v);
}

caf::expected<stored_message> read_message(const std::string& raw) {
  auto v = parse_record(raw);
  if (!v) return v.error();
  return proto::message_from_record(*v);
}

}  // namespace

conversation_store::conversation_store(std::shared_ptr<storage::rocks> db, ai_record_writer write)
    : db_(std::move(db)), write_(std::move(write)) {}

caf::expected<conversation> conversation_store::create(const std::string& tenant,
                                                       const std::string& subject,
                                                       const std::string& first_message,
                                                       unix_ms now) {
  conversation c;
  c.id = random_id();
  c.tenant = tenant;
  c.subject = subject;
  c.title = first_message.substr(0, 80);
  c.created_at = c.updated_at = now;
  if (auto err = write_({put(conv_key(c.id), json::serialize(proto::conversation_record(c)))}))
    return err;
  return c;
}

caf::expected<conversation> conversation_store::get(const std::string& id) {
  auto raw = db_->get(cf, conv_key(id));
  if (!raw) return raw.error();
  if (!*raw) return make_error(errc::not_found, "conversation_id", "no conversation '" + id + "'");
  return read_conversation(**raw);
}

caf::error conversation_store::append(conversation& c, const std::vector<chat_message>& msgs,
                                      unix_ms now) {
  if (msgs.empty()) return {};
  // Two turns of one conversation may run at once, each with its own copy:
  // the stored count is the one to continue from (this store is not shared
  // between threads, so read-then-write is safe).
  if (auto stored = get(c.id)) c.messages = std::max(c.messages, stored->messages);
  std::vector<proto::ai_record> records;
  auto at = now;
  for (auto& m : msgs) {
    if (c.messages >= messages_kept) records.push_back(erase(msg_key(c.id, c.messages - messages_kept)));
    records.push_back(put(msg_key(c.id, c.messages++), json::serialize(proto::message_record(m, at))));
  }
  c.updated_at = at;
  records.push_back(put(conv_key(c.id), json::serialize(proto::conversation_record(c))));
  return write_(std::move(records));
}

caf::expected<std::vector<conversation>> conversation_store::list(const std::string& tenant,
                                                                  size_t limit) {
  std::vector<conversation> out;
  auto it = db_->iterate(cf);
  size_t scanned = 0;
  for (it->Seek("c/"); it->Valid() && it->key().starts_with("c/") && scanned < max_scan;
       it->Next(), ++scanned) {
    auto c = read_conversation(it->value().ToString());
    if (!c) continue;
    if (c->tenant == tenant) out.push_back(std::move(*c));
  }
  std::sort(out.begin(), out.end(),
            [](const conversation& a, const conversation& b) { return a.updated_at > b.updated_at; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

caf::expected<std::vector<stored_message>> conversation_store::messages(const std::string& id,
                                                                        size_t limit) {
  std::vector<stored_message> out;
  auto prefix = msg_prefix(id);
  auto it = db_->iterate(cf);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix) && out.size() < limit;
       it->Next()) {
    auto m = read_message(it->value().ToString());
    if (!m) return m.error();
    auto key = it->key().ToString();
    m->seq = key.size() >= prefix.size() + 8 ? storage::keys::get_u64(key, prefix.size()) : 0;
    out.push_back(std::move(*m));
  }
  return out;
}

caf::expected<std::vector<chat_message>> conversation_store::recent(const std::string& id,
                                                                    history_bounds b) {
  std::vector<chat_message> tail;  // newest first while collecting
  auto prefix = msg_prefix(id);
  auto it = db_->iterate(cf);
  it->SeekForPrev(msg_key(id, UINT64_MAX));
  size_t chars = 0;
  for (; it->Valid() && it->key().starts_with(prefix) && tail.size() < b.max_messages; it->Prev()) {
    auto stored = read_message(it->value().ToString());
    if (!stored) return stored.error();
    auto& m = stored->msg;
    chars += m.content.size();
    for (auto& c : m.tool_calls) chars += c.arguments.size();
    if (chars > b.max_chars && !tail.empty()) break;
    tail.push_back(std::move(m));
  }
  // Cut to start at a user message: a tool result or a call without its
  // partner would be rejected by the provider.
  while (!tail.empty() && tail.back().role != "user") tail.pop_back();
  std::reverse(tail.begin(), tail.end());
  return tail;
}

caf::error conversation_store::put_pending(const std::string& id, const pending_action& a) {
  return write_(
      {put(pending_key(id, a.action_id), json::serialize(proto::pending_action_record(a)))});
}

caf::expected<pending_action> conversation_store::take_pending(const std::string& id,
                                                               const std::string& action_id) {
  auto key = pending_key(id, action_id);
  auto raw = db_->get(cf, key);
  if (!raw) return raw.error();
  if (!*raw)
    return make_error(errc::not_found, "action_id",
                      "no action '" + action_id + "' waits for confirmation in this conversation");
  auto v = parse_record(**raw);
  if (!v) return v.error();
  auto a = proto::pending_action_from_record(*v);
  if (!a) return a.error();
  if (auto err = write_({erase(key)})) return err;
  return a;
}

}  // namespace aisched::llm
