// The backup file (common/backup_file.hpp): what the writer makes reads back
// as written (header, records, counts, checksum); a flipped byte is refused
// naming the checksum, a truncated file naming the truncation, a newer layout
// or data format naming both formats, another kind of file naming the magic.
#include "common/backup_file.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "proto/errors.hpp"

namespace aisched::backup {
namespace {

/// One record in the chunk format: [column][key len][key][value len][value].
std::string record(uint8_t column, const std::string& key, const std::string& value) {
  std::string out(1, static_cast<char>(column));
  auto put_u32 = [&out](uint32_t x) {
    for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((x >> (i * 8)) & 0xff));
  };
  put_u32(static_cast<uint32_t>(key.size()));
  out += key;
  put_u32(static_cast<uint32_t>(value.size()));
  out += value;
  return out;
}

backup_header sample_header() {
  backup_header h;
  h.data_format = 0;
  h.written_by = "0.1.0";
  h.cluster_id = "0123456789abcdef0123456789abcdef";
  h.node_id = "n1";
  h.index = 4242;
  h.term = 7;
  h.created_at_ms = 1'796'022'000'000;
  h.key_checks = {"00112233aabbccdd"};
  h.members = {{"n1", true, "127.0.0.1:7401", "127.0.0.1:8081"},
               {"n2", false, "127.0.0.1:7402", ""}};
  h.columns = {{2, "tasks"}, {4, "instances"}, {7, "auth"}};
  return h;
}

/// A whole file: the header, `chunks` of records, the trailer.
std::string make_file(const backup_header& h, const std::vector<std::string>& chunks) {
  backup_writer w(h);
  auto out = w.begin();
  for (auto& c : chunks) {
    auto piece = w.records(c);
    EXPECT_TRUE(piece) << view(piece.error()).message;
    if (piece) out += *piece;
  }
  return out + w.finish();
}

const std::vector<std::string>& sample_chunks() {
  static const std::vector<std::string> chunks{
      record(2, "task-1", "definition one") + record(2, "task-2", std::string(3000, 'x')),
      record(4, "run-1", "") + record(7, "dk/default", "wrapped key"),
      record(4, std::string(1, '\0') + "binary\xff key", std::string(2 << 20, 'y')),  // > a block
  };
  return chunks;
}

struct read_result {
  caf::expected<backup_summary> summary{caf::error{}};
  std::vector<std::tuple<std::string, std::string, std::string>> records;
};

read_result read(const std::string& bytes, uint32_t limit = 0) {
  std::istringstream in(bytes);
  read_result out;
  out.summary = read_backup(in, limit, [&out](const column_info& c, std::string_view k,
                                              std::string_view v) {
    out.records.emplace_back(c.name, std::string(k), std::string(v));
    return caf::error{};
  });
  return out;
}

std::string message_of(const caf::expected<backup_summary>& x) {
  return x ? std::string("(read fine)") : view(x.error()).message;
}

TEST(backup_file_test, round_trip_keeps_header_records_and_counts) {
  auto h = sample_header();
  auto bytes = make_file(h, sample_chunks());
  auto r = read(bytes);
  ASSERT_TRUE(r.summary) << message_of(r.summary);
  auto& s = *r.summary;
  EXPECT_EQ(s.header.layout, backup_layout);
  EXPECT_EQ(s.header.data_format, h.data_format);
  EXPECT_EQ(s.header.written_by, h.written_by);
  EXPECT_EQ(s.header.cluster_id, h.cluster_id);
  EXPECT_EQ(s.header.node_id, h.node_id);
  EXPECT_EQ(s.header.index, h.index);
  EXPECT_EQ(s.header.term, h.term);
  EXPECT_EQ(s.header.created_at_ms, h.created_at_ms);
  EXPECT_EQ(s.header.key_checks, h.key_checks);
  EXPECT_EQ(s.header.members, h.members);
  ASSERT_EQ(s.header.columns.size(), h.columns.size());
  EXPECT_EQ(s.records, 5u);
  EXPECT_EQ(s.records_by_column.at("tasks"), 2u);
  EXPECT_EQ(s.records_by_column.at("instances"), 2u);
  EXPECT_EQ(s.records_by_column.at("auth"), 1u);
  EXPECT_EQ(s.bytes, bytes.size());
  EXPECT_EQ(s.checksum.size(), 64u);
  ASSERT_EQ(r.records.size(), 5u);
  EXPECT_EQ(r.records[0], std::make_tuple(std::string("tasks"), std::string("task-1"),
                                          std::string("definition one")));
  EXPECT_EQ(std::get<2>(r.records[1]), std::string(3000, 'x'));
  EXPECT_EQ(std::get<2>(r.records[2]), "");
  EXPECT_EQ(std::get<1>(r.records[4]), std::string(1, '\0') + "binary\xff key");
  EXPECT_EQ(std::get<2>(r.records[4]).size(), size_t{2} << 20);
}

TEST(backup_file_test, an_empty_state_round_trips) {
  auto h = sample_header();
  h.key_checks.clear();
  auto r = read(make_file(h, {}));
  ASSERT_TRUE(r.summary) << message_of(r.summary);
  EXPECT_EQ(r.summary->records, 0u);
  EXPECT_TRUE(r.summary->header.key_checks.empty());
}

TEST(backup_file_test, the_writer_and_the_reader_agree_on_the_checksum) {
  backup_writer w(sample_header());
  auto bytes = w.begin();
  for (auto& c : sample_chunks()) bytes += *w.records(c);
  bytes += w.finish();
  auto r = read(bytes);
  ASSERT_TRUE(r.summary) << message_of(r.summary);
  EXPECT_EQ(r.summary->checksum, w.checksum());
  EXPECT_EQ(w.record_count(), 5u);
}

TEST(backup_file_test, a_flipped_byte_anywhere_before_the_trailer_fails_the_checksum) {
  auto bytes = make_file(sample_header(), sample_chunks());
  // In the header, in a record's length, in a value, in the record count.
  for (size_t at : {size_t{40}, size_t{200}, bytes.size() / 2, bytes.size() - 45}) {
    auto damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x01);
    auto r = read(damaged);
    ASSERT_FALSE(r.summary) << "byte " << at;
    EXPECT_EQ(view(r.summary.error()).code, errc::corrupted) << "byte " << at;
    EXPECT_NE(message_of(r.summary).find("checksum mismatch"), std::string::npos)
        << "byte " << at << ": " << message_of(r.summary);
    EXPECT_TRUE(r.records.empty()) << "no record is handed out before the checksum verified";
  }
}

