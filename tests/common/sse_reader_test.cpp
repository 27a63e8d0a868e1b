// sse_reader: events come out whole and in order however the stream is cut,
// comments are skipped, and nothing is delivered after the handler stops.
#include "common/sse_reader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using aisched::http::sse_event;
using aisched::http::sse_reader;

namespace {

const std::string stream =
    ": keep-alive\n\n"
    "data: {\"chunk\": \"one\\n\"}\n\n"
    "data: first line\r\ndata: second line\r\n\r\n"
    "event: end\ndata: {\"state\": \"success\"}\n\n"
    "data: after the end\n\n";

/// Feeds `stream` in pieces of `piece` bytes; returns "type|data" per event seen.
std::vector<std::string> read_in_pieces(size_t piece, bool stop_at_end) {
  std::vector<std::string> seen;
  sse_reader reader([&](const sse_event& e) {
    seen.push_back(e.type + "|" + e.data);
    return !(stop_at_end && e.type == "end");
  });
  for (size_t i = 0; i < stream.size(); i += piece)
    reader.feed(std::string_view(stream).substr(i, piece));
  return seen;
}

}  // namespace

TEST(sse_reader, yields_whole_events_however_the_bytes_are_split) {
  const std::vector<std::string> expected{
      "|{\"chunk\": \"one\\n\"}",
      "|first line\nsecond line",
      "end|{\"state\": \"success\"}",
      "|after the end",
  };
  for (size_t piece : {stream.size(), size_t{1}, size_t{2}, size_t{7}})
    EXPECT_EQ(read_in_pieces(piece, false), expected) << "pieces of " << piece;
}

TEST(sse_reader, delivers_nothing_after_the_handler_stops) {
  for (size_t piece : {stream.size(), size_t{1}, size_t{5}}) {
    auto seen = read_in_pieces(piece, true);
    ASSERT_EQ(seen.size(), 3u) << "pieces of " << piece;
    EXPECT_EQ(seen.back(), "end|{\"state\": \"success\"}");
  }
}

TEST(sse_reader, keeps_an_unfinished_event_until_its_blank_line) {
  std::vector<sse_event> seen;
  sse_reader reader([&](const sse_event& e) {
    seen.push_back(e);
    return true;
  });
  EXPECT_TRUE(reader.feed("data: half"));
  EXPECT_TRUE(reader.feed("\n"));
  EXPECT_TRUE(seen.empty());
  EXPECT_TRUE(reader.feed("\n"));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].data, "half");
}
