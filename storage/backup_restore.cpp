// Restoring a backup into a new data directory; see backup_restore.hpp.
#include "storage/backup_restore.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <rocksdb/write_batch.h>

#include "common/durable_file.hpp"
#include "proto/codec.hpp"
#include "proto/commands.hpp"
#include "proto/errors.hpp"
#include "storage/format_version.hpp"
#include "storage/keys.hpp"
#include "storage/migrations.hpp"
#include "storage/membership_store.hpp"
#include "storage/raft_log.hpp"
#include "storage/rocks.hpp"
#include "storage/snapshot.hpp"
#include "storage/state_machine.hpp"

namespace aisched::storage {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view data_key_prefix = keys::data_key_prefix;

/// The target must not hold anything: a restore seeds a new member.
caf::error check_target(const std::string& dir) {
  std::error_code ec;
  auto st = fs::status(dir, ec);
  if (ec || !fs::exists(st)) return {};
  if (!fs::is_directory(st))
    return make_error(errc::invalid_argument, "data_dir", dir + " exists and is not a directory");
  if (!fs::is_empty(dir, ec) || ec)
    return make_error(errc::invalid_argument, "data_dir",
                      dir + " is not empty: a restore seeds a new data directory and never "
                            "writes over one (move it away, or give another --data-dir)");
  return {};
}

/// The state column called `name`; nullopt for a name this build does not restore.
std::optional<column> state_column_named(const std::string& name) {
  for (auto c : state_columns)
    if (name == column_name(c)) return c;
  return std::nullopt;
}

/// The backup's data keys must open under `key` (when one is given).
caf::error check_secrets(const std::vector<proto::data_key>& keys,
                         const std::optional<secret_crypto::key>& key) {
  if (keys.empty() || !key) return {};
  auto have = secret_crypto::key_check(*key);
  for (auto& k : keys) {
    if (k.kek_check != have)
      return make_error(errc::invalid_argument, "secrets-key-file",
                        "key check mismatch: the backup's secrets of tenant " + k.tenant +
                            " are wrapped by the cluster key with check value " + k.kek_check +
                            ", but --secrets-key-file has check value " + have +
                            ": give the key file of the cluster the backup was taken from");
    if (!secret_crypto::unwrap(*key, k.wrapped, k.tenant, k.id))
      return make_error(errc::corrupted, "secrets-key-file",
                        "the data key of tenant " + k.tenant + " does not open under the key "
                        "with its check value " + have + ": its bytes were altered");
  }
  return {};
}

caf::error sync_dir(const std::string& dir) {
  if (int err = sync_directory(dir))
    return make_error(errc::storage_error, "data_dir",
                      "cannot sync " + dir + ": " + std::strerror(err));
  return {};
}

/// Ends the runs in flight in the restored state through the state machine,
/// as one entry after the backup's index, in term `term`: each attempt fails
/// worker_lost and the task's retry policy decides what follows (the apply of
/// report_results, as for any lost attempt). Returns the applied index.
caf::expected<uint64_t> end_runs_in_flight(state_machine& sm, uint64_t term, int64_t now,
                                           restore_report& report) {
  proto::report_results lost{term, now, {}};
  proto::instance_query q;
  q.limit = 1000;
  do {
    auto page = sm.scan_active(q);
    if (!page) return page.error();
    for (auto& x : page->active) {
      if (x.state != proto::instance_state::dispatched &&
          x.state != proto::instance_state::running)
        continue;
      proto::run_result r;
      r.instance_id = x.id;
      r.worker_id = x.worker_id;
      r.attempt = x.attempt;
      r.state = proto::instance_state::failed;
      r.exit_code = -1;
      r.error = lost_in_restore(sm.applied_index(), x.worker_id);
      r.finished_at = now;
      lost.results.push_back(std::move(r));
    }
    q.cursor = page->next_cursor;
  } while (!q.cursor.empty());
  if (lost.results.empty()) return sm.applied_index();
  auto index = sm.applied_index() + 1;
  report.runs_lost = lost.results.size();
  auto done = sm.apply({proto::log_entry{index, term, proto::command{std::move(lost)}}});
  if (!done) return done.error();
  if (done->size() != 1) return make_error(errc::internal, "one entry applied, not one result");
  auto& one = done->front();
  if (!one) return one.error();
  for (auto& x : one->instances)
    if (x.state == proto::instance_state::retry_waiting) ++report.runs_retrying;
  return index;
}

/// Everything but the final rename, into `tmp`.
caf::expected<restore_report> restore_into(const restore_plan& p, const std::string& tmp) {
  restore_report report;
  auto db = rocks::open(tmp);
  if (!db) return db.error();
  std::ifstream in(p.file, std::ios::binary);
  if (!in)
    return make_error(errc::invalid_argument, "from",
                      "cannot open the backup " + p.file + ": " + std::strerror(errno));
  rocksdb::WriteBatch batch;
  std::vector<std::string> data_key_values;  // read once the header says their format
  auto summary = backup::read_backup(
      in, current_format,
      [&](const backup::column_info& col, std::string_view key,
          std::string_view value) -> caf::error {
        auto c = state_column_named(col.name);
        if (!c)
          return make_error(errc::corrupted, "file",
                            "the backup holds column " + col.name + ", which this build does not "
                            "restore");
        if (*c == column::auth && key.substr(0, data_key_prefix.size()) == data_key_prefix)
          data_key_values.emplace_back(value);
        batch.Put((*db)->cf(*c), rocksdb::Slice(key.data(), key.size()),
                  rocksdb::Slice(value.data(), value.size()));
        return {};
      });
  if (!summary) return summary.error();
  report.backup = std::move(*summary);
  const auto& h = report.backup.header;
  std::vector<proto::data_key> data_keys;
  for (auto& v : data_key_values) {
    auto k = record_of_format<proto::data_key>(v, h.data_format);
    if (!k) return k.error();
    data_keys.push_back(std::move(*k));
  }
  if (auto err = check_secrets(data_keys, p.secrets_key)) return err;
  report.secrets_unchecked = !data_keys.empty() && !p.secrets_key;
  put_stored_format(**db, batch, h.data_format);
  if (auto err = (*db)->write(batch, true)) return err;
  batch.Clear();
  // The records are of the backup's format (recorded with them): migrated to
  // this build's like a data directory of that format, and FORMAT stamped,
  // before the state machine reads them.
  auto found = check_format(tmp, p.written_by);  // no FORMAT yet: the database says
  if (!found) return found.error();
  auto migrated = migrate_format(**db, tmp, *found, p.written_by);
  if (!migrated) return migrated.error();
  // The new membership replaces the backup's, in this build's format.
  write_membership(**db, batch, p.members);
  if (auto err = (*db)->write(batch, true)) return err;
  batch.Clear();

  auto sm = state_machine::open(**db);
  if (!sm) return sm.error();
  if ((*sm)->applied_index() != h.index)
    return make_error(errc::corrupted, "file",
                      "the records are the state of index " + std::to_string((*sm)->applied_index()) +
                          ", the header says " + std::to_string(h.index));
  // A log base needs a term; 0 (not at hand when saved) becomes 1, as good as
  // any in a new cluster whose members all start from this same base.
  report.term = std::max<uint64_t>(h.term, 1);
  // Ended at the instant the backup was saved, a fact of the file: every
  // member restoring it applies the same entry at index + 1 (its own clock
  // would give each member another finished_at and retry time, for good).
  auto index = end_runs_in_flight(**sm, report.term, h.created_at_ms, report);
  if (!index) return index.error();
  report.index = *index;
  auto log = raft_log::open(**db);
  if (!log) return log.error();
  rocksdb::WriteBatch nothing;
  if (auto err = log->install({report.index, report.term},
                              hard_state{report.term, "", report.index}, nothing))
    return err;
  if (auto err = write_bootstrap_membership(**db, p.members)) return err;
  report.cluster_id = p.cluster_id_for(h);
  if (auto err = write_cluster_id(**db, report.cluster_id)) return err;
  if (auto err = (*db)->flush()) return err;
  return report;
}

}  // namespace

