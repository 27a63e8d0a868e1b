// Run lifecycle commands; see run_lifecycle.hpp.
#include "storage/run_lifecycle.hpp"

#include <optional>
#include <string>

#include "proto/backoff.hpp"
#include "proto/errors.hpp"
#include "storage/attempt_history.hpp"
#include "storage/batch_ctx.hpp"
#include "storage/fire_runs.hpp"
#include "storage/keys.hpp"
#include "storage/transitions.hpp"

namespace aisched::storage {

using namespace proto;

namespace {

/// Applies one run lifecycle command against `ctx`. A fresh one for each
/// command: its error and report fields are that command's.
class run_applier {
 public:
  explicit run_applier(batch_ctx& ctx) : ctx_(ctx) {}

  caf::expected<applied> operator()(const dispatch& c) {
    for (auto& e : c.entries)
      transition(e.instance_id, instance_state::dispatched, [&](instance& x) {
        mark_dispatched(x, e.worker_id, c.at, timeout_of(x.task_id));
      });
    return batch_done(c.entries.size());
  }

  caf::expected<applied> operator()(const report_results& c) {
    for (auto& r : c.results) {
      if (r.state == instance_state::pending || r.state == instance_state::dispatched ||
          r.state == instance_state::cancelled) {
        last_error_ = make_error(errc::invalid_argument, "state",
                                 "a report cannot set state " + std::string(name_of(r.state)));
        continue;
      }
      auto to = r.state;
      unix_ms next_at = r.next_attempt_at;
      if (to == instance_state::failed || to == instance_state::timed_out) {
        // Retry decided here, from committed facts only, so every replica agrees.
        auto decision = retry_decision(r, c.at);
        if (decision) {
          to = instance_state::retry_waiting;
          next_at = *decision;
        }
      }
      outcome_ = r.state;  // what the attempt's history record says, even when retried
      reporting_ = &r;
      transition(r.instance_id, to, [&](instance& x) {
        if ((r.attempt != 0 && r.attempt != x.attempt && !is_terminal(x.state)) ||
            (!r.worker_id.empty() && !x.worker_id.empty() && r.worker_id != x.worker_id &&
             !is_terminal(x.state))) {
          stale_ = true;  // a report from a worker this run is no longer assigned to
          return;
        }
        if (!r.worker_id.empty()) x.worker_id = r.worker_id;
        if (r.started_at != 0) x.started_at = r.started_at;
        if (to != instance_state::running) {
          x.finished_at = r.finished_at != 0 ? r.finished_at : c.at;
          x.exit_code = r.exit_code;
          x.error = r.error;
          x.output = r.output;
          x.deadline = 0;
        }
        x.next_attempt_at = to == instance_state::retry_waiting ? next_at : 0;
      });
      reporting_ = nullptr;
      outcome_.reset();
    }
    return batch_done(c.results.size());
  }

  caf::expected<applied> operator()(const proto::retry& c) {
    for (auto& id : c.instance_ids)
      transition(
          id, instance_state::pending,
          [&](instance& x) {
            x.attempt += 1;
            x.worker_id.clear();
            x.started_at = x.finished_at = x.dispatched_at = x.next_attempt_at = 0;
          },
          {}, instance_state::retry_waiting);
    return batch_done(c.instance_ids.size());
  }

  caf::expected<applied> operator()(const note_waiting& c) {
    for (auto& [id, reason] : c.notes) {
      auto ref = keys::parse_instance_id(id);
      if (!ref) continue;
      auto key = keys::instance(ref->task_id, ref->slot, ref->shard);
      auto cur = ctx_.read_instance(key);
      if (!cur) {
        storage_error_ = cur.error();
        break;
      }
      // Only a run still waiting: one dispatched meanwhile keeps its record.
      if (!*cur || (*cur)->state != instance_state::pending || (*cur)->error == reason) continue;
      auto x = std::move(**cur);
      x.error = reason;
      ctx_.put_instance(key, x, x.state);
      out_.instances.push_back(std::move(x));
    }
    return done();
  }

