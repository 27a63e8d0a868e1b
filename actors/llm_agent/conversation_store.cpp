// The agent's conversations in RocksDB; see conversation_store.hpp.
#include "actors/llm_agent/conversation_store.hpp"

#include <algorithm>

#include <boost/json.hpp>
#include <rocksdb/db.h>

#include "proto/errors.hpp"
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

std::string str(const json::object& o, const char* k) {
  auto* v = o.if_contains(k);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

int64_t num(const json::object& o, const char* k) {
  auto* v = o.if_contains(k);
  // Never to_number<int64_t>(): it throws on 0.5 or 1e300.
  if (v && v->is_int64()) return v->get_int64();
  if (v && v->is_uint64() && v->get_uint64() <= uint64_t(INT64_MAX)) return int64_t(v->get_uint64());
  return 0;
}

json::object conv_json(const conversation& c) {
  return {{"id", c.id},           {"tenant", c.tenant},         {"subject", c.subject},
          {"title", c.title},     {"created_at", c.created_at}, {"updated_at", c.updated_at},
          {"messages", c.messages}};
}

conversation conv_from(const json::object& o) {
  conversation c;
  c.id = str(o, "id");
  c.tenant = str(o, "tenant");
  c.subject = str(o, "subject");
  c.title = str(o, "title");
  c.created_at = num(o, "created_at");
  c.updated_at = num(o, "updated_at");
  c.messages = static_cast<uint64_t>(num(o, "messages"));
  return c;
}

json::object msg_json(const chat_message& m) {
  json::object o{{"role", m.role}, {"content", m.content}};
  if (!m.tool_calls.empty()) {
    json::array calls;
    for (auto& c : m.tool_calls)
      calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
    o["tool_calls"] = std::move(calls);
  }
  if (!m.tool_call_id.empty()) o["tool_call_id"] = m.tool_call_id;
  if (!m.name.empty()) o["name"] = m.name;
  return o;
}

chat_message msg_from(const json::object& o) {
  chat_message m;
  m.role = str(o, "role");
  m.content = str(o, "content");
  m.tool_call_id = str(o, "tool_call_id");
  m.name = str(o, "name");
  if (auto* calls = o.if_contains("tool_calls"); calls && calls->is_array())
    for (auto& c : calls->get_array())
      if (c.is_object())
        m.tool_calls.push_back({str(c.get_object(), "id"), str(c.get_object(), "name"),
                                str(c.get_object(), "arguments")});
  return m;
}

proto::ai_record put(std::string key, std::string value) {
  return {proto::ai_column::conversations, std::move(key), std::move(value), false};
}

proto::ai_record erase(std::string key) {
  return {proto::ai_column::conversations, std::move(key), "", true};
}

caf::expected<json::object> parse_object(const std::string& raw) {
  json::error_code ec;
  auto v = json::parse(raw, ec);
  if (ec || !v.is_object()) return make_error(errc::corrupted, "unreadable conversation record");
  return std::move(v.get_object());
}

}  // namespace

conversation_store::conversation_store(std::shared_ptr<storage::rocks> db, ai_record_writer write)
    : db_(std::move(db)), write_(std::move(write)) {}

caf::expected<conversation> conversation_store::create(const std::string& tenant,
                                                       const std::string& subject,
                                                       const std::string& first_message) {
  conversation c;
  c.id = random_id();
  c.tenant = tenant;
  c.subject = subject;
  c.title = first_message.substr(0, 80);
  c.created_at = c.updated_at = now_ms();
  if (auto err = write_({put(conv_key(c.id), json::serialize(conv_json(c)))})) return err;
  return c;
}

caf::expected<conversation> conversation_store::get(const std::string& id) {
  auto raw = db_->get(cf, conv_key(id));
  if (!raw) return raw.error();
  if (!*raw) return make_error(errc::not_found, "conversation_id", "no conversation '" + id + "'");
  auto o = parse_object(**raw);
  if (!o) return o.error();
  return conv_from(*o);
}

caf::error conversation_store::append(conversation& c, const std::vector<chat_message>& msgs) {
  if (msgs.empty()) return {};
  // Two turns of one conversation may run at once, each with its own copy:
  // the stored count is the one to continue from (this store is not shared
  // between threads, so read-then-write is safe).
  if (auto stored = get(c.id)) c.messages = std::max(c.messages, stored->messages);
  std::vector<proto::ai_record> records;
  auto at = now_ms();
  for (auto& m : msgs) {
    auto o = msg_json(m);
    o["at"] = at;
    if (c.messages >= messages_kept) records.push_back(erase(msg_key(c.id, c.messages - messages_kept)));
    records.push_back(put(msg_key(c.id, c.messages++), json::serialize(o)));
  }
  c.updated_at = at;
  records.push_back(put(conv_key(c.id), json::serialize(conv_json(c))));
  return write_(std::move(records));
}

caf::expected<std::vector<conversation>> conversation_store::list(const std::string& tenant,
                                                                  size_t limit) {
  std::vector<conversation> out;
  auto it = db_->iterate(cf);
  size_t scanned = 0;
  for (it->Seek("c/"); it->Valid() && it->key().starts_with("c/") && scanned < max_scan;
       it->Next(), ++scanned) {
    auto o = parse_object(it->value().ToString());
    if (!o) continue;
    auto c = conv_from(*o);
    if (c.tenant == tenant) out.push_back(std::move(c));
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
    auto o = parse_object(it->value().ToString());
    if (!o) return o.error();
    auto key = it->key().ToString();
    stored_message m;
    m.seq = key.size() >= prefix.size() + 8 ? storage::keys::get_u64(key, prefix.size()) : 0;
    m.at = num(*o, "at");
    m.msg = msg_from(*o);
    out.push_back(std::move(m));
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
    auto o = parse_object(it->value().ToString());
    if (!o) return o.error();
    auto m = msg_from(*o);
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
  json::object o{{"action_id", a.action_id},
                 {"name", a.name},
                 {"arguments", a.arguments},
                 {"summary", a.summary}};
  return write_({put(pending_key(id, a.action_id), json::serialize(o))});
}

caf::expected<pending_action> conversation_store::take_pending(const std::string& id,
                                                               const std::string& action_id) {
  auto key = pending_key(id, action_id);
  auto raw = db_->get(cf, key);
  if (!raw) return raw.error();
  if (!*raw)
    return make_error(errc::not_found, "action_id",
                      "no action '" + action_id + "' waits for confirmation in this conversation");
  auto o = parse_object(**raw);
  if (!o) return o.error();
  if (auto err = write_({erase(key)})) return err;
  return pending_action{str(*o, "action_id"), str(*o, "name"), str(*o, "arguments"),
                        str(*o, "summary")};
}

std::string to_json_text(const conversation& c) {
  auto o = conv_json(c);
  o["created_at"] = format_rfc3339(c.created_at);
  o["updated_at"] = format_rfc3339(c.updated_at);
  return json::serialize(o);
}

std::string to_json_text(const stored_message& m) {
  auto o = msg_json(m.msg);
  o["seq"] = m.seq;
  o["at"] = format_rfc3339(m.at);
  return json::serialize(o);
}

}  // namespace aisched::llm
