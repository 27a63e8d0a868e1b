// A writer of AI records straight into a test's RocksDB, as applying
// `put_ai_records` would: for unit tests without a raft actor to propose to
// (a blocking proposal cannot run on CAF's test coordinator).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include <rocksdb/write_batch.h>

#include "common/propose.hpp"
#include "storage/ai_records.hpp"
#include "storage/rocks.hpp"

namespace aisched::test {

inline ai_record_writer local_ai_writer(std::shared_ptr<storage::rocks> db) {
  return [db](std::vector<proto::ai_record> records) -> caf::error {
    rocksdb::WriteBatch b;
    storage::write_ai_records(*db, b, proto::put_ai_records{std::move(records)});
    return db->write(b, false);
  };
}

}  // namespace aisched::test