  caf::expected<applied> operator()(const retry_instance& c) {
    auto ref = keys::parse_instance_id(c.instance_id);
    if (!ref)
      return make_error(errc::invalid_argument, "instance_id",
                        "malformed instance id '" + c.instance_id + "'");
    auto key = keys::instance(ref->task_id, ref->slot, ref->shard);
    auto cur = ctx_.read_instance(key);
    if (!cur) return cur.error();
    if (!*cur || !tenant_matches(c.tenant, (*cur)->tenant))
      return make_error(errc::not_found, "instance_id",
                        "instance " + c.instance_id + " does not exist");
    auto x = std::move(**cur);
    using s = instance_state;
    if (x.state != s::failed && x.state != s::timed_out && x.state != s::cancelled)
      return make_error(errc::illegal_transition, "state",
                        "instance " + c.instance_id + " is " + std::string(name_of(x.state)) +
                            "; only a failed, timed-out or cancelled run can be retried");
    if (auto err = keep_final_attempt(ctx_, key, x)) return err;  // before the next attempt
    auto old = x.state;
    x.state = s::pending;
    x.attempt += 1;
    x.worker_id.clear();
    x.started_at = x.finished_at = x.dispatched_at = x.next_attempt_at = x.deadline = 0;
    x.exit_code = 0;
    x.error.clear();
    x.output.clear();
    ctx_.put_instance(key, x, old);
    auto rt = ctx_.read_runtime(x.task_id);
    if (!rt) return rt.error();
    if (rt->last_instance_id == x.id) {
      rt->last_state = x.state;
      ctx_.put_runtime(*rt);
    }
    out_.instances.push_back(std::move(x));
    return done();
  }

  caf::expected<applied> operator()(const cancel& c) {
    transition(c.instance_id, instance_state::cancelled, [&](instance& x) {
      x.finished_at = c.at;
      x.error = c.reason.empty() ? "cancelled" : c.reason;
      if (x.state == instance_state::dispatched || x.state == instance_state::running) {
        // What this attempt printed comes with its worker's report (keep_cancelled_output);
        // until then the run shows none, not an earlier attempt's.
        x.output.clear();
        x.exit_code = 0;
      }
    }, c.tenant);
    return batch_done(1);
  }

 private:
  /// Moves instance `id` to `to` after `edit`; records an error instead when the
  /// instance is unknown or the transition illegal. A report for a run that has
  /// already finished with the same state is acknowledged and changes nothing.
  template <class Edit>
  void transition(const std::string& id, instance_state to, Edit edit,
                  const std::string& tenant = {},
                  std::optional<instance_state> required_from = std::nullopt) {
    auto ref = keys::parse_instance_id(id);
    if (!ref) {
      last_error_ = make_error(errc::invalid_argument, "instance_id",
                               "malformed instance id '" + id + "'");
      return;
    }
    auto key = keys::instance(ref->task_id, ref->slot, ref->shard);
    auto cur = ctx_.read_instance(key);
    if (!cur) {
      storage_error_ = cur.error();
      return;
    }
    if (!*cur || !tenant_matches(tenant, (*cur)->tenant)) {
      last_error_ = make_error(errc::not_found, "instance_id", "instance " + id + " does not exist");
      return;
    }
    auto x = std::move(**cur);
    if (is_terminal(x.state) && x.state == to) {
      out_.instances.push_back(std::move(x));  // duplicate report: acknowledged, no change
      return;
    }
    if (reporting_ && x.state == instance_state::cancelled &&
        keep_cancelled_output(key, x, *reporting_))
      return;
    if (!legal_transition(x.state, to) || (required_from && x.state != *required_from)) {
      last_error_ = make_error(errc::illegal_transition, "state",
                               "instance " + id + " cannot go from " +
                                   std::string(name_of(x.state)) + " to " +
                                   std::string(name_of(to)));
      return;
    }
    auto old = x.state;
    edit(x);
    if (stale_) {
      stale_ = false;
      last_error_ = make_error(errc::illegal_transition, "worker_id",
                               "stale report: instance " + id + " is at attempt " +
                                   std::to_string(x.attempt) + " on worker " + x.worker_id);
      return;
    }
    x.state = to;
    ctx_.put_instance(key, x, old);
    if (ends_attempt(old, to) && !attempt_kept_by_instance(old, to)) {  // attempt_history.hpp
      // A retried attempt's record says how it ended (failed or timed_out).
      auto outcome = to == instance_state::retry_waiting ? outcome_.value_or(to) : to;
      if (outcome == instance_state::retry_waiting) outcome = instance_state::failed;
      record_attempt(ctx_, key, ended_attempt(x, outcome));
    }
    auto rt = ctx_.read_runtime(x.task_id);
    if (!rt) {
      storage_error_ = rt.error();
      return;
    }
    if (rt->last_instance_id == x.id) {
      rt->last_state = x.state;
      ctx_.put_runtime(*rt);
    }
    out_.instances.push_back(std::move(x));
  }

