// The wire codec (proto/wire.hpp) and its evolution rules: a record written by
// an older build (fewer fields) reads with the new fields at their defaults;
// one written by a newer build (more fields) reads with the fields it knows,
// keeps the others and writes them again; fields in any order read the same;
// damaged bytes are errc::corrupted, never a crash or a wrong value.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "proto/types.hpp"
#include "proto/wire.hpp"
#include "proto/wire_schema.hpp"

namespace aisched::proto::wire_records {

struct part {
  std::string name;
  int64_t at = 0;
  friend bool operator==(const part& a, const part& b) { return a.name == b.name && a.at == b.at; }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, part& x) {
  return f(caf::meta::type_name("t.part"), field("name"), x.name, field("at"), x.at);
}

/// A record as an older build knew it.
struct v1 {
  uint64_t id = 0;
  std::string name;
  instance_state state = instance_state::pending;
  std::vector<part> parts;
  std::map<std::string, std::string> labels;
  unknown_fields unknown{};
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, v1& x) {
  return f(caf::meta::type_name("t.v1"), field("id"), x.id, field("name"), x.name,
           field("state"), x.state, field("parts"), x.parts, field("labels"), x.labels,
           keep_unknown(x.unknown));
}

/// The same record a build later: four fields appended.
struct v2 {
  uint64_t id = 0;
  std::string name;
  instance_state state = instance_state::pending;
  std::vector<part> parts;
  std::map<std::string, std::string> labels;
  double ratio = 1.5;
  std::vector<int32_t> codes;
  part owner{"nobody", 7};
  bool flag = true;
  unknown_fields unknown{};
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, v2& x) {
  return f(caf::meta::type_name("t.v2"), field("id"), x.id, field("name"), x.name,
           field("state"), x.state, field("parts"), x.parts, field("labels"), x.labels,
           save_finite(x.ratio), field("ratio"), x.ratio, load_finite(x.ratio),
           field("codes"), x.codes, field("owner"), x.owner, field("flag"), x.flag,
           keep_unknown(x.unknown));
}

/// v1 without a place for unknown fields.
struct v1_strict {
  uint64_t id = 0;
  std::string name;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, v1_strict& x) {
  return f(caf::meta::type_name("t.v1_strict"), field("id"), x.id, field("name"), x.name);
}

bool same_v1_fields(const v1& a, const v2& b) {
  return a.id == b.id && a.name == b.name && a.state == b.state && a.parts == b.parts &&
         a.labels == b.labels;
}

bool same(const v2& a, const v2& b) {
  return a.id == b.id && a.name == b.name && a.state == b.state && a.parts == b.parts &&
         a.labels == b.labels && a.ratio == b.ratio && a.codes == b.codes && a.owner == b.owner &&
         a.flag == b.flag;
}

}  // namespace aisched::proto::wire_records

namespace rc {
template <>
struct Arbitrary<aisched::proto::wire_records::part> {
  static Gen<aisched::proto::wire_records::part> arbitrary() {
    return gen::build<aisched::proto::wire_records::part>(
        gen::set(&aisched::proto::wire_records::part::name),
        gen::set(&aisched::proto::wire_records::part::at));
  }
};
template <>
struct Arbitrary<aisched::proto::wire_records::v2> {
  static Gen<aisched::proto::wire_records::v2> arbitrary() {
    using aisched::proto::instance_state;
    using aisched::proto::wire_records::v2;
    return gen::build<v2>(
        gen::set(&v2::id), gen::set(&v2::name),
        gen::set(&v2::state, gen::map(gen::inRange<int>(0, 8),
                                      [](int i) { return static_cast<instance_state>(i); })),
        gen::set(&v2::parts), gen::set(&v2::labels),
        gen::set(&v2::ratio, gen::map(gen::arbitrary<int32_t>(),
                                      [](int32_t i) { return i / 7.0; })),
        gen::set(&v2::codes), gen::set(&v2::owner), gen::set(&v2::flag));
  }
};
}  // namespace rc

