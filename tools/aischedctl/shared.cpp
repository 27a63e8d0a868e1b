// What the subcommand groups share: paged list routes (`{"items": [...],
// "next_cursor": "..."}`) and actions answered with one object; see commands.hpp.
#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <iostream>

#include "tools/aischedctl/commands.hpp"
#include "tools/aischedctl/output.hpp"

namespace aisched::ctl {

namespace json = boost::json;

void add_page_options(CLI::App& cmd, page_args& paging) {
  cmd.add_option("--limit", paging.limit, "Page size (1-1000; default: the server's)")
      ->check(CLI::Range(1, 1000));
  cmd.add_option("--cursor", paging.cursor, "Start at this cursor (printed after a page)");
  cmd.add_flag("--all", paging.all, "Fetch every page, not just one");
}

int fetch_pages(session& s, const std::string& path, std::vector<std::string> query,
                const page_args& paging, json::array& items, std::string& next_cursor) {
  if (paging.limit > 0) query.push_back("limit=" + std::to_string(paging.limit));
  auto cursor = paging.cursor;
  for (;;) {
    auto target = path;
    char sep = '?';
    for (auto& q : query) target += sep + q, sep = '&';
    if (!cursor.empty()) target += sep + ("cursor=" + url_encode(cursor));
    json::value page;
    if (int rc = s.get(target, page); rc != exit_ok) return rc;
    auto* got = page.is_object() ? page.get_object().if_contains("items") : nullptr;
    if (!got || !got->is_array())
      return report_error(exit_server_error, "bad_response", "no items in the answer of " + target);
    for (auto& x : got->get_array()) items.push_back(x);
    auto* next = page.get_object().if_contains("next_cursor");
    next_cursor = next && next->is_string() ? std::string(next->get_string()) : "";
    // A page with no items ends the walk even with a cursor: nothing can follow.
    if (!paging.all || next_cursor.empty() || got->get_array().empty()) return exit_ok;
    cursor = next_cursor;
  }
}

void hint_next_page(const std::string& next_cursor) {
  if (!next_cursor.empty()) std::cerr << "more: --cursor " << next_cursor << " (or --all)\n";
}

int act(session& s, const std::string& method, const std::string& target,
        const std::function<std::string(const json::value&)>& summary) {
  json::value answer;
  if (int rc = s.request(method, target, "", answer)) return rc;
  if (s.json_output())
    print_json(std::cout, answer);
  else
    std::cout << summary(answer) << '\n';
  return exit_ok;
}

}  // namespace aisched::ctl