TEST(backup_file_test, a_truncated_file_is_refused_as_truncated) {
  auto bytes = make_file(sample_header(), sample_chunks());
  for (size_t keep : {bytes.size() - 1, bytes.size() - 32, bytes.size() / 2, size_t{100},
                      size_t{20}}) {
    auto r = read(bytes.substr(0, keep));
    ASSERT_FALSE(r.summary) << keep << " bytes";
    EXPECT_EQ(view(r.summary.error()).code, errc::corrupted);
    EXPECT_NE(message_of(r.summary).find("truncated"), std::string::npos)
        << keep << " bytes: " << message_of(r.summary);
    EXPECT_TRUE(r.records.empty());
  }
}

TEST(backup_file_test, a_newer_data_format_is_refused_naming_both) {
  auto h = sample_header();
  h.data_format = 3;
  auto r = read(make_file(h, sample_chunks()), /*limit=*/0);
  ASSERT_FALSE(r.summary);
  EXPECT_EQ(view(r.summary.error()).code, errc::invalid_argument);
  EXPECT_EQ(view(r.summary.error()).field, "format");
  auto msg = message_of(r.summary);
  EXPECT_NE(msg.find("data format 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("data format 0"), std::string::npos) << msg;
  // A reader that knows format 3 takes it.
  EXPECT_TRUE(read(make_file(h, sample_chunks()), 3).summary);
}

TEST(backup_file_test, a_newer_layout_is_refused_naming_both) {
  auto bytes = make_file(sample_header(), sample_chunks());
  bytes[19] = static_cast<char>(backup_layout + 1);  // the layout's low byte
  auto r = read(bytes);
  ASSERT_FALSE(r.summary);
  EXPECT_EQ(view(r.summary.error()).code, errc::invalid_argument);
  auto msg = message_of(r.summary);
  EXPECT_NE(msg.find("layout " + std::to_string(backup_layout + 1)), std::string::npos) << msg;
  EXPECT_NE(msg.find("layout " + std::to_string(backup_layout)), std::string::npos) << msg;
}

TEST(backup_file_test, another_kind_of_file_is_refused_by_its_magic) {
  auto r = read(std::string("{\"not\": \"a backup\"}") + std::string(200, ' '));
  ASSERT_FALSE(r.summary);
  EXPECT_NE(message_of(r.summary).find("magic"), std::string::npos) << message_of(r.summary);
  EXPECT_FALSE(read("").summary);
}

TEST(backup_file_test, the_writer_refuses_a_malformed_chunk_or_an_unlisted_column) {
  backup_writer w(sample_header());
  w.begin();
  auto cut = record(2, "k", "value");
  cut.pop_back();
  EXPECT_FALSE(w.records(cut));
  EXPECT_FALSE(w.records(record(9, "k", "v")));  // column 9 is not in the header
  EXPECT_EQ(w.record_count(), 0u);
}

TEST(backup_file_test, an_error_of_the_record_callback_stops_the_read) {
  auto bytes = make_file(sample_header(), sample_chunks());
  std::istringstream in(bytes);
  int seen = 0;
  auto r = read_backup(in, 0, [&seen](const column_info&, std::string_view, std::string_view) {
    return ++seen == 2 ? make_error(errc::storage_error, "disk full") : caf::error{};
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(view(r.error()).message, "disk full");
  EXPECT_EQ(seen, 2);
}

}  // namespace
}  // namespace aisched::backup