  /// The report `r` of the attempt cancelled run `x` (at `key`) was running: the
  /// run stays cancelled (the cancel committed first) and keeps the exit code and
  /// output the killed attempt reported, in the instance and in the attempt's
  /// record. False (the report is refused as illegal) for a start report, one that
  /// names no worker (a deadline's: it knows no output), another attempt or worker,
  /// or a run cancelled before it was dispatched. A repeated report, or one for an
  /// attempt already recorded, is acknowledged unchanged.
  bool keep_cancelled_output(const std::string& key, instance& x, const run_result& r) {
    bool ours = r.state != instance_state::running && x.dispatched_at != 0 &&
                (r.attempt == 0 || r.attempt == x.attempt) && !r.worker_id.empty() &&
                r.worker_id == x.worker_id;
    if (!ours) return false;
    auto recorded = ctx_.read_attempt_exists(keys::attempt(key, x.attempt));
    if (!recorded) {
      storage_error_ = recorded.error();
      return true;
    }
    if (!*recorded) {
      x.exit_code = r.exit_code;
      x.output = r.output;
      if (x.started_at == 0) x.started_at = r.started_at;
      ctx_.put_instance(key, x, instance_state::cancelled);
      record_attempt(ctx_, key, reported_cancel(x));
    }
    out_.instances.push_back(std::move(x));
    return true;
  }

  /// A batch command succeeds if any of its items applied; a single rejected
  /// item reports its own error.
  caf::expected<applied> batch_done(size_t items) {
    if (storage_error_) return storage_error_;
    if (out_.instances.empty() && items > 0 && last_error_) return last_error_;
    return done();
  }

  /// The runs changed, without the entry's index (the caller's).
  caf::expected<applied> done() {
    if (storage_error_) return storage_error_;
    return std::move(out_);
  }

  /// The task's timeout (1 h if the task is gone). A read that fails is not
  /// "gone": it records storage_error_, which fails the whole batch, because
  /// a member that guessed a deadline here would diverge from the others.
  duration_ms timeout_of(uint64_t task_id) {
    auto t = ctx_.read_task(task_id);
    if (!t) {
      storage_error_ = t.error();
      return 0;
    }
    if (*t) return (*t)->timeout;
    return 3'600'000;
  }

  /// When a failed attempt reported by `r` is retried, if it is. As in
  /// timeout_of(), a failed read fails the batch instead of meaning "no retry".
  std::optional<unix_ms> retry_decision(const run_result& r, unix_ms at) {
    auto ref = keys::parse_instance_id(r.instance_id);
    if (!ref) return std::nullopt;
    auto x = ctx_.read_instance(keys::instance(ref->task_id, ref->slot, ref->shard));
    if (!x) {
      storage_error_ = x.error();
      return std::nullopt;
    }
    if (!*x || is_terminal((*x)->state)) return std::nullopt;
    auto t = ctx_.read_task(ref->task_id);
    if (!t) {
      storage_error_ = t.error();
      return std::nullopt;
    }
    if (!*t) return std::nullopt;
    const auto& policy = (*t)->retry;
    auto finished = r.finished_at != 0 ? r.finished_at : at;
    auto seed = aisched::retry::stable_hash(r.instance_id) ^ (*x)->attempt;
    auto next_at = finished + aisched::retry::backoff(policy, (*x)->attempt, seed);
    if (!aisched::retry::should_retry(policy, **x, r.state, r.exit_code, next_at)) return std::nullopt;
    return next_at;
  }

  batch_ctx& ctx_;
  bool stale_ = false;
  const run_result* reporting_ = nullptr;  // the report being applied (report_results)
  std::optional<instance_state> outcome_;  // the reported state of the result being applied
  applied out_;
  caf::error last_error_;
  caf::error storage_error_;
};

}  // namespace

caf::expected<applied> apply_run_command(batch_ctx& ctx, const dispatch& c) {
  return run_applier(ctx)(c);
}

caf::expected<applied> apply_run_command(batch_ctx& ctx, const report_results& c) {
  return run_applier(ctx)(c);
}

caf::expected<applied> apply_run_command(batch_ctx& ctx, const proto::retry& c) {
  return run_applier(ctx)(c);
}

caf::expected<applied> apply_run_command(batch_ctx& ctx, const note_waiting& c) {
  return run_applier(ctx)(c);
}

caf::expected<applied> apply_run_command(batch_ctx& ctx, const retry_instance& c) {
  return run_applier(ctx)(c);
}

caf::expected<applied> apply_run_command(batch_ctx& ctx, const cancel& c) {
  return run_applier(ctx)(c);
}

}  // namespace aisched::storage
