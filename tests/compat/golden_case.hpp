// What the table of golden encodings (golden_test.cpp) is made of: a named
// example with how this build writes it and how it reads bytes back, and the
// examples whose layouts storage/ and the worker lay out by hand, read and
// written through their own code (golden_layouts.cpp).
#pragma once

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "proto/errors.hpp"
#include "proto/hex.hpp"
#include "storage/idempotency.hpp"

namespace aisched::compat {

/// One golden example: the bytes this build writes for it, and whether given
/// bytes read back as it ("" when they do, else what differs). Either may
/// throw (fail_setup) when a step around the example fails.
struct golden_case {
  std::string name;  // its file: <name>.hex
  std::function<std::string()> encode;
  std::function<std::string(const std::string&)> check;
  /// Whether this build still writes these bytes. An encoding a later format
  /// replaced is only read (through its migration), never written again.
  bool written = true;
};

/// A step around an example failed (a scratch database, a file), not the
/// example's bytes: thrown, and reported by the runner as such.
[[noreturn]] inline void fail_setup(const std::string& what) { throw std::runtime_error(what); }

template <class T>
T must(caf::expected<T> x, const std::string& what) {
  if (!x) fail_setup(what + ": " + view(x.error()).message);
  return std::move(*x);
}

inline void must(const caf::error& err, const std::string& what) {
  if (err) fail_setup(what + ": " + view(err).message);
}

/// What a check answers when bytes read back as another value.
inline std::string reads_as_other(const std::string& got, const std::string& want) {
  return "reads back as another value: it re-encodes as " + proto::to_hex(got) +
         ", the example as " + proto::to_hex(want);
}

/// The contents of file `p`; nothing when it cannot be read.
inline std::optional<std::string> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// -- layouts written by hand (golden_layouts.cpp) ----------------------------------

golden_case hard_state_case();  // raft_meta "hard_state"
golden_case log_base_case();    // raft_meta "snapshot"
golden_case idempotency_case(std::string name, storage::idempotency_record example);
golden_case instance_counts_case();   // meta "instance_counts"
golden_case meta_counter_case();      // meta "applied_index", "next_task_id", "schema_version"
golden_case retention_mark_case();    // meta "pruned/" + task id
golden_case cluster_id_case();        // raft_meta "cluster_id"
golden_case token_hash_index_case();  // auth "h/" + token hash
golden_case worker_share_case();      // auth "s/" + worker id
golden_case outbox_segment_case(bool written);  // a segment file of the worker's outbox
golden_case snapshot_chunk_case();    // a chunk a leader sends to install a snapshot
golden_case format_file_case(uint32_t format);  // the data directory's FORMAT of `format`
golden_case stored_format_case(uint32_t format);  // raft_meta "format" (since format 1)

}  // namespace aisched::compat
