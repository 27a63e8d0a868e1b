// Serving the embedded console files; see console.hpp.
#include "gateway/console.hpp"

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include "gateway/api.hpp"
#include "proto/errors.hpp"

namespace aisched::gateway {

namespace {

constexpr std::string_view prefix = "/console/";

std::string_view content_type_of(std::string_view name) {
  auto ends_with = [&](std::string_view ext) {
    return name.size() >= ext.size() && name.substr(name.size() - ext.size()) == ext;
  };
  // ES modules load only with a JavaScript MIME type.
  if (ends_with(".js") || ends_with(".mjs")) return "text/javascript; charset=utf-8";
  if (ends_with(".html")) return "text/html; charset=utf-8";
  if (ends_with(".css")) return "text/css; charset=utf-8";
  if (ends_with(".svg")) return "image/svg+xml";
  if (ends_with(".json")) return "application/json";
  return "application/octet-stream";
}

/// A strong validator: FNV-1a 64 of the bytes, quoted as HTTP wants it.
std::string etag_of(std::string_view bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[24];
  std::snprintf(buf, sizeof buf, "\"%016llx\"", static_cast<unsigned long long>(h));
  return buf;
}

struct served_file {
  std::string_view bytes;
  std::string content_type;
  std::string etag;
};

/// Name -> file, built once (thread-safe static initialisation).
const std::map<std::string_view, served_file>& files() {
  static const auto table = [] {
    std::map<std::string_view, served_file> m;
    for (auto& a : console_assets())
      m[a.name] = served_file{a.bytes, std::string(content_type_of(a.name)), etag_of(a.bytes)};
    return m;
  }();
  return table;
}

}  // namespace

bool is_console_path(std::string_view path) {
  return path == "/" || path.empty() || path.rfind(prefix, 0) == 0;
}

void serve_console(const http_request& req, const reply_fn& reply) {
  if (req.method != "GET")
    return reply(error_response(405, "method_not_allowed", "method not allowed"));
  std::string_view path = req.path;
  auto name = path.size() <= 1 ? std::string_view("index.html") : path.substr(prefix.size());
  auto f = files().find(name);
  if (f == files().end())
    return reply(error_response(
        make_error(errc::not_found, "", "no console file " + req.path)));
  auto& file = f->second;
  http_response res;
  res.content_type = file.content_type;
  res.headers = {{"ETag", file.etag}, {"Cache-Control", "no-cache"}};
  if (auto h = req.headers.find("if-none-match"); h != req.headers.end() && h->second == file.etag) {
    res.status = 304;
    return reply(std::move(res));
  }
  res.status = 200;
  res.body = std::string(file.bytes);
  reply(std::move(res));
}

void get_console(route_call& c) { serve_console(c.req, c.reply); }

}  // namespace aisched::gateway
