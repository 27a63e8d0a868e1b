// How aischedctl prints answers: aligned tables and field lists for people,
// indented JSON for `-o json`, and cell text for JSON values.
#pragma once

#include <boost/json/value.hpp>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace aisched::ctl {

/// Columns padded to their widest cell, two spaces apart, header first.
class table {
 public:
  explicit table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

/// `v` as indented JSON (two spaces), ending with a newline.
void print_json(std::ostream& out, const boost::json::value& v);

/// The cell text of field `key` of object `v`: strings as is, null/absent/"" as "-",
/// numbers and booleans as JSON, `{"k":"v"}` as "k=v,...", arrays comma-separated.
std::string cell(const boost::json::value& v, const char* key);

/// Every field of object `v` as "key  value" lines, keys aligned; nested objects
/// and arrays are shown as cells.
void print_fields(std::ostream& out, const boost::json::value& v);

}  // namespace aisched::ctl
