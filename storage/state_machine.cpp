// Applying committed log entries (see state_machine.hpp): the batch loop, and
// the applier that applies task definitions itself and hands every other
// command to the file that owns it (runs: fire_runs, run_lifecycle; auth_state,
// secret_store, controls_state, run_retention, ...). Reads: state_queries.cpp.
#include "storage/state_machine.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "obs/metrics.hpp"
#include "proto/codec.hpp"
#include "proto/command_visit.hpp"
#include "proto/errors.hpp"
#include "storage/ai_records.hpp"
#include "storage/auth_state.hpp"
#include "storage/batch_ctx.hpp"
#include "storage/controls_state.hpp"
#include "storage/fire_runs.hpp"
#include "storage/keys.hpp"
#include "storage/load_history.hpp"
#include "storage/membership_store.hpp"
#include "storage/rocks.hpp"
#include "storage/run_lifecycle.hpp"
#include "storage/run_retention.hpp"
#include "storage/secret_store.hpp"
#include "storage/state_meta.hpp"

namespace aisched::storage {

using namespace proto;

namespace {

constexpr std::string_view applied_key = "applied_index";
constexpr std::string_view next_task_key = "next_task_id";
constexpr std::string_view schema_key = "schema_version";

using state_counts = state_machine::state_counts;

/// Whether an entry's error `code` fails its whole batch: storage that cannot
/// be read or written, or stored bytes that do not decode. Every other error
/// (unknown task, stale version, illegal transition) is the same on every
/// member and only rejects the entry.
bool fails_batch(errc code) { return is_storage_fault(code) || code == errc::corrupted; }

/// Applies one command against `ctx`. Returns the command's effect or the error
/// that rejects it; `next_task_id` is advanced by create_task.
class applier {
 public:
  applier(batch_ctx& ctx, auth_applier& auth, secret_applier& secrets,
          controls_applier& controls, uint64_t index, uint64_t& next_task_id)
      : ctx_(ctx), auth_(auth), secrets_(secrets), controls_(controls), index_(index),
        next_task_id_(next_task_id) {}

  caf::expected<applied> operator()(const noop&) { return done(); }

  // Users, tokens and audit: storage/auth_state.
  caf::expected<applied> operator()(const put_user& c) { return with_index(auth_.apply(c)); }
  caf::expected<applied> operator()(const delete_user& c) { return with_index(auth_.apply(c)); }
  caf::expected<applied> operator()(const share_worker& c) { return with_index(auth_.apply(c)); }
  caf::expected<applied> operator()(const put_token& c) { return with_index(auth_.apply(c)); }
  caf::expected<applied> operator()(const delete_token& c) { return with_index(auth_.apply(c)); }
  caf::expected<applied> operator()(const record_audit& c) {
    return with_index(auth_.apply(c, index_));
  }
  // Data keys and sealed secrets: storage/secret_store.
  caf::expected<applied> operator()(const put_data_keys& c) { return with_index(secrets_.apply(c)); }
  caf::expected<applied> operator()(const put_secret& c) { return with_index(secrets_.apply(c)); }
  caf::expected<applied> operator()(const delete_secret& c) { return with_index(secrets_.apply(c)); }

  // Pools and calendars: storage/controls_state.
  caf::expected<applied> operator()(const put_pool& c) { return with_index(controls_.apply(c)); }
  caf::expected<applied> operator()(const put_calendar& c) {
    return with_index(controls_.apply(c));
  }
  caf::expected<applied> operator()(const delete_calendar& c) {
    auto users = ctx_.tasks_where([&](const task& t) {
      return t.tenant == c.tenant && t.exclude_calendar == c.name;
    });
    if (!users) return users.error();
    return with_index(controls_.apply(c, *users));
  }

