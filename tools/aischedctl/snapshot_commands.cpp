// `cluster snapshot save FILE` and `snapshot status FILE` (README "Backups"):
// saving streams GET /api/v1/cluster/snapshot from the leader (found through
// GET /api/v1/cluster when --server is another member) into FILE.tmp, syncs it,
// reads it back through the backup reader (common/backup_file.hpp: trailer and
// checksum) and only then renames it to FILE. Status reads a file offline: no
// node is asked.
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>

#include "common/durable_file.hpp"
#include "common/backup_file.hpp"
#include "proto/errors.hpp"
#include "proto/time.hpp"
#include "tools/aischedctl/commands.hpp"
#include "tools/aischedctl/output.hpp"

namespace aisched::ctl {

namespace json = boost::json;

namespace {

/// The gateway address of the leader as GET /api/v1/cluster shows it: ""
/// when the member asked leads itself (or the leader's address is unknown:
/// the route then answers not_leader, naming it).
std::string leader_base(session& s) {
  json::value v;
  auto reply = s.http().call("GET", "/api/v1/cluster");
  if (reply.status != 200) return "";
  boost::system::error_code ec;
  v = json::parse(reply.body, ec);
  if (ec || !v.is_object()) return "";
  auto* members = v.as_object().if_contains("members");
  if (!members || !members->is_array()) return "";
  for (auto& m : members->as_array()) {
    if (cell(m, "role") != "leader" || cell(m, "self") == "true") continue;
    auto addr = cell(m, "http_addr");
    if (addr == "-") return "";
    auto& server = s.options().server;
    auto scheme = server.substr(0, server.find("://"));
    return (scheme == server ? std::string("http") : scheme) + "://" + addr;
  }
  return "";
}

std::string mib(uint64_t bytes) {
  char out[32];
  std::snprintf(out, sizeof out, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return out;
}

json::value summary_json(const std::string& file, const backup::backup_summary& b) {
  auto& h = b.header;
  json::array members, checks;
  for (auto& m : h.members)
    members.push_back(json::object{{"id", m.id}, {"voter", m.voter},
                                   {"cluster_addr", m.cluster_addr}, {"http_addr", m.http_addr}});
  for (auto& k : h.key_checks) checks.push_back(json::string(k));
  json::object counts;
  for (auto& [name, n] : b.records_by_column) counts[name] = n;
  return json::object{{"file", file},
                      {"layout", h.layout},
                      {"data_format", h.data_format},
                      {"written_by", h.written_by},
                      {"cluster_id", h.cluster_id},
                      {"node_id", h.node_id},
                      {"index", h.index},
                      {"term", h.term},
                      {"created_at", format_rfc3339(h.created_at_ms)},
                      {"key_checks", std::move(checks)},
                      {"members", std::move(members)},
                      {"records", b.records},
                      {"records_by_column", std::move(counts)},
                      {"bytes", b.bytes},
                      {"sha256", b.checksum},
                      {"checksum", "ok"}};
}

void print_summary(const std::string& file, const backup::backup_summary& b) {
  auto& h = b.header;
  std::string members, checks;
  for (auto& m : h.members)
    members += (members.empty() ? "" : ",") + m.id + (m.voter ? "" : " (learner)");
  for (auto& k : h.key_checks) checks += (checks.empty() ? "" : ",") + k;
  table t({"FIELD", "VALUE"});
  t.add({"file", file});
  t.add({"format", "layout " + std::to_string(h.layout) + ", data format " +
                       std::to_string(h.data_format) + ", written by aisched " + h.written_by});
  t.add({"cluster_id", h.cluster_id.empty() ? "-" : h.cluster_id});
  t.add({"saved_by", h.node_id});
  t.add({"created_at", format_rfc3339(h.created_at_ms)});
  t.add({"index", std::to_string(h.index)});
  t.add({"term", h.term == 0 ? "- (not at hand)" : std::to_string(h.term)});
  t.add({"members", "{" + members + "}"});
  t.add({"key_check", checks.empty() ? "- (no secrets)" : checks});
  t.add({"size", std::to_string(b.bytes) + " bytes (" + mib(b.bytes) + ")"});
  t.print(std::cout);
  std::cout << "\n";
  table counts({"COLUMN", "RECORDS"});
  for (auto& [name, n] : b.records_by_column) counts.add({name, std::to_string(n)});
  counts.add({"total", std::to_string(b.records)});
  counts.print(std::cout);
  std::cout << "\nchecksum: ok (sha256 " << b.checksum << ")\n";
}

/// Reads `path` whole through the backup reader. Tools do not know the
/// storage layer's current format: any data format is shown, none refused.
caf::expected<backup::backup_summary> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error(errc::invalid_argument, "FILE",
                      "cannot read " + path + ": " + std::strerror(errno));
  return backup::read_backup(in, std::numeric_limits<uint32_t>::max());
}

int snapshot_status(session& s, const std::string& path) {
  auto b = read_file(path);
  if (!b) {
    auto v = view(b.error());
    if (!s.json_output()) std::cout << "checksum: FAILED\n";
    return report_error(v.code == errc::invalid_argument ? exit_usage : exit_invalid,
                        to_string(v.code), v.message, v.field);
  }
  if (s.json_output())
    print_json(std::cout, summary_json(path, *b));
  else
    print_summary(path, *b);
  return exit_ok;
}

/// Writes what the stream hands over into an open file, with a progress line
/// on a terminal.
struct sink {
  int fd = -1;
  uint64_t bytes = 0;
  int error = 0;
  bool progress = isatty(STDERR_FILENO) != 0;
  uint64_t shown = 0;