std::string lost_in_restore(uint64_t index, const std::string& worker_id) {
  return "worker_lost: worker " + (worker_id.empty() ? std::string("?") : worker_id) +
         ": the attempt was in flight when the backup at index " + std::to_string(index) +
         " was taken, and the cluster was restored from it";
}

caf::expected<restore_report> restore_backup(const restore_plan& p) {
  if (auto err = check_target(p.data_dir)) return err;
  auto target = fs::absolute(p.data_dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();  // a trailing slash
  auto tmp = target.string() + ".restoring-" + std::to_string(::getpid());
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec)
    return make_error(errc::storage_error, "data_dir", "cannot create " + tmp + ": " + ec.message());
  fs::permissions(tmp, fs::perms::owner_all, fs::perm_options::replace, ec);
  auto report = restore_into(p, tmp);
  if (report) {
    // rename(2) replaces an empty directory, and a missing one is simply made.
    if (::rename(tmp.c_str(), target.c_str()) != 0)
      report = make_error(errc::storage_error, "data_dir",
                          "cannot rename " + tmp + " to " + target.string() + ": " +
                              std::strerror(errno));
    else if (auto err = sync_dir(target.parent_path().string()))
      report = err;
    else
      return report;
  }
  fs::remove_all(tmp, ec);
  return report;
}

}  // namespace aisched::storage
