// The AI memory in the replicated state: the agent's conversations (column
// ai_conversations) and the failure analyses (ai_analysis), written only by
// applying `put_ai_records`, so every member holds them and snapshots carry
// them. Their keys and values belong to the writers (actors/llm_agent,
// actors/ai_features); the state machine stores them as given.
#pragma once

#include "proto/commands.hpp"

namespace rocksdb {
class WriteBatch;
}

namespace aisched::storage {

class rocks;

/// Adds `c`'s puts and erasures to `batch`.
void write_ai_records(rocks& db, rocksdb::WriteBatch& batch, const proto::put_ai_records& c);

}  // namespace aisched::storage
