// The Protocol Buffers schema (.proto, proto2) the wire codec implies
// (proto/wire.hpp): for each record its message, field n named as inspect()
// names its n-th value. Written, never read: proto/schema/aisched.proto is
// this output for every record and command (tests/compat/schema_test keeps it
// current and checks that no number ever changes meaning), so that protoc and
// other languages read what aisched stores.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <caf/meta/annotation.hpp>
#include <caf/meta/type_name.hpp>

#include "proto/field.hpp"
#include "proto/wire.hpp"

namespace aisched::proto::wire {

/// The messages and enums of a schema, by name, each as its .proto text.
class schema_writer {
 public:
  /// Adds T's message and those of every record inside it; its name.
  template <class T>
  std::string add() {
    T x{};
    collector c{*this};
    inspect(c, x);
    if (c.name.empty()) c.name = "unnamed";
    auto text = "message " + c.name + " {\n" + c.body + "}\n";
    auto [i, fresh] = messages_.emplace(c.name, text);
    if (!fresh && i->second != text)
      conflicts_.push_back("two records are called " + c.name);
    return c.name;
  }

  /// The schema: a header, then every enum and message by name.
  std::string text(std::string_view header) const {
    std::string out(header);
    out += "syntax = \"proto2\";\n\npackage aisched;\n";
    for (auto& [name, text] : enums_) out += "\n" + text;
    for (auto& [name, text] : messages_) out += "\n" + text;
    return out;
  }

  /// What cannot be written as one schema (two records of one name).
  const std::vector<std::string>& conflicts() const { return conflicts_; }

 private:
  struct collector {
    using result_type = bool;
    static constexpr bool reads_state = true;
    static constexpr bool writes_state = false;

    schema_writer& schema;
    std::string name;
    std::string body;
    std::string next_name;
    bool next_bytes = false;
    uint32_t next = 1;

    template <class... Ts>
    bool operator()(Ts&&... xs) {
      (item(xs), ...);
      return true;
    }

    template <class T>
    void item(T& x) {
      using U = std::decay_t<T>;
      if constexpr (std::is_same_v<U, caf::meta::type_name_t>) {
        std::string_view n = x.value;
        if (auto dot = n.rfind('.'); dot != std::string_view::npos) n.remove_prefix(dot + 1);
        name = std::string(n);
      } else if constexpr (std::is_same_v<U, field_t>) {
        next_name = x.value;
        next_bytes = x.bytes;
      } else if constexpr (std::is_same_v<U, keep_unknown_t>) {
        body += "  // Fields of later builds are kept and written again.\n";
      } else if constexpr (caf::meta::is_annotation<U>::value) {
        // callbacks
      } else {
        auto n = next++;
        auto field_name = next_name.empty() ? "field_" + std::to_string(n) : next_name;
        next_name.clear();
        auto type = schema.field_type<U>();
        if (next_bytes) type = type.substr(0, type.rfind(' ')) + " bytes";
        next_bytes = false;
        body += "  " + type + " " + field_name + " = " + std::to_string(n) + ";\n";
      }
    }
  };

  /// "optional T", "repeated T" or "map<K, V>" for a field of type T.
  template <class T>
  std::string field_type() {
    if constexpr (is_vector<T>::value) return "repeated " + type_name<typename T::value_type>();
    else if constexpr (is_map<T>::value)
      return "map<" + type_name<typename T::key_type>() + ", " +
             type_name<typename T::mapped_type>() + ">";
    else return "optional " + type_name<T>();
  }

  /// The schema's name of the type T.
  template <class T>
  std::string type_name() {
    if constexpr (std::is_same_v<T, bool>) return "bool";
    else if constexpr (std::is_same_v<T, double>) return "double";
    else if constexpr (std::is_same_v<T, float>) return "float";
    else if constexpr (std::is_same_v<T, std::string>) return "string";
    else if constexpr (std::is_enum_v<T>) return enum_type<T>();
    else if constexpr (std::is_integral_v<T>) {
      if constexpr (std::is_unsigned_v<T>) return sizeof(T) > 4 ? "uint64" : "uint32";
      else return sizeof(T) > 4 ? "sint64" : "sint32";
    } else if constexpr (is_pair<T>::value) {
      auto k = type_name<typename T::first_type>();
      auto v = type_name<typename T::second_type>();
      auto n = "pair_" + k + "_" + v;
      messages_.emplace(n, "message " + n + " {\n  optional " + k + " first = 1;\n  optional " + v +
                               " second = 2;\n}\n");
      return n;
    } else {
      return add<T>();
    }
  }

  /// An enum with names (proto::enum_names) as a .proto enum, its values
  /// prefixed by its name as protoc wants; one without as its integer.
  template <class E>
  std::string enum_type() {
    if constexpr (has_enum_names<E>::value) {
      std::string n(enum_names<E>::name);
      std::string upper;
      for (char c : n) upper += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
      std::string text = "enum " + n + " {\n";
      const auto& names = enum_names<E>::value;
      for (size_t i = 0; i < names.size(); ++i) {
        std::string v;
        for (char c : names[i]) v += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
        text += "  " + upper + "_" + v + " = " + std::to_string(i) + ";\n";
      }
      enums_.emplace(n, text + "}\n");
      return n;
    } else {
      return sizeof(std::underlying_type_t<E>) > 4 ? "uint64" : "uint32";
    }
  }

  std::map<std::string, std::string> messages_;
  std::map<std::string, std::string> enums_;
  std::vector<std::string> conflicts_;
};

}  // namespace aisched::proto::wire
