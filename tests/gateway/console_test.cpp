// Tests for gateway/console: the embedded files are served with their content
// types and an ETag (304 on a matching If-None-Match), `/` is index.html, other
// names and methods are refused, and every file the pages reference (the
// index's /console/ links, the modules' imports) is embedded.
#include "gateway/console.hpp"

#include <optional>
#include <regex>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "proto/types.hpp"

namespace aisched::gateway {
namespace {

http_response serve(const std::string& path, std::map<std::string, std::string> headers = {},
                  std::string method = "GET") {
  http_request req;
  req.method = std::move(method);
  req.path = path;
  req.headers = std::move(headers);
  std::optional<http_response> out;
  serve_console(req, [&](http_response r) { out = std::move(r); });
  EXPECT_TRUE(out) << path << ": no synchronous answer";
  return out.value_or(http_response{});
}

std::string header(const http_response& r, const std::string& name) {
  for (auto& [k, v] : r.headers)
    if (k == name) return v;
  return "";
}

std::set<std::string> embedded_names() {
  std::set<std::string> names;
  for (auto& a : console_assets()) names.insert(std::string(a.name));
  return names;
}

TEST(console_test, root_is_the_index_page) {
  auto r = serve("/");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_NE(r.body.find("/console/app.js"), std::string::npos);
  EXPECT_EQ(r.body, serve("/console/index.html").body);
}

TEST(console_test, files_have_their_content_type_and_a_validator) {
  auto js = serve("/console/app.js");
  EXPECT_EQ(js.status, 200u);
  EXPECT_EQ(js.content_type, "text/javascript; charset=utf-8");  // modules need a JS type
  EXPECT_EQ(serve("/console/style.css").content_type, "text/css; charset=utf-8");
  auto etag = header(js, "ETag");
  ASSERT_EQ(etag.size(), 18u) << etag;
  EXPECT_EQ(etag.front(), '"');
  EXPECT_EQ(header(js, "Cache-Control"), "no-cache");
  EXPECT_NE(etag, header(serve("/console/style.css"), "ETag"));

  auto again = serve("/console/app.js", {{"if-none-match", etag}});
  EXPECT_EQ(again.status, 304u);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(serve("/console/app.js", {{"if-none-match", "\"stale\""}}).status, 200u);
}

TEST(console_test, unknown_files_and_other_methods_are_refused) {
  for (auto p : {"/console/nope.js", "/console/", "/console/../gateway/api.cpp", "/console/a/app.js"})
    EXPECT_EQ(serve(p).status, 404u) << p;
  EXPECT_EQ(serve("/", {}, "POST").status, 405u);
  EXPECT_EQ(serve("/console/app.js", {}, "DELETE").status, 405u);
}

TEST(console_test, console_paths_are_recognised) {
  EXPECT_TRUE(is_console_path("/"));
  EXPECT_TRUE(is_console_path("/console/app.js"));
  EXPECT_FALSE(is_console_path("/api/v1/tasks"));
  EXPECT_FALSE(is_console_path("/healthz"));
  EXPECT_FALSE(is_console_path("/consoles"));
}

TEST(console_test, every_referenced_file_is_embedded) {
  auto names = embedded_names();
  ASSERT_TRUE(names.count("index.html"));
  static const std::regex link(R"re(/console/([A-Za-z0-9_.-]+))re");
  static const std::regex import(R"re(from\s+'\./([A-Za-z0-9_.-]+)')re");
  for (auto& a : console_assets()) {
    std::string text(a.bytes);
    EXPECT_FALSE(text.empty()) << a.name;
    const auto& re = a.name == "index.html" ? link : import;
    for (std::sregex_iterator i(text.begin(), text.end(), re), end; i != end; ++i)
      EXPECT_TRUE(names.count((*i)[1])) << a.name << " references " << (*i)[1]
                                        << ", which is not in gateway/CMakeLists.txt's CONSOLE_FILES";
  }
}

// Issue #43: the new-task form defaulted overlap to skip while the API defaults to
// allow, so the same task made in the console and by a POST behaved differently.
TEST(console_test, the_task_form_defaults_overlap_as_the_api_does) {
  std::string tasks;
  for (auto& a : console_assets())
    if (a.name == "tasks.js") tasks = std::string(a.bytes);
  ASSERT_FALSE(tasks.empty()) << "tasks.js is not embedded";
  const std::string api_default(proto::name_of(proto::task{}.overlap));
  static const std::regex defaults(R"re((?:overlap: |t\.overlap \|\| )'([a-z_]+)')re");
  size_t seen = 0;
  for (std::sregex_iterator i(tasks.begin(), tasks.end(), defaults), end; i != end; ++i, ++seen)
    EXPECT_EQ((*i)[1], api_default) << "tasks.js: " << (*i)[0];
  EXPECT_EQ(seen, 2u) << "the form's default task and the select's fallback";
  EXPECT_NE(tasks.find("'default " + api_default), std::string::npos)
      << "the form says which overlap is the default";
}

}  // namespace
}  // namespace aisched::gateway
