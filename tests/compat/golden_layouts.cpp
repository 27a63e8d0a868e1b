// The golden examples whose bytes storage/ and the worker lay out by hand
// (golden_case.hpp): each written and read back through the code that writes
// and reads it in a node, over a scratch RocksDB or directory, so that the
// key a record lives at is pinned too.
#include <rocksdb/write_batch.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actors/worker/outbox.hpp"
#include "compat/golden_case.hpp"
#include "compat/golden_examples.hpp"
#include "proto/codec.hpp"
#include "proto/errors.hpp"
#include "proto/hex.hpp"
#include "storage/apply_cache.hpp"
#include "storage/auth_state.hpp"
#include "storage/batch_ctx.hpp"
#include "storage/format_version.hpp"
#include "storage/migrations.hpp"
#include "storage/keys.hpp"
#include "storage/membership_store.hpp"
#include "storage/raft_log.hpp"
#include "storage/rocks.hpp"
#include "storage/run_retention.hpp"
#include "storage/snapshot.hpp"
#include "storage/state_machine.hpp"
#include "storage/state_meta.hpp"
#include "support/test_dir.hpp"

namespace aisched::compat {

using namespace proto;
namespace fs = std::filesystem;
using storage::column;

namespace {

/// A fresh RocksDB in a temporary directory, removed afterwards.
class scratch_db {
 public:
  scratch_db() : dir_(test::make_test_dir("aisched-golden-")) {
    if (dir_.empty()) fail_setup("cannot create a temporary directory");
    db_ = must(storage::rocks::open(dir_.string()), "cannot open a scratch RocksDB");
  }
  ~scratch_db() {
    db_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  scratch_db(const scratch_db&) = delete;
  scratch_db& operator=(const scratch_db&) = delete;

  storage::rocks& db() { return *db_; }

  void put(column c, const std::string& key, const std::string& value) {
    rocksdb::WriteBatch b;
    b.Put(db_->cf(c), key, value);
    must(db_->write(b, true), "cannot write the scratch RocksDB");
  }

  /// The value at `key` of `c`, which the example's writing must have put there.
  std::string get(column c, const std::string& key) {
    auto v = must(db_->get(c, key), "cannot read the scratch RocksDB");
    if (!v) fail_setup("nothing was written at the example's key");
    return *v;
  }

 private:
  fs::path dir_;
  std::unique_ptr<storage::rocks> db_;
};

/// A fresh temporary directory, removed afterwards.
struct scratch_dir {
  fs::path path = test::make_test_dir("aisched-golden-");
  scratch_dir() {
    if (path.empty()) fail_setup("cannot create a temporary directory");
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
  if (!out.flush()) fail_setup("cannot write " + p.string());
}

// Where storage/raft_log.cpp keeps the raft log's meta, in column raft_meta.
constexpr const char* hard_state_key = "hard_state";
constexpr const char* log_base_key = "snapshot";

struct chunk_record {
  column c;
  std::string key;
  std::string value;
};

/// What the example snapshot carries: values are opaque to a chunk.
std::vector<chunk_record> snapshot_records() {
  return {{column::tasks, storage::keys::task(42), std::string("task\x00value", 10)},
          {column::meta, "applied_index", storage::keys::u64(1'041)},
          {column::controls, std::string("p/acme\0db-heavy", 15), "pool value"}};
}

}  // namespace

// -- the raft log's meta (storage/raft_log.cpp) ------------------------------------

golden_case hard_state_case() {
  return {
      "raft_hard_state",
      [] {
        scratch_db s;
        auto log = must(storage::raft_log::open(s.db()), "cannot open the raft log");
        must(log.save(example_hard_state()), "cannot save the hard state");
        return s.get(column::raft_meta, hard_state_key);
      },
      [](const std::string& bytes) -> std::string {
        scratch_db s;
        s.put(column::raft_meta, hard_state_key, bytes);
        auto log = storage::raft_log::open(s.db());
        if (!log) return "does not read: " + view(log.error()).message;
        auto want = example_hard_state();
        const auto& got = log->state();
        if (got.term != want.term || got.voted_for != want.voted_for || got.commit != want.commit)
          return "reads back as term " + std::to_string(got.term) + ", vote '" + got.voted_for +
                 "', commit " + std::to_string(got.commit);
        return {};
      }};
}

golden_case log_base_case() {
  return {"raft_log_base",
          [] {
            scratch_db s;
            auto log = must(storage::raft_log::open(s.db()), "cannot open the raft log");
            rocksdb::WriteBatch state;
            must(log.install(example_log_base(), example_hard_state(), state),
                 "cannot install a log base");
            return s.get(column::raft_meta, log_base_key);
          },
          [](const std::string& bytes) -> std::string {
            scratch_db s;
            s.put(column::raft_meta, log_base_key, bytes);
            auto log = storage::raft_log::open(s.db());
            if (!log) return "does not read: " + view(log.error()).message;
            auto want = example_log_base();
            if (log->base().index != want.index || log->base().term != want.term ||
                log->last_index() != want.index || log->last_term() != want.term)
              return "reads back as index " + std::to_string(log->base().index) + ", term " +
                     std::to_string(log->base().term);
            return {};
          }};
}

// -- the state machine's meta column (storage/batch_ctx.hpp, state_meta, ...) -------

/// An idempotency record: 16 bytes, or 8 when it holds no fingerprint (the
/// records of builds from before fingerprints, still read).
golden_case idempotency_case(std::string name, storage::idempotency_record example) {
  static const std::string key = storage::keys::idempotency("acme", "idem-7f3e");
  return {std::move(name),
          [example] {
            scratch_db s;
            storage::apply_cache cache;
            storage::batch_ctx ctx(s.db(), cache);
            ctx.put_created_by(key, example);
            must(s.db().write(ctx.batch(), true), "cannot write the batch");
            return s.get(column::meta, key);
          },
          [example](const std::string& bytes) -> std::string {
            scratch_db s;
            s.put(column::meta, key, bytes);
            storage::apply_cache cache;
            storage::batch_ctx ctx(s.db(), cache);
            auto got = ctx.read_created_by(key);
            if (!got) return "does not read: " + view(got.error()).message;
            if (got->task_id != example.task_id || got->fingerprint != example.fingerprint)
              return "reads back as task " + std::to_string(got->task_id) + ", fingerprint " +
                     std::to_string(got->fingerprint);
            return {};
          }};
}

golden_case instance_counts_case() {
  static const std::string key(storage::instance_counts_key);
  return {"instance_counts", [] { return storage::encode_counts(example_instance_counts()); },
          [](const std::string& bytes) -> std::string {
            scratch_db s;
            s.put(column::meta, key, bytes);
            auto got = storage::load_counts(s.db());
            if (!got) return "does not read: " + view(got.error()).message;
            if (*got != example_instance_counts()) return "reads back as other counts";
            return {};
          }};
}

/// The u64 counters of the meta column: applied_index, next_task_id,
/// schema_version (one layout).
golden_case meta_counter_case() {
  static const std::string key = "next_task_id";
  constexpr uint64_t example = 0x0102'0304'0506'0708ULL;
  return {"meta_counter",
          [] {
            scratch_db s;
            storage::apply_cache cache;
            storage::batch_ctx ctx(s.db(), cache);
            ctx.put_meta(key, example);
            must(s.db().write(ctx.batch(), true), "cannot write the batch");
            return s.get(column::meta, key);
          },
          [](const std::string& bytes) -> std::string {
            scratch_db s;
            s.put(column::meta, key, bytes);
            auto got = storage::read_meta(s.db(), key, 1);
            if (!got) return "does not read: " + view(got.error()).message;
            if (*got != example) return "reads back as " + std::to_string(*got);
            return {};
          }};
}

/// Run-history retention's mark of a task (storage/run_retention.cpp), written
/// only by applying a prune: of task 1 of tenant acme, its run at t0 removed.
golden_case retention_mark_case() {
  static const std::string run = make_instance_id(1, t0, 0);
  return {"retention_mark",
          [] {
            scratch_db s;
            auto sm = must(storage::state_machine::open(s.db()), "cannot open the state machine");
            task t;
            t.tenant = "acme";
            t.name = "pruned";
            t.command = "true";
            t.created_at = t.updated_at = t0 - 1;
            run_result done;
            done.instance_id = run;
            done.worker_id = "w-eu-1";
            done.state = instance_state::success;
            done.started_at = t0 + 2;
            done.finished_at = t0 + 3;
            std::vector<log_entry> entries;
            entries.push_back(log_entry{1, 1, create_task{t}});
            entries.push_back(log_entry{2, 1, fire{1, t0, {fire_slot{1, t0}}}});
            entries.push_back(log_entry{3, 1, dispatch{1, t0 + 1, {{run, "w-eu-1"}}}});
            entries.push_back(log_entry{4, 1, report_results{1, t0 + 3, {done}}});
            entries.push_back(log_entry{5, 1, prune_runs{1, {run}}});
            auto results = must(sm->apply(entries), "cannot apply the entries");
            for (auto& r : results)
              if (!r) fail_setup("an entry was refused: " + view(r.error()).message);
            return s.get(column::meta, storage::keys::pruned_mark(1));
          },
          [](const std::string& bytes) -> std::string {
            scratch_db s;
            s.put(column::meta, storage::keys::pruned_mark(1), bytes);
            auto marked = storage::gone_if_pruned(s.db(), "acme", 1, t0, run);
            if (!marked) return "does not read: " + view(marked.error()).message;
            if (!*marked || view(**marked).code != errc::gone)
              return "the run at the marked slot does not read as gone";
            auto later = storage::gone_if_pruned(s.db(), "acme", 1, t0 + 1, "1-1796022000001-0");
            if (!later || *later) return "a run after the marked slot reads as gone";
            auto other = storage::gone_if_pruned(s.db(), "globex", 1, t0, run);
            if (!other || *other) return "another tenant's run reads as gone";
            return {};
          }};
}

// -- plain strings: the cluster id and the auth column's indexes ---------------------

golden_case cluster_id_case() {
  static const std::string example = "c-4b1d9e0a7f";
  return {"cluster_id",
          [] {
            scratch_db s;
            must(storage::write_cluster_id(s.db(), example), "cannot write the cluster id");
            return s.get(column::raft_meta, "cluster_id");
          },
          [](const std::string& bytes) -> std::string {
            scratch_db s;
            s.put(column::raft_meta, "cluster_id", bytes);
            auto got = storage::read_cluster_id(s.db());
            if (!got) return "does not read: " + view(got.error()).message;
            if (*got != example) return "reads back as '" + *got + "'";
            return {};
          }};
}

/// The auth column's index from a token's hash to its id ("h/" + hash).
golden_case token_hash_index_case() {
  return {"token_hash_index",
          [] {
            scratch_db s;
            rocksdb::WriteBatch b;
            storage::auth_applier auth(s.db(), b);
            must(auth.apply(put_token{example_token()}), "cannot apply put_token");
            must(s.db().write(b, true), "cannot write the batch");
            return s.get(column::auth, "h/" + example_token().hash);
          },
          [](const std::string& bytes) -> std::string {
            scratch_db s;
            auto t = example_token();
            s.put(column::auth, "t/" + t.id, encode(t));
            s.put(column::auth, "h/" + t.hash, bytes);
            auto got = storage::read_token_by_hash(s.db(), t.hash);
            if (!got) return "does not lead to the token: " + view(got.error()).message;
            if (got->id != t.id) return "leads to token " + got->id;
            return {};
          }};
}

/// The auth column's mark of a worker shared with every tenant ("s/" + id).
golden_case worker_share_case() {
  return {"worker_share",
          [] {
            scratch_db s;
            rocksdb::WriteBatch b;
            storage::auth_applier auth(s.db(), b);
            must(auth.apply(share_worker{"acme", "w-eu-1", true}), "cannot apply share_worker");
            must(s.db().write(b, true), "cannot write the batch");
            return s.get(column::auth, "s/w-eu-1");
          },
          [](const std::string& bytes) -> std::string {
            scratch_db s;
            s.put(column::auth, "s/w-eu-1", bytes);
            auto got = storage::read_worker_share(s.db(), "w-eu-1");
            if (!got) return "does not read: " + view(got.error()).message;
            if (*got != "acme") return "reads back as tenant '" + *got + "'";
            return {};
          }};
}

// -- files: the worker's outbox, snapshot chunks, FORMAT -------------------------

/// A segment of the worker's outbox (actors/worker/outbox.cpp): both example
/// reports put, then the second erased.
golden_case outbox_segment_case(bool written) {
  static const std::string segment = "seg-00000000000000000001.outbox";
  return {"outbox_segment",
          [] {
            scratch_dir d;
            {
              auto box =
                  must(aisched::worker::outbox::open(d.path.string()), "cannot open an outbox");
              auto reports = example_outbox_reports();
              std::vector<std::pair<std::string, const run_result*>> puts;
              for (auto& [key, r] : reports) puts.emplace_back(key, &r);
              must(box->put(puts), "cannot put the reports");
              must(box->erase({reports[1].first}), "cannot erase a report");
            }
            auto bytes = read_file(d.path / segment);
            if (!bytes) fail_setup("the outbox wrote no " + segment);
            return *bytes;
          },
          [](const std::string& bytes) -> std::string {
            scratch_dir d;
            write_file(d.path / segment, bytes);
            auto box = aisched::worker::outbox::open(d.path.string());
            if (!box) return "does not open: " + view(box.error()).message;
            auto got = (*box)->load();
            auto want = example_outbox_reports();
            if (got.size() != 1) return "holds " + std::to_string(got.size()) + " reports, not 1";
            if (got[0].first != want[0].first) return "holds report " + got[0].first;
            if (encode(got[0].second) != encode(want[0].second))
              return reads_as_other(encode(got[0].second), encode(want[0].second));
            return {};
          },
          written};
}

/// A snapshot chunk (storage/snapshot.cpp), as a leader sends it to install.
golden_case snapshot_chunk_case() {
  return {"snapshot_chunk",
          [] {
            scratch_db s;
            for (auto& r : snapshot_records()) s.put(r.c, r.key, r.value);
            auto exp = must(storage::snapshot_export::open(s.db()), "cannot export");
            auto chunk = must(exp->next_chunk(1 << 20), "cannot read a chunk");
            if (!exp->done()) fail_setup("the example snapshot is more than one chunk");
            return chunk;
          },
          [](const std::string& bytes) -> std::string {
            scratch_db s;
            {
              storage::snapshot_staging staging(s.db());
              if (auto err = staging.add(bytes)) return "does not read: " + view(err).message;
              must(s.db().write(staging.batch(), true), "cannot install the chunk");
            }
            for (auto& r : snapshot_records()) {
              auto got = must(s.db().get(r.c, r.key), "cannot read the scratch RocksDB");
              if (!got) return "lacks the record at " + to_hex(r.key);
              if (*got != r.value) return "holds " + to_hex(*got) + " at " + to_hex(r.key);
            }
            auto exp = must(storage::snapshot_export::open(s.db()), "cannot export");
            if (exp->applied_index() != 1'041) return "installs another applied index";
            return {};
          }};
}

/// The data directory's FORMAT file (storage/format_version.hpp) of `format`.
golden_case format_file_case(uint32_t format) {
  const storage::format_stamp example{format, "0.1.0"};
  return {"format_file", [example] { return storage::format_text(example); },
          [example](const std::string& bytes) -> std::string {
            auto got = storage::parse_format(bytes);
            if (!got) return "does not parse: " + view(got.error()).message;
            if (got->version != example.version || got->written_by != example.written_by)
              return "reads back as format " + std::to_string(got->version) + " written by '" +
                     got->written_by + "'";
            return {};
          },
          format == storage::current_format};
}

/// The format a migration step records in the database (storage/migrations.hpp).
golden_case stored_format_case(uint32_t format) {
  return {"stored_format",
          [format] {
            scratch_db s;
            auto dir = test::make_test_dir("aisched-golden-format-");
            if (dir.empty()) fail_setup("cannot create a temporary directory");
            auto ran = storage::migrate_format(s.db(), dir.string(), storage::format_stamp{}, "0.1.0");
            std::error_code ec;
            fs::remove_all(dir, ec);
            must(std::move(ran), "cannot migrate an empty database");
            return s.get(column::raft_meta, "format");
          },
          [format](const std::string& bytes) -> std::string {
            scratch_db s;
            s.put(column::raft_meta, "format", bytes);
            auto got = storage::stored_format(s.db());
            if (!got) return "does not read: " + view(got.error()).message;
            if (!*got) return "reads as no format";
            if (**got != format) return "reads back as format " + std::to_string(**got);
            return {};
          },
          format == storage::current_format};
}

}  // namespace aisched::compat
