// The wire codec over every real record and command (proto/wire.hpp), and the
// schema it implies (proto/schema/aisched.proto):
// - every golden example and every command reads back from its wire bytes as itself;
// - protoc reads those bytes with the schema, and what protoc writes back reads as the example;
// - proto/schema/aisched.proto is what this build generates (AISCHED_WRITE_SCHEMA=1 rewrites it);
// - no field number of any schema pinned in schema/ changed its name or type.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "compat/golden_case.hpp"
#include "compat/golden_examples.hpp"
#include "proto/codec.hpp"
#include "proto/command_visit.hpp"
#include "proto/commands.hpp"
#include "proto/hex.hpp"
#include "proto/wire.hpp"
#include "proto/wire_schema.hpp"

namespace aisched::compat {
namespace {

namespace fs = std::filesystem;
using namespace aisched::proto;

const fs::path compat_dir{AISCHED_GOLDEN_DIR};
const fs::path schema_file = compat_dir / ".." / ".." / "proto" / "schema" / "aisched.proto";

/// One record or command: its message name, its wire bytes, and whether bytes
/// read back as it ("" when they do).
struct wire_case {
  std::string message;
  std::string bytes;
  std::function<std::string(const std::string&)> check;
};

/// The name of T's message in the schema.
template <class T>
std::string message_of() {
  wire::schema_writer s;
  return s.add<T>();
}

template <class T>
wire_case case_of(const T& x) {
  return {message_of<T>(), wire::encode(x), [x](const std::string& bytes) -> std::string {
            auto got = wire::decode<T>(bytes);
            if (!got) return "does not decode: " + view(got.error()).message;
            // CAF's encoding holds every field: equal bytes, equal records.
            if (format_1::encode(*got) != format_1::encode(x)) return "reads back as another value";
            return {};
          }};
}

template <class... Ts>
void add_commands(command_list<Ts...>, wire::schema_writer& s) {
  (s.add<Ts>(), ...);
}

/// Every stored record and every command, as the schema lists them.
std::string generated_schema() {
  wire::schema_writer s;
  for_each_record([&](const std::string&, const auto& x) { s.add<std::decay_t<decltype(x)>>(); });
  s.add<log_entry>();
  add_commands(all_commands{}, s);
  EXPECT_TRUE(s.conflicts().empty()) << s.conflicts().front();
  return s.text(
      "// Generated from the records' inspect() (proto/wire.hpp, proto/wire_schema.hpp): do not\n"
      "// edit. Rewritten by `AISCHED_WRITE_SCHEMA=1 build/tests/compat/compat_golden_test\n"
      "// --gtest_filter='wire_schema.*'` after a field is added.\n"
      "//\n"
      "// The evolution rules: a field's number is its place in inspect(); fields are only\n"
      "// appended, never reordered, removed or given another type. A reader leaves an\n"
      "// absent field at its default and keeps fields beyond those it knows. Every schema\n"
      "// in tests/compat/schema/ is pinned: each of its fields stays here as it is.\n\n");
}

std::vector<wire_case> cases() {
  std::vector<wire_case> out;
  for_each_record([&](const std::string&, const auto& x) { out.push_back(case_of(x)); });
  for (auto& e : example_log_entries()) {
    auto c = visit_command(e.cmd, [](const auto& x) -> caf::expected<wire_case> {
      return case_of(x);
    });
    if (!c) ADD_FAILURE() << "an example command does not decode: " << to_string(c.error());
    else out.push_back(std::move(*c));
  }
  return out;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(wire_schema, every_record_and_command_reads_back_from_its_wire_bytes) {
  auto all = cases();
  EXPECT_GE(all.size(), 15u + 30u);
  for (auto& c : all) {
    if (c.message != "noop") EXPECT_FALSE(c.bytes.empty()) << c.message;
    EXPECT_EQ(c.check(c.bytes), "") << c.message << ": " << to_hex(c.bytes);
  }
}

TEST(wire_schema, the_schema_in_proto_is_what_this_build_generates) {
  auto text = generated_schema();
  if (std::getenv("AISCHED_WRITE_SCHEMA") != nullptr) {
    fs::create_directories(schema_file.parent_path());
    std::ofstream(schema_file, std::ios::binary) << text;
  }
  EXPECT_EQ(read_all(schema_file), text)
      << schema_file << " is not what this build generates: a field was added without "
      << "regenerating it (see its header), or a field moved";
}

/// The fields of each message and the values of each enum in a schema's
/// text: "message.number" -> the line that declares it.
std::map<std::string, std::string> declarations(const std::string& text) {
  std::map<std::string, std::string> out;
  static const std::regex block(R"(^(message|enum) (\w+) \{$)");
  static const std::regex field_line(R"(^  (.+) = (\d+);$)");
  std::istringstream in(text);
  std::string line, current;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, block)) current = m[2];
    else if (line == "}") current.clear();
    else if (!current.empty() && std::regex_match(line, m, field_line))
      out[current + "." + std::string(m[2])] = m[1];
  }
  return out;
}

TEST(wire_schema, every_pinned_field_keeps_its_number_name_and_type) {
  auto now = declarations(generated_schema());
  size_t pinned = 0;
  for (auto& entry : fs::directory_iterator(compat_dir / "schema")) {
    if (entry.path().extension() != ".proto") continue;
    for (auto& [key, decl] : declarations(read_all(entry.path()))) {
      ++pinned;
      auto i = now.find(key);
      if (i == now.end())
        ADD_FAILURE() << entry.path().filename() << ": " << key << " (" << decl
                      << ") is gone: a field is never removed";
      else
        EXPECT_EQ(i->second, decl) << entry.path().filename() << ": " << key
                                   << " changed: a number never changes its field";
    }
  }
  EXPECT_GT(pinned, 250u) << "the pinned schemas in " << compat_dir / "schema" << " are missing";
}

/// Runs `command` in a shell; its exit code.
int shell(const std::string& command) { return std::system(command.c_str()); }

TEST(wire_schema, protoc_reads_every_record_with_the_schema) {
  auto dir = fs::temp_directory_path() / ("aisched-wire-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto proto_dir = schema_file.parent_path().string();
  for (auto& c : cases()) {
    auto in = dir / "in.bin", text = dir / "out.txt", back = dir / "back.bin",
         err = dir / "err.txt";
    std::ofstream(in, std::ios::binary) << c.bytes;
    auto decode = "protoc --proto_path=" + proto_dir + " --decode=aisched." + c.message +
                  " aisched.proto < " + in.string() + " > " + text.string() + " 2> " + err.string();
    ASSERT_EQ(shell(decode), 0) << c.message << ": protoc does not read it:\n" << read_all(err);
    EXPECT_EQ(read_all(err), "") << c.message;
    // protoc knew every field: none printed by number only.
    std::istringstream printed(read_all(text));
    static const std::regex by_number(R"(^\s*\d+: .*)");
    for (std::string line; std::getline(printed, line);)
      EXPECT_FALSE(std::regex_match(line, by_number)) << c.message << ": " << line;
    auto encode = "protoc --proto_path=" + proto_dir + " --encode=aisched." + c.message +
                  " aisched.proto < " + text.string() + " > " + back.string();
    ASSERT_EQ(shell(encode), 0) << c.message;
    EXPECT_EQ(c.check(read_all(back)), "") << c.message << ": what protoc writes\n"
                                           << read_all(text);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace aisched::compat