  caf::expected<applied> operator()(const create_task& c) {
    std::string idem;
    uint64_t fingerprint = 0;
    if (!c.idempotency_key.empty()) {
      idem = keys::idempotency(c.t.tenant, c.idempotency_key);
      fingerprint = task_fingerprint(c.t);
      auto made = ctx_.read_created_by(idem);
      if (!made) return made.error();
      if (made->task_id != 0) {
        // The same key with another request is a client bug, never a retry:
        // answering with the first task would hide that the second was not made.
        // (Field "Idempotency-Key" makes it 422 idempotency_key_reused at the
        // REST API: proto::is_idempotency_key_reused.)
        if (made->fingerprint != 0 && made->fingerprint != fingerprint)
          return make_error(errc::already_exists, "Idempotency-Key",
                            "Idempotency-Key '" + c.idempotency_key +
                                "' was used for another request (it created task " +
                                std::to_string(made->task_id) + "); use a new key");
        // A repeat of a create that committed: answer with what it made.
        auto t = ctx_.read_task(made->task_id);
        if (!t) return t.error();
        if (!*t)
          return make_error(errc::already_exists, "idempotency_key",
                            "this key created task " + std::to_string(made->task_id) +
                                ", which has since been deleted");
        out_.tasks.push_back(std::move(**t));
        return done();
      }
    }
    task t = c.t;
    if (auto err = check_upstreams(t, next_task_id_)) return err;
    if (auto err = controls_.check_refs(t)) return err;
    t.id = next_task_id_++;
    t.version = 1;
    ctx_.put_task(t);
    if (!idem.empty()) ctx_.put_created_by(idem, {t.id, fingerprint});
    ctx_.effects().created += 1;
    out_.tasks.push_back(std::move(t));
    return done();
  }

  caf::expected<applied> operator()(const update_task& c) {
    auto cur = existing_task(c.t.tenant, c.t.id);
    if (!cur) return cur.error();
    if (c.expected_version != 0 && c.expected_version != cur->version)
      return make_error(errc::version_conflict, "version",
                        "task " + std::to_string(c.t.id) + " is at version " +
                            std::to_string(cur->version) + ", not " +
                            std::to_string(c.expected_version));
    task t = c.t;
    if (auto err = check_upstreams(t, t.id)) return err;
    t.tenant = cur->tenant;
    if (auto err = controls_.check_refs(t)) return err;
    t.created_at = cur->created_at;
    t.version = cur->version + 1;
    ctx_.put_task(t);
    ctx_.effects().updated += 1;
    out_.tasks.push_back(std::move(t));
    return done();
  }

  caf::expected<applied> operator()(const delete_task& c) {
    auto cur = existing_task(c.tenant, c.id);
    if (!cur) return cur.error();
    if (c.expected_version != 0 && c.expected_version != cur->version)
      return make_error(errc::version_conflict, "version",
                        "task " + std::to_string(c.id) + " is at version " +
                            std::to_string(cur->version));
    auto dependents = ctx_.dependents_of(c.id);
    if (!dependents) return dependents.error();
    if (!dependents->empty() && !c.cascade) {
      std::string ids;
      for (auto& d : *dependents) ids += (ids.empty() ? "" : ", ") + std::to_string(d.id);
      return make_error(errc::has_dependents, "id",
                        "task " + std::to_string(c.id) + " has dependents: " + ids +
                            " (delete them first, or delete with cascade=true to drop their "
                            "edges to it)");
    }
    // Cascade: the dependents lose the edge in this same entry, so no member
    // ever holds an edge to a missing task (which would block them forever).
    for (auto& d : *dependents) {
      auto& deps = d.depends_on;
      deps.erase(std::remove(deps.begin(), deps.end(), c.id), deps.end());
      d.version += 1;
      ctx_.put_task(d);
      ctx_.effects().updated += 1;
      out_.tasks.push_back(std::move(d));
    }
    ctx_.delete_task(c.id);
    ctx_.effects().deleted += 1;
    out_.deleted_tasks.push_back(c.id);
    return done();
  }

  caf::expected<applied> operator()(const set_paused& c) {
    auto cur = existing_task(c.tenant, c.id);
    if (!cur) return cur.error();
    if (cur->paused != c.paused) {
      cur->paused = c.paused;
      cur->updated_at = c.at;
      cur->version += 1;
      ctx_.put_task(*cur);
      (c.paused ? ctx_.effects().paused : ctx_.effects().resumed) += 1;
    }
    out_.tasks.push_back(std::move(*cur));
    return done();
  }

  caf::expected<applied> operator()(const fire& c) { return fire_runs(c.at, c.slots, {}); }

  caf::expected<applied> operator()(const fire_placed& c) {
    fire_placements placed;
    for (auto& e : c.placed) placed.emplace(e.instance_id, e.worker_id);
    return fire_runs(c.at, c.slots, placed);
  }

  caf::expected<applied> fire_runs(unix_ms at, const std::vector<fire_slot>& slots,
                                   const fire_placements& placed) {
    if (auto err = create_fired_runs(ctx_, at, slots, placed, out_.instances)) return err;
    return done();
  }