namespace aisched::proto::wire_records {
namespace {

namespace w = aisched::proto::wire;

v1 as_v1(const v2& x) { return v1{x.id, x.name, x.state, x.parts, x.labels, {}}; }

/// The fields of `bytes`, each as its bytes, in order.
std::vector<std::string> fields_of(const std::string& bytes) {
  std::vector<std::string> out;
  for (auto p = bytes.data(), e = p + bytes.size(); p != e;) {
    w::raw_field f;
    if (!w::next_field(p, e, f)) ADD_FAILURE() << "the writer wrote a field that does not read";
    out.emplace_back(f.begin, f.end);
  }
  return out;
}

RC_GTEST_PROP(wire, a_record_reads_back_as_itself, (const v2& x)) {
  auto got = w::decode<v2>(w::encode(x));
  RC_ASSERT(got.engaged());
  RC_ASSERT(same(*got, x));
  RC_ASSERT(got->unknown.bytes.empty());
}

RC_GTEST_PROP(wire, an_older_record_reads_with_the_new_fields_at_their_defaults, (const v2& x)) {
  auto got = w::decode<v2>(w::encode(as_v1(x)));
  RC_ASSERT(got.engaged());
  RC_ASSERT(same_v1_fields(as_v1(x), *got));
  v2 defaults;
  RC_ASSERT(got->ratio == defaults.ratio);
  RC_ASSERT(got->codes.empty());
  RC_ASSERT(got->owner == defaults.owner);
  RC_ASSERT(got->flag == defaults.flag);
}

RC_GTEST_PROP(wire, an_older_build_keeps_the_fields_it_does_not_know_and_passes_them_on,
              (const v2& x)) {
  auto old = w::decode<v1>(w::encode(x));
  RC_ASSERT(old.engaged());
  RC_ASSERT(same_v1_fields(*old, x));
  // The older build changes what it knows and writes the record again...
  old->name += "!";
  auto again = w::decode<v2>(w::encode(*old));
  RC_ASSERT(again.engaged());
  // ...and the newer fields come through unchanged.
  auto want = x;
  want.name += "!";
  RC_ASSERT(same(*again, want));
}

RC_GTEST_PROP(wire, a_record_without_room_for_unknown_fields_drops_them, (const v2& x)) {
  auto got = w::decode<v1_strict>(w::encode(x));
  RC_ASSERT(got.engaged());
  RC_ASSERT(got->id == x.id);
  RC_ASSERT(got->name == x.name);
}

RC_GTEST_PROP(wire, fields_in_any_order_read_the_same, (const v2& x)) {
  auto fields = fields_of(w::encode(x));
  // Fields of one number keep their order among themselves (a repeated
  // field's elements); the numbers are shuffled.
  auto order = *rc::gen::container<std::vector<int>>(fields.size(), rc::gen::arbitrary<int>());
  std::vector<size_t> idx(fields.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  auto number_of = [&](size_t i) {
    const char* p = fields[i].data();
    w::raw_field f;
    w::next_field(p, p + fields[i].size(), f);
    return f.number;
  };
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    return order[number_of(a) % order.size()] < order[number_of(b) % order.size()];
  });
  std::string shuffled;
  for (auto i : idx) shuffled += fields[i];
  auto got = w::decode<v2>(shuffled);
  RC_ASSERT(got.engaged());
  RC_ASSERT(same(*got, x));
}

RC_GTEST_PROP(wire, damaged_bytes_are_corrupted_or_another_valid_record, (const v2& x)) {
  auto bytes = w::encode(x);
  RC_PRE(!bytes.empty());
  auto at = *rc::gen::inRange<size_t>(0, bytes.size());
  auto cut = *rc::gen::arbitrary<bool>();
  if (cut)
    bytes.resize(at);
  else
    bytes[at] = static_cast<char>(*rc::gen::arbitrary<uint8_t>());
  auto got = w::decode<v2>(bytes);
  if (!got) {
    RC_ASSERT(view(got.error()).code == errc::corrupted);
  } else {
    // What reads is a record of valid values (enums in range, finite numbers).
    RC_ASSERT(static_cast<size_t>(got->state) < enum_names<instance_state>::value.size());
    RC_ASSERT(std::isfinite(got->ratio));
  }
}

TEST(wire, a_scalar_field_written_twice_reads_as_its_last_value) {
  v1_strict a{1, "first"};
  v1_strict b{2, "second"};
  auto got = w::decode<v1_strict>(w::encode(a) + w::encode(b));
  ASSERT_TRUE(got) << to_string(got.error());
  EXPECT_EQ(got->id, 2u);
  EXPECT_EQ(got->name, "second");
}

/// A record of one repeated field: empty, it writes nothing.
struct only_list {
  std::vector<part> parts;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, only_list& x) {
  return f(caf::meta::type_name("t.only_list"), field("parts"), x.parts);
}

TEST(wire, no_bytes_are_a_lost_value_unless_the_record_writes_none) {
  auto lost = w::decode<v1_strict>("");
  ASSERT_FALSE(lost);
  EXPECT_EQ(view(lost.error()).code, errc::corrupted);
  // Found by fuzz_command: a record of an empty list writes no bytes, and
  // what it wrote must read back.
  EXPECT_EQ(w::encode(only_list{}), "");
  auto empty = w::decode<only_list>("");
  ASSERT_TRUE(empty) << to_string(empty.error());
  EXPECT_TRUE(empty->parts.empty());
}

TEST(wire, a_packed_repeated_field_reads_as_its_elements) {
  // Field 7 (codes), packed as other writers of the format may write it:
  // sint32 zigzag 1 -> 2, -2 -> 3, 300 -> 600.
  std::string bytes;
  w::put_tag(bytes, 7, w::length);
  std::string packed;
  for (int32_t c : {1, -2, 300}) w::put_varint(packed, w::zigzag(c));
  w::put_varint(bytes, packed.size());
  bytes += packed;
  auto got = w::decode<v2>(bytes);
  ASSERT_TRUE(got) << to_string(got.error());
  EXPECT_EQ(got->codes, (std::vector<int32_t>{1, -2, 300}));
}

TEST(wire, values_a_field_cannot_hold_are_corrupted) {
  auto expect_corrupted = [](const std::string& bytes, const std::string& why) {
    auto got = w::decode<v2>(bytes);
    ASSERT_FALSE(got) << why;
    EXPECT_EQ(view(got.error()).code, errc::corrupted) << why;
  };
  std::string enum_out;  // state = 8: no such instance_state
  w::put_tag(enum_out, 3, w::varint);
  w::put_varint(enum_out, 8);
  expect_corrupted(enum_out, "an enum beyond its names");
  std::string bool_two;  // flag = 2
  w::put_tag(bool_two, 9, w::varint);
  w::put_varint(bool_two, 2);
  expect_corrupted(bool_two, "a bool of 2");
  std::string wrong_type;  // name (a string) as a varint
  w::put_tag(wrong_type, 2, w::varint);
  w::put_varint(wrong_type, 5);
  expect_corrupted(wrong_type, "a string field as a varint");
  std::string infinite;  // ratio = +inf
  w::put_tag(infinite, 6, w::fixed64);
  double inf = std::numeric_limits<double>::infinity();
  infinite.append(reinterpret_cast<const char*>(&inf), 8);
  expect_corrupted(infinite, "a non-finite double");
  std::string big;  // an int32 code beyond int32
  w::put_tag(big, 7, w::varint);
  w::put_varint(big, w::zigzag(int64_t{1} << 40));
  expect_corrupted(big, "an int32 beyond its range");
  expect_corrupted(std::string("\x12\x05" "ab", 4), "a string longer than the bytes");
  expect_corrupted(std::string("\x00\x01", 2), "field number 0");
}

TEST(wire, a_record_of_a_long_nested_field_keeps_its_length_right) {
  v2 x;
  x.owner.name = std::string(70'000, 'o');  // a length of three varint bytes
  x.parts.push_back(part{std::string(200, 'p'), -1});
  auto got = w::decode<v2>(w::encode(x));
  ASSERT_TRUE(got) << to_string(got.error());
  EXPECT_TRUE(same(*got, x));
}

TEST(wire, the_schema_names_each_field_at_its_number) {
  w::schema_writer s;
  s.add<v2>();
  auto text = s.text("");
  EXPECT_NE(text.find("message v2 {\n  optional uint64 id = 1;\n  optional string name = 2;\n"
                      "  optional instance_state state = 3;\n  repeated part parts = 4;\n"
                      "  map<string, string> labels = 5;\n  optional double ratio = 6;\n"
                      "  repeated sint32 codes = 7;\n  optional part owner = 8;\n"
                      "  optional bool flag = 9;\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("message part {\n  optional string name = 1;\n  optional sint64 at = 2;\n}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("enum instance_state {\n  INSTANCE_STATE_PENDING = 0;\n"), std::string::npos)
      << text;
  EXPECT_TRUE(s.conflicts().empty());
}

}  // namespace
}  // namespace aisched::proto::wire_records