  bool write(std::string_view data) {
    while (!data.empty()) {
      auto n = ::write(fd, data.data(), data.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error = n < 0 ? errno : EIO;
        return false;
      }
      data.remove_prefix(static_cast<size_t>(n));
      bytes += static_cast<uint64_t>(n);
    }
    if (progress && bytes - shown >= (1 << 20)) {
      shown = bytes;
      std::cerr << "\rsaving: " << mib(bytes) << std::flush;
    }
    return true;
  }
};

int snapshot_save(session& s, const std::string& path) {
  auto tmp = path + ".tmp";
  auto leader = leader_base(s);
  std::unique_ptr<tools::http_client> other;
  if (!leader.empty())
    other = std::make_unique<tools::http_client>(
        leader, tools::http_client_options{
                    s.options().token,
                    std::chrono::milliseconds(static_cast<int64_t>(s.options().timeout_s * 1000))});
  auto& client = other ? *other : s.http();
  sink out;
  // O_EXCL: a second save to the same FILE at once would write into this one.
  out.fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out.fd < 0 && errno == EEXIST)
    return report_error(exit_usage, "usage",
                        tmp + " exists: another save to " + path +
                            " is under way, or one was interrupted (remove " + tmp + ")");
  if (out.fd < 0)
    return report_error(exit_usage, "usage", "cannot create " + tmp + ": " + std::strerror(errno));
  auto reply = client.stream("/api/v1/cluster/snapshot",
                             [&out](std::string_view data) { return out.write(data); });
  if (out.progress && out.shown > 0) std::cerr << "\n";
  bool synced = out.error == 0 && ::fsync(out.fd) == 0;
  if (out.error == 0 && !synced) out.error = errno;
  ::close(out.fd);
  auto give_up = [&tmp](int rc) {
    ::unlink(tmp.c_str());
    return rc;
  };
  if (out.error != 0)
    return give_up(report_error(exit_server_error, "write_failed",
                                "cannot write " + tmp + ": " + std::strerror(out.error)));
  if (reply.status == 0 && out.bytes > 0)
    return give_up(report_error(exit_server_error, "incomplete_snapshot",
                                "the transfer broke after " + std::to_string(out.bytes) +
                                    " bytes, nothing was kept: " + reply.body));
  if (reply.status < 200 || reply.status >= 300) {
    if (other) {
      session leader_session(s.options());
      return give_up(leader_session.fail(reply));
    }
    return give_up(s.fail(reply));
  }
  // Read back what reached the disk: a save cut short (the leader died, the
  // connection broke) has no trailer, a damaged one fails its checksum.
  auto b = read_file(tmp);
  if (!b)
    return give_up(report_error(exit_server_error, "incomplete_snapshot",
                                "the saved file does not verify, nothing was kept: " +
                                    view(b.error()).message));
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return give_up(report_error(exit_server_error, "write_failed",
                                "cannot rename " + tmp + " to " + path + ": " +
                                    std::strerror(errno)));
  // The name too must survive a power loss before "saved" is said.
  auto dir = std::filesystem::path(path).parent_path().string();
  if (int err = sync_directory(dir.empty() ? "." : dir))
    return report_error(exit_server_error, "write_failed",
                        "saved " + path + " but cannot sync its directory: " +
                            std::strerror(err));
  if (s.json_output()) {
    print_json(std::cout, summary_json(path, *b));
  } else {
    std::cout << "saved " << path << ": the state of cluster " << b->header.cluster_id
              << " at index " << b->header.index << " (term " << b->header.term << "), "
              << b->records << " records, " << mib(b->bytes) << ", sha256 " << b->checksum
              << " (verified)\n";
  }
  return exit_ok;
}

}  // namespace

void add_snapshot_commands(CLI::App& app, action& chosen) {
  auto file = std::make_shared<std::string>();
  auto* cluster = app.get_subcommand("cluster");
  auto* snap = cluster->add_subcommand("snapshot", "Backups of the cluster's state");
  snap->require_subcommand(1);
  auto* save = snap->add_subcommand(
      "save", "Save a consistent snapshot from the leader to FILE (written as FILE.tmp, "
              "verified, then renamed)");
  save->add_option("FILE", *file, "Where to save it")->required();
  save->callback([&chosen, file] {
    chosen = [file](session& s) { return snapshot_save(s, *file); };
  });

  auto* offline = app.add_subcommand("snapshot", "Inspect a saved snapshot (offline)");
  offline->require_subcommand(1);
  auto* status = offline->add_subcommand(
      "status", "Print a snapshot's header, its records per column and its checksum verdict");
  status->add_option("FILE", *file, "The snapshot file")->required();
  status->callback([&chosen, file] {
    chosen = [file](session& s) { return snapshot_status(s, *file); };
  });
}

}  // namespace aisched::ctl