  // Runs moving through their states: storage/run_lifecycle.
  caf::expected<applied> operator()(const dispatch& c) {
    return with_index(apply_run_command(ctx_, c));
  }
  caf::expected<applied> operator()(const report_results& c) {
    return with_index(apply_run_command(ctx_, c));
  }
  caf::expected<applied> operator()(const proto::retry& c) {
    return with_index(apply_run_command(ctx_, c));
  }
  caf::expected<applied> operator()(const note_waiting& c) {
    return with_index(apply_run_command(ctx_, c));
  }
  caf::expected<applied> operator()(const retry_instance& c) {
    return with_index(apply_run_command(ctx_, c));
  }
  caf::expected<applied> operator()(const cancel& c) {
    return with_index(apply_run_command(ctx_, c));
  }

  caf::expected<applied> operator()(const record_load& c) {
    write_load_samples(ctx_.db(), ctx_.batch(), c);
    return done();
  }

  caf::expected<applied> operator()(const put_ai_records& c) {
    write_ai_records(ctx_.db(), ctx_.batch(), c);
    for (auto& r : c.records)
      if (r.column == ai_column::analyses) ctx_.wrote_analyses();
    return done();
  }

  caf::expected<applied> operator()(const prune_runs& c) {
    auto removed = apply_prune(ctx_, c);
    if (!removed) return removed.error();
    out_.pruned = *removed;
    return done();
  }

  caf::expected<applied> operator()(const prune_history& c) {
    auto removed = apply_prune(ctx_, c);
    if (!removed) return removed.error();
    out_.pruned = *removed;
    return done();
  }

  caf::expected<applied> operator()(const set_membership& c) {
    write_membership(ctx_.db(), ctx_.batch(), c.members);
    return done();
  }

 private:
  caf::expected<task> existing_task(const std::string& tenant, uint64_t id) {
    auto t = ctx_.read_task(id);
    if (!t) return t.error();
    if (!*t || !tenant_matches(tenant, (*t)->tenant))
      return make_error(errc::not_found, "id", "task " + std::to_string(id) + " does not exist");
    return std::move(**t);
  }

  caf::expected<applied> with_index(caf::expected<applied> r) {
    if (r) r->index = index_;
    return r;
  }

  caf::expected<applied> done() {
    out_.index = index_;
    return std::move(out_);
  }

  /// Rejects a `depends_on` naming a task that does not exist (or belongs to
  /// another tenant) or that would close a cycle back to `self_id`; the error
  /// names the cycle, e.g. "depends_on: cycle 3 -> 5 -> 3".
  caf::error check_upstreams(const task& t, uint64_t self_id) {
    for (auto up : t.depends_on) {
      auto u = ctx_.read_task(up);
      if (!u) return u.error();
      if (!*u || (*u)->tenant != t.tenant)
        return make_error(errc::invalid_argument, "depends_on",
                          "depends_on: task " + std::to_string(up) + " does not exist");
    }
    // Depth-first walk up from each dependency; reaching self_id closes a cycle.
    std::vector<uint64_t> path{self_id};
    std::set<uint64_t> done;
    std::function<caf::error(uint64_t)> walk = [&](uint64_t id) -> caf::error {
      if (id == self_id) {
        std::string cycle;
        for (auto p : path) cycle += std::to_string(p) + " -> ";
        return make_error(errc::invalid_argument, "depends_on",
                          "depends_on: cycle " + cycle + std::to_string(self_id));
      }
      if (!done.insert(id).second) return {};
      auto u = ctx_.read_task(id);
      if (!u) return u.error();
      if (!*u) return {};
      path.push_back(id);
      for (auto up : (*u)->depends_on)
        if (auto err = walk(up)) return err;
      path.pop_back();
      return {};
    };
    for (auto up : t.depends_on)
      if (auto err = walk(up)) return err;
    return {};
  }

