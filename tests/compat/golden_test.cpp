// Golden encodings (issue 44; tests/compat/README.md). For every raft command
// (in a log entry) and every record aisched stores (RocksDB values, the
// worker's outbox segments, snapshot chunks, the FORMAT file) the tables below
// name one example (golden_examples.hpp) per format that wrote it anew, and say
// how this build reads it back and, while the encoding is current, writes it.
// format-<n>/<name>.hex holds the bytes the builds of format n wrote. Every
// later build must read each file back as its example (an encoding a later
// format replaced: through its migration), and write a current one as exactly
// its bytes.
//
// AISCHED_WRITE_GOLDEN=<dir> writes the files missing from <dir> instead, and
// checks those present as usual: a golden file is never changed once written.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "compat/golden_case.hpp"
#include "compat/golden_examples.hpp"
#include "proto/codec.hpp"
#include "proto/commands.hpp"
#include "proto/errors.hpp"
#include "proto/hex.hpp"
#include "proto/json_wire.hpp"
#include "storage/format_version.hpp"
#include "storage/migrations.hpp"

#ifndef AISCHED_GOLDEN_DIR
#error "AISCHED_GOLDEN_DIR (the format-0 directory) must be defined by tests/compat/CMakeLists.txt"
#endif

namespace aisched::compat {
namespace {

using namespace proto;
namespace fs = std::filesystem;
namespace json = boost::json;

// -- the table's vocabulary -----------------------------------------------------

template <class T, class = void>
struct has_equal : std::false_type {};
template <class T>
struct has_equal<T, std::void_t<decltype(std::declval<const T&>() == std::declval<const T&>())>>
    : std::true_type {};

/// A record of format 0 or 1 (CAF's encoding, proto::format_1): read by the
/// migration to format 2 as the example, no longer written.
template <class T>
golden_case format_1_case(std::string name, T example) {
  return {std::move(name), [example] { return format_1::encode(example); },
          [example](const std::string& bytes) -> std::string {
            auto got = format_1::decode<T>(bytes);
            if (!got) return "does not decode: " + view(got.error()).message;
            if (format_1::encode(*got) != format_1::encode(example))
              return reads_as_other(format_1::encode(*got), format_1::encode(example));
            return {};
          },
          false};
}

/// A record of the codec (proto/codec.hpp: RocksDB values, raft log entries,
/// the worker's outbox values), compared by operator== where it has one,
/// else by re-encoding.
template <class T>
golden_case codec_case(std::string name, T example) {
  return {std::move(name), [example] { return encode(example); },
          [example](const std::string& bytes) -> std::string {
            auto got = decode<T>(bytes);
            if (!got) return "does not decode: " + view(got.error()).message;
            if constexpr (has_equal<T>::value) {
              if (!(*got == example)) return reads_as_other(encode(*got), encode(example));
            } else {
              if (encode(*got) != encode(example))
                return reads_as_other(encode(*got), encode(example));
            }
            return {};
          }};
}

/// A JSON record of the AI agent (actors/llm_agent/conversation_store):
/// `write` makes the example's document; `reread` reads a document and
/// writes what it read again (the types have no operator==).
golden_case json_case(std::string name, std::function<json::value()> write,
                      std::function<caf::expected<json::value>(const json::value&)> reread) {
  return {std::move(name), [write] { return json::serialize(write()); },
          [write, reread](const std::string& bytes) -> std::string {
            json::error_code ec;
            auto v = json::parse(bytes, ec);
            if (ec) return "is not JSON: " + ec.message();
            auto again = reread(v);
            if (!again) return "does not read: " + view(again.error()).message;
            if (json::serialize(*again) != json::serialize(write()))
              return "reads back as " + json::serialize(*again);
            return {};
          }};
}

// -- the table --------------------------------------------------------------------



/// A raft log entry of format 0 (CAF's variant of 30 commands): read by its
/// migration to format 1 (storage/migrations.hpp), as the example; no longer written.
golden_case format_0_entry_case(std::string name, log_entry example) {
  return {std::move(name), [example] { return encode(example); },
          [example](const std::string& bytes) -> std::string {
            auto got = storage::log_entry_from_format_0(bytes);
            if (!got) return "does not migrate: " + view(got.error()).message;
            auto cmd = storage::command_to_format_2(got->cmd);
            if (!cmd) return "does not migrate to format 2: " + view(cmd.error()).message;
            got->cmd = std::move(*cmd);
            if (encode(*got) != encode(example)) return reads_as_other(encode(*got), encode(example));
            return {};
          },
          false};
}

/// A raft log entry of format 1 (an opaque command of CAF's encoding): read by
/// the migration to format 2, as the example; no longer written.
golden_case format_1_entry_case(std::string name, log_entry example) {
  return {std::move(name), [example] { return encode(example); },
          [example](const std::string& bytes) -> std::string {
            auto got = storage::log_entry_from_format_1(bytes);
            if (!got) return "does not migrate: " + view(got.error()).message;
            if (encode(*got) != encode(example)) return reads_as_other(encode(*got), encode(example));
            return {};
          },
          false};
}

/// Format 2 (the wire format, numbered fields): every record, command and
/// raft entry anew, the worker's outbox and the format's stamps.
std::vector<golden_case> format_2_cases() {
  std::vector<golden_case> out;
  for (auto& e : example_log_entries())
    out.push_back(codec_case("log_entry_" + std::string(command_name(e.cmd)), e));
  for_each_record([&](std::string name, auto x) { out.push_back(codec_case(std::move(name), x)); });
  out.push_back(outbox_segment_case(true));
  out.push_back(stored_format_case(2));
  out.push_back(format_file_case(2));
  return out;
}

/// Format 1 (raft entries become opaque commands): what it wrote anew.
std::vector<golden_case> format_1_cases() {
  std::vector<golden_case> out;
  for (auto& e : example_log_entries())
    if (e.cmd.type < 30)  // the commands format 1 had
      out.push_back(format_1_entry_case("log_entry_" + std::string(command_name(e.cmd)), e));
  out.push_back(stored_format_case(1));
  out.push_back(format_file_case(1));
  return out;
}

/// Format 0: every record; its raft entries and FORMAT are read, no longer written.
std::vector<golden_case> format_0_cases() {
  std::vector<golden_case> out;
  // The raft log: one entry per command format 0 had (type numbers 0..29).
  for (auto& e : example_log_entries())
    if (e.cmd.type < 30)
      out.push_back(format_0_entry_case("log_entry_" + std::string(command_name(e.cmd)), e));
  // RocksDB values of the codec (and the worker's outbox values: run_result).
  for_each_record(
      [&](std::string name, auto x) { out.push_back(format_1_case(std::move(name), x)); });
  // The AI agent's conversations: JSON.
  out.push_back(json_case(
      "conversation_record", [] { return conversation_record(example_conversation()); },
      [](const json::value& v) -> caf::expected<json::value> {
        auto c = conversation_from_record(v);
        if (!c) return c.error();
        return conversation_record(*c);
      }));
  out.push_back(json_case(
      "message_record", [] { return message_record(example_chat_message(), t0 + 9'000); },
      [](const json::value& v) -> caf::expected<json::value> {
        auto m = message_from_record(v);
        if (!m) return m.error();
        return message_record(m->msg, m->at);
      }));
  out.push_back(json_case(
      "pending_action_record", [] { return pending_action_record(example_pending_action()); },
      [](const json::value& v) -> caf::expected<json::value> {
        auto a = pending_action_from_record(v);
        if (!a) return a.error();
        return pending_action_record(*a);
      }));
  // Layouts written by hand in storage/.
  out.push_back(hard_state_case());
  out.push_back(log_base_case());
  out.push_back(idempotency_case("idempotency_record", example_idempotency_record()));
  out.push_back(idempotency_case("idempotency_record_unfingerprinted",
                                 {example_idempotency_record().task_id, 0}));
  out.push_back(instance_counts_case());
  out.push_back(meta_counter_case());
  out.push_back(retention_mark_case());
  out.push_back(cluster_id_case());
  out.push_back(token_hash_index_case());
  out.push_back(worker_share_case());
  // Files.
  out.push_back(outbox_segment_case(false));
  out.push_back(snapshot_chunk_case());
  out.push_back(format_file_case(0));
  return out;
}

/// The formats with golden files: format-<n>/ holds what format n wrote anew.
constexpr uint32_t last_golden_format = 2;

const std::vector<golden_case>& golden_cases(uint32_t format) {
  static const std::vector<std::vector<golden_case>> cases{format_0_cases(), format_1_cases(),
                                                           format_2_cases()};
  static_assert(last_golden_format == storage::current_format,
                "the current format has its golden directory");
  return cases.at(format);
}

std::vector<std::string> case_names(uint32_t format) {
  std::vector<std::string> out;
  for (auto& c : golden_cases(format)) out.push_back(c.name);
  return out;
}

const golden_case& case_named(uint32_t format, const std::string& name) {
  for (auto& c : golden_cases(format))
    if (c.name == name) return c;
  throw std::logic_error("no golden example named " + name);
}

// -- the runner -------------------------------------------------------------------

fs::path golden_dir(uint32_t format) {
  return fs::path(AISCHED_GOLDEN_DIR) / ("format-" + std::to_string(format));
}

/// `c.check(bytes)`, with a failure around it reported as one.
std::string check_bytes(const golden_case& c, const std::string& bytes) {
  try {
    return c.check(bytes);
  } catch (const std::exception& e) {
    return std::string("could not be checked: ") + e.what();
  }
}

/// The golden file `file` reads back as `c`'s example, and this build writes
/// the example (as `written`) exactly as the file has it.
void expect_golden(const golden_case& c, const std::string& written, const fs::path& file) {
  // c.name's file in format-<n>/ (the message names the file).
  auto text = read_file(file);
  ASSERT_TRUE(text) << "cannot read " << file;
  while (!text->empty() && std::isspace(static_cast<unsigned char>(text->back()))) text->pop_back();
  auto bytes = from_hex(*text);
  ASSERT_TRUE(bytes) << file << " is not one line of hex";
  EXPECT_EQ(check_bytes(c, *bytes), "")
      << file << ": the bytes of '" << c.name
      << "' do not read back as the example in this build. Every build must read them: fix the "
         "reader (or add a migration), never the file (tests/compat/README.md).";
  if (!c.written) return;  // replaced by a later format: read (migrated), no longer written
  EXPECT_EQ(to_hex(written), *text)
      << "this build writes example '" << c.name << "' otherwise than " << file
      << ". A build writes what earlier builds of its format wrote; a new encoding is a new "
         "format (storage/format_version.hpp) with its own golden directory.";
}

/// Writes `c`'s file into `dir` unless it is there already; one that is
/// there is checked instead (a golden file is never changed once written).
void write_golden(const golden_case& c, const std::string& written, const fs::path& dir) {
  auto file = dir / (c.name + ".hex");
  if (!c.written) return expect_golden(c, written, file);  // a format no longer written
  ASSERT_EQ(check_bytes(c, written), "")
      << "example '" << c.name << "' does not read back in this build: " << file << " not written";
  std::error_code ec;
  fs::create_directories(dir, ec);
  // "x": the open fails if the file exists, so not even a concurrent run replaces one.
  std::FILE* f = std::fopen(file.c_str(), "wx");
  if (f == nullptr && errno == EEXIST) return expect_golden(c, written, file);
  ASSERT_NE(f, nullptr) << "cannot create " << file << ": " << std::strerror(errno);
  auto line = to_hex(written) + "\n";
  bool ok = std::fwrite(line.data(), 1, line.size(), f) == line.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) fs::remove(file, ec);
  ASSERT_TRUE(ok) << "cannot write " << file;
  std::cout << "wrote " << file.string() << "\n";
}

/// One golden example of one format.
struct golden_key {
  uint32_t format;
  std::string name;
};

std::vector<golden_key> keys_of(uint32_t format) {
  std::vector<golden_key> out;
  for (auto& name : case_names(format)) out.push_back({format, name});
  return out;
}

class golden : public ::testing::TestWithParam<golden_key> {};

TEST_P(golden, reads_back_as_its_example_and_the_example_writes_it) {
  auto format = GetParam().format;
  const auto& c = case_named(format, GetParam().name);
  std::string written;
  try {
    written = c.encode();
  } catch (const std::exception& e) {
    FAIL() << "cannot write example '" << c.name << "': " << e.what();
  }
  if (const char* out = std::getenv("AISCHED_WRITE_GOLDEN"); out != nullptr && *out != '\0')
    return write_golden(c, written, fs::path(out));
  auto file = golden_dir(format) / (c.name + ".hex");
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    FAIL() << "no golden file " << file << " for example '" << c.name
           << "': every record type and command has its bytes. Write the missing "
              "files with this build (files already there are never rewritten):\n  "
              "AISCHED_WRITE_GOLDEN="
           << golden_dir(format).string() << " "
           << fs::read_symlink("/proc/self/exe", ec).string() << " --gtest_filter='format_"
           << format << "/*'\nthen review and commit them (tests/compat/README.md).";
  }
  expect_golden(c, written, file);
}

std::string name_of(const ::testing::TestParamInfo<golden_key>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(format_0, golden, ::testing::ValuesIn(keys_of(0)), name_of);
INSTANTIATE_TEST_SUITE_P(format_1, golden, ::testing::ValuesIn(keys_of(1)), name_of);
INSTANTIATE_TEST_SUITE_P(format_2, golden, ::testing::ValuesIn(keys_of(2)), name_of);

template <class... Ts>
constexpr size_t count_of(command_list<Ts...>) {
  return sizeof...(Ts);
}

TEST(golden_examples, cover_every_command_once) {
  std::set<command_type> seen;
  for (auto& e : example_log_entries())
    EXPECT_TRUE(seen.insert(e.cmd.type).second) << "two examples of " << command_name(e.cmd);
  EXPECT_EQ(seen.size(), count_of(all_commands{}))
      << "a command without a golden example: add one to example_log_entries() "
         "(golden_examples.cpp) and write its file (tests/compat/README.md)";
}

TEST(golden_examples, have_distinct_file_names) {
  for (uint32_t format = 0; format <= last_golden_format; ++format) {
  std::set<std::string> names;
  for (auto& name : case_names(format)) {
    EXPECT_TRUE(names.insert(name).second) << "two examples named " << name;
    EXPECT_FALSE(name.empty());
    for (char ch : name)
      EXPECT_TRUE((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_')
          << "example name '" << name << "' is not [a-z0-9_]+";
  }
  }
}

TEST(golden_examples, every_golden_file_still_has_its_example) {
  // A file whose example went would no longer be checked: its bytes could
  // stop reading back unnoticed.
  for (uint32_t format = 0; format <= last_golden_format; ++format) {
    std::error_code ec;
    if (!fs::is_directory(golden_dir(format), ec)) continue;  // none written yet: each case fails
    auto names = case_names(format);
    std::set<std::string> known(names.begin(), names.end());
    for (auto& entry : fs::directory_iterator(golden_dir(format), ec)) {
      if (entry.path().extension() != ".hex") continue;
      EXPECT_TRUE(known.count(entry.path().stem().string()))
          << entry.path() << " has no example in golden_test.cpp: restore it (its bytes must "
          << "keep reading back), never delete the file";
    }
  }
}

}  // namespace
}  // namespace aisched::compat
