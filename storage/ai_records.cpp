// The AI records' writes; see ai_records.hpp.
#include "storage/ai_records.hpp"

#include <rocksdb/write_batch.h>

#include "storage/rocks.hpp"

namespace aisched::storage {

void write_ai_records(rocks& db, rocksdb::WriteBatch& batch, const proto::put_ai_records& c) {
  for (auto& r : c.records) {
    auto* cf = db.cf(r.column == proto::ai_column::analyses ? column::ai_analysis
                                                             : column::ai_conversations);
    if (r.erase)
      batch.Delete(cf, r.key);
    else
      batch.Put(cf, r.key, r.value);
  }
}

}  // namespace aisched::storage