  batch_ctx& ctx_;
  auth_applier& auth_;
  secret_applier& secrets_;
  controls_applier& controls_;
  uint64_t index_;
  uint64_t& next_task_id_;
  applied out_;
};

}  // namespace

state_machine::state_machine(rocks& db) : db_(db), cache_(std::make_unique<apply_cache>()) {}

state_machine::~state_machine() = default;

caf::expected<std::unique_ptr<state_machine>> state_machine::open(rocks& db) {
  auto version = read_meta(db, schema_key, 0);
  if (!version) return version.error();
  if (*version != 0 && *version != schema_version)
    return make_error(errc::corrupted, "database schema version " + std::to_string(*version) +
                                           " is not the supported " +
                                           std::to_string(schema_version));
  if (*version == 0) {
    rocksdb::WriteBatch b;
    b.Put(db.cf(column::meta), schema_key, keys::u64(schema_version));
    if (auto err = db.write(b, true)) return err;
  }
  std::unique_ptr<state_machine> sm{new state_machine(db)};
  if (auto err = sm->reload()) return err;
  return sm;
}

caf::error state_machine::reload() {
  auto applied = read_meta(db_, applied_key, 0);
  if (!applied) return applied.error();
  auto next = read_meta(db_, next_task_key, 1);
  if (!next) return next.error();
  if (auto err = check_task_ids(db_, *next)) return err;
  auto counts = load_counts(db_);
  if (!counts) return counts.error();
  cache_->clear();  // the state may have been replaced underneath
  applied_index_ = *applied;
  next_task_id_ = *next;
  instance_counts_ = *counts;
  publish_counts(*counts);
  return {};
}

caf::expected<std::vector<caf::expected<applied>>> state_machine::apply(
    const std::vector<log_entry>& entries, const std::function<caf::error()>& before_write) {
  std::vector<caf::expected<applied>> results;
  results.reserve(entries.size());
  batch_ctx ctx(db_, *cache_);
  auth_applier auth(db_, ctx.batch());
  secret_applier secrets(db_, ctx.batch());
  controls_applier controls(db_, ctx.batch());
  uint64_t applied_to = applied_index_.load();
  uint64_t next_task_id = next_task_id_;
  for (auto& e : entries) {
    if (e.index <= applied_to) {
      results.emplace_back(applied{});
      continue;
    }
    if (e.index != applied_to + 1)
      return make_error(errc::internal, "log entry " + std::to_string(e.index) +
                                            " applied after " + std::to_string(applied_to));
    applier a(ctx, auth, secrets, controls, e.index, next_task_id);
    auto r = visit_command(e.cmd, [&](const auto& c) -> caf::expected<applied> {
      using T = std::decay_t<decltype(c)>;
      if constexpr (T::traits.fence == fencing::leader_term) {
        // Fencing: a fire, dispatch, report or retry decided by the leader of
        // another term (a deposed leader's late proposal) changes nothing.
        if (c.term != e.term)
          return make_error(errc::not_leader, "term",
                            std::string(T::traits.name) + " of term " + std::to_string(c.term) +
                                " rejected in term " + std::to_string(e.term));
      }
      return a(c);
    });
    // A read or write that failed (or read bytes that do not decode) fails
    // the batch: rejecting only this entry would let this member's state
    // differ from the others'. The raft actor fences on a storage fault and
    // stops on corruption.
    if (!r && fails_batch(view(r.error()).code)) return r.error();
    results.push_back(std::move(r));
    applied_to = e.index;
  }
  if (applied_to == applied_index_.load()) return results;
  ctx.put_meta(applied_key, applied_to);
  ctx.put_meta(next_task_key, next_task_id);
  // The instance counts move in the same batch as the instances they count.
  auto counts = instance_counts_;
  bool counts_changed = false;
  for (size_t i = 0; i < counts.size(); ++i) {
    auto delta = ctx.effects().instances[i];
    if (delta == 0) continue;
    counts_changed = true;
    // Never below zero: a metric must not wrap even if a count were ever off.
    auto n = static_cast<int64_t>(counts[i]) + delta;
    counts[i] = n < 0 ? 0 : static_cast<uint64_t>(n);
  }
  if (counts_changed)
    ctx.batch().Put(db_.cf(column::meta), instance_counts_key, encode_counts(counts));
  // Not synced: the raft log holds these entries durably, and a restart replays
  // whatever this write lost (the applied index moves in the same batch).
  ctx.finish();
  if (before_write)
    if (auto err = before_write()) return err;
  if (auto err = db_.write(ctx.batch(), false)) return err;
  ctx.written();
  applied_index_ = applied_to;
  next_task_id_ = next_task_id;
  instance_counts_ = counts;
  if (counts_changed) publish_counts(counts);
  publish_mutations(ctx.effects());
  return results;
}

}  // namespace aisched::storage
