// Behaviour of the backup actor; see backup_actor.hpp.
#include "actors/backup/backup_actor.hpp"

#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <atomic>
#include <chrono>

#include "actors/backup/backup_files.hpp"
#include "common/counted.hpp"
#include "common/log.hpp"
#include "obs/metrics.hpp"
#include "proto/errors.hpp"

namespace aisched::backups {

using namespace proto;

namespace {

using self_ptr = backup_actor::stateful_pointer<backup_state>;

constexpr auto request_timeout = std::chrono::seconds(10);

void clear_problem(backup_state& st) {
  st.misses = 0;
  if (st.opts.health) st.opts.health->set("");
}

/// A round that wrote no file: counted; after `misses_reported` in a row,
/// /readyz says so and (once per streak) the alert goes out.
void failed(self_ptr self, const std::string& error) {
  auto& st = self->state;
  auto now = now_of(self);
  st.failures += 1;
  st.misses += 1;
  st.last_error = error;
  obs::get().backup_failures_total.inc();
  log::warn("scheduled backup failed", {{"actor", "backup"},
                                        {"dir", st.opts.dir},
                                        {"error", error},
                                        {"in_a_row", std::to_string(st.misses)}});
  if (st.misses < misses_reported) return;
  if (st.opts.health)
    st.opts.health->set(std::to_string(st.misses) + " scheduled backups in a row failed (into " +
                        st.opts.dir + ", the last at " + format_rfc3339(now) + "): " + error);
  if (st.misses == misses_reported && st.opts.alerter)
    caf::anon_send(st.opts.alerter, backup_failed_atom::value, error, st.opts.dir,
                   uint64_t{st.misses}, now, st.last_success);
}

/// Starts one backup; its files are written on the io thread, whose answer
/// comes back as `bkdone`.
void start(self_ptr self) {
  auto& st = self->state;
  st.writing = true;
  st.round += 1;
  st.started_at = now_of(self);
  write_request req{st.opts.dir, st.opts.node_id, st.opts.written_by, st.started_at,
                    st.opts.keep};
  backup_actor me = self;
  auto job = [me, round = st.round, db = st.opts.db, req](const std::atomic<bool>& stopping) {
    auto w = write_backup(*db, req, stopping);
    if (!w && stopping.load()) return;  // the node stops: not a failure of the backups
    if (!w) {
      caf::anon_send(me, backup_done_atom::value, round, std::string(), uint64_t{0},
                     view(w.error()).message);
      return;
    }
    log::info("scheduled backup written", {{"actor", "backup"},
                                           {"file", req.dir + "/" + w->file},
                                           {"index", std::to_string(w->index)},
                                           {"records", std::to_string(w->records)},
                                           {"bytes", std::to_string(w->bytes)},
                                           {"sha256", w->checksum},
                                           {"removed", std::to_string(w->removed.size())}});
    caf::anon_send(me, backup_done_atom::value, round, w->file, w->index, std::string());
  };
  if (!st.opts.io) {
    std::atomic<bool> never_stopping{false};
    job(never_stopping);
    return;
  }
  if (!st.opts.io->submit(std::move(job))) st.writing = false;  // the node is stopping
}

}  // namespace

backup_actor::behavior_type backup_actor_impl(self_ptr self, raft_actor raft, backup_options opts) {
  self->state.raft = std::move(raft);
  self->state.opts = std::move(opts);
  self->state.clock = self->state.opts.clock;
  auto interval = std::chrono::milliseconds(self->state.opts.interval);
  self->delayed_send(self, interval, caf::tick_atom::value);
  return inspector::counted(self, {
      [=](inspect_atom) {
        auto& st = self->state;
        return inspector::summary_of(
            self, {{"dir", st.opts.dir},
                   {"interval_ms", std::to_string(st.opts.interval)},
                   {"keep", std::to_string(st.opts.keep)},
                   {"writing", inspector::text(st.writing)},
                   {"backups", std::to_string(st.backups)},
                   {"failures", std::to_string(st.failures)},
                   {"in_a_row", std::to_string(st.misses)},
                   {"last_file", st.last_file.empty() ? "-" : st.last_file},
                   {"last_success", st.last_success ? format_rfc3339(st.last_success) : "-"},
                   {"last_error", st.last_error.empty() ? "-" : st.last_error}});
      },
      [=](caf::tick_atom) {
        self->delayed_send(self, interval, caf::tick_atom::value);
        if (self->state.writing) return;  // the last backup is still being written
        // Asks raft who leads at each round, as the retention sweep does: no
        // copy of every commit for a decision taken once an interval.
        self->request(self->state.raft, request_timeout, raft_status_atom::value)
            .then(
                [=](raft_status& s) {
                  auto& st = self->state;
                  if (s.role != "leader") {
                    // The leader's duty, and its reason: a follower has neither.
                    if (st.misses > 0) clear_problem(st);
                    return;
                  }
                  if (!st.writing) start(self);
                },
                [=](caf::error& e) {
                  log::warn("scheduled backup skipped: raft did not answer",
                            {{"actor", "backup"}, {"error", view(e).message}});
                });
      },
      [=](backup_done_atom, uint64_t round, const std::string& file, uint64_t index,
          const std::string& error) {
        auto& st = self->state;
        if (round != st.round || !st.writing) return;
        st.writing = false;
        if (!error.empty()) return failed(self, error);
        if (st.misses >= misses_reported)
          log::info("scheduled backups work again",
                    {{"actor", "backup"}, {"file", file}, {"after", std::to_string(st.misses)}});
        st.backups += 1;
        st.last_success = st.started_at;
        st.last_file = file;
        st.last_index = index;
        st.last_error.clear();
        obs::get().backups_total.inc();
        obs::get().backup_last_success.set(static_cast<double>(st.started_at) / 1000.0);
        clear_problem(st);
      },
  });
}

}  // namespace aisched::backups
