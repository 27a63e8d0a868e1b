// Attempt records of runs; see attempt_history.hpp.
#include "storage/attempt_history.hpp"

#include <rocksdb/db.h>

#include "proto/codec.hpp"
#include "proto/errors.hpp"
#include "storage/batch_ctx.hpp"
#include "storage/keys.hpp"
#include "storage/rocks.hpp"

namespace aisched::storage {

using namespace proto;

namespace {

/// The last `cap` bytes of `s`, not starting inside a UTF-8 sequence.
std::string tail(const std::string& s, size_t cap) {
  if (s.size() <= cap) return s;
  size_t from = s.size() - cap;
  for (int i = 0; i < 3 && from < s.size() && (static_cast<uint8_t>(s[from]) & 0xC0) == 0x80; ++i)
    ++from;
  return s.substr(from);
}

}  // namespace

bool ends_attempt(instance_state from, instance_state to) {
  bool in_flight = from == instance_state::dispatched || from == instance_state::running;
  return in_flight && (is_terminal(to) || to == instance_state::retry_waiting);
}

attempt_record ended_attempt(const instance& x, instance_state outcome) {
  attempt_record r;
  r.attempt = x.attempt;
  r.worker_id = x.worker_id;
  r.state = outcome;
  r.dispatched_at = x.dispatched_at;
  r.started_at = x.started_at;
  r.finished_at = x.finished_at;
  r.error = x.error;
  if (outcome != instance_state::cancelled) {
    r.exit_code = x.exit_code;
    r.output = tail(x.output, attempt_output_cap);
  }
  return r;
}

attempt_record reported_cancel(const instance& x) {
  auto r = ended_attempt(x, instance_state::cancelled);
  r.exit_code = x.exit_code;
  r.output = tail(x.output, attempt_output_cap);
  return r;
}

bool attempt_kept_by_instance(instance_state from, instance_state to) {
  return ends_attempt(from, to) && is_terminal(to);
}

std::optional<attempt_record> unrecorded_final(const instance& x, uint32_t last_stored) {
  // dispatched_at is reset when a run takes its next attempt, so a set one is
  // the finished attempt's own.
  if (!is_terminal(x.state) || x.dispatched_at == 0 || last_stored >= x.attempt) return {};
  return ended_attempt(x, x.state);
}

attempt_record current_attempt(const instance& x) {
  attempt_record r;
  r.attempt = x.attempt;
  r.worker_id = x.worker_id;
  r.state = x.state;
  r.dispatched_at = x.dispatched_at;
  r.started_at = x.started_at;
  return r;
}

void record_attempt(batch_ctx& ctx, const std::string& instance_key, const attempt_record& r) {
  auto* cf = ctx.db().cf(column::attempts);
  auto key = keys::attempt(instance_key, r.attempt);
  ctx.batch().Put(cf, key, encode(r));
  ctx.wrote_attempt(std::move(key));
  if (r.attempt > attempts_kept)
    ctx.batch().Delete(cf, keys::attempt(instance_key, r.attempt - attempts_kept));
}

caf::error keep_final_attempt(batch_ctx& ctx, const std::string& instance_key,
                              const instance& x) {
  auto stored = ctx.read_attempt_exists(keys::attempt(instance_key, x.attempt));
  if (!stored) return stored.error();
  if (auto r = unrecorded_final(x, *stored ? x.attempt : 0)) record_attempt(ctx, instance_key, *r);
  return {};
}

caf::expected<attempt_list> read_attempts(rocks& db, const std::string& instance_key,
                                          const instance& x) {
  attempt_list out;
  out.instance_id = x.id;
  auto it = db.iterate(column::attempts);
  rocksdb::Slice prefix(instance_key);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto r = decode<attempt_record>(std::string_view(it->value().data(), it->value().size()));
    if (!r) return r.error();
    out.items.push_back(std::move(*r));
  }
  if (!it->status().ok()) return make_error(errc::storage_error, it->status().ToString());
  if (x.state == instance_state::dispatched || x.state == instance_state::running)
    out.items.push_back(current_attempt(x));
  else if (auto r = unrecorded_final(x, out.items.empty() ? 0 : out.items.back().attempt))
    out.items.push_back(std::move(*r));
  if (out.items.size() > attempts_kept)
    out.items.erase(out.items.begin(), out.items.end() - attempts_kept);
  return out;
}

}  // namespace aisched::storage
