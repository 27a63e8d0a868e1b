// What a real `aisched` node (started as `make run` does) makes of odd or
// hostile requests: error bodies are valid UTF-8 JSON whatever bytes the path
// carries, a JSON key given twice is 400 naming it, an Idempotency-Key reused
// with another body is 422 (the same body still answers the first task), '+'
// in a path is a '+' (a space only in a query), trace ids are random: two
// nodes' first runs share neither half, and a client trickling a request's
// head or body loses its connection (slowloris) while an idle kept-alive one
// keeps it. Waits poll with a deadline.
#include <gtest/gtest.h>
#include <poll.h>

#include <boost/json.hpp>
#include <future>
#include <string>
#include <thread>

#include "support/node_process.hpp"
#include "support/test_helpers.hpp"

using namespace aisched::test;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

using headers = std::map<std::string, std::string>;

const std::string fffd = "\xEF\xBF\xBD";

/// The error object of an answer; a test failure (and {}) if the body is not
/// JSON (Boost.JSON's parser also refuses invalid UTF-8) or has none.
json::object error_of(const http_result& r) {
  boost::system::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec || !v.is_object() || !v.as_object().contains("error") ||
      !v.at("error").is_object()) {
    ADD_FAILURE() << "not a JSON error body (" << ec.message() << "): " << r.body;
    return {};
  }
  return v.at("error").as_object();
}

/// A connected loopback TCP socket (-1 on failure); the caller closes it.
int connect_to(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// Whether the peer closed `fd`, waiting up to `wait` for it (what it sent
/// before closing is read and dropped).
bool closed_within(int fd, std::chrono::milliseconds wait) {
  auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count()))) > 0) {
      char buf[4096];
      if (::recv(fd, buf, sizeof buf, 0) <= 0) return true;
      continue;
    }
    if (left.count() <= 0) return false;
  }
}

/// Sends `text` after `head` one byte a second on a new connection until the
/// server closes it; the seconds that took, or -1 if it was still open after
/// `limit` (or the connection failed).
double seconds_until_closed_trickling(uint16_t port, const std::string& head,
                                      const std::string& text, std::chrono::seconds limit) {
  int fd = connect_to(port);
  if (fd < 0) return -1;
  auto start = std::chrono::steady_clock::now();
  double took = -1;
  bool sent = head.empty() || ::send(fd, head.data(), head.size(), MSG_NOSIGNAL) ==
                                  static_cast<ssize_t>(head.size());
  for (size_t i = 0; sent && std::chrono::steady_clock::now() - start < limit; ++i) {
    if (::send(fd, &text[i % text.size()], 1, MSG_NOSIGNAL) != 1 || closed_within(fd, 1s)) {
      took = seconds_since(start);
      break;
    }
  }
  ::close(fd);
  return took;
}

/// One GET on a kept-alive connection `fd`: the status line of its answer
/// ("" if none came within 10 s).
std::string status_line_of_get(int fd, const std::string& target) {
  auto req = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size()))
    return "";
  std::string got;
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (got.find("\r\n\r\n") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return "";
    got.append(buf, static_cast<size_t>(n));
  }
  // The body of /readyz is short: whatever of it came with the head is dropped too.
  return got.substr(0, got.find("\r\n"));
}

class hygiene_node : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = std::make_unique<node_process>(dir_.path() + "/data");
    ASSERT_TRUE(node_->running());
    port_ = node_->http_port();
    ASSERT_TRUE(await_ready(port_)) << http_call(port_, "GET", "/readyz").body;
  }
  temp_dir dir_;
  std::unique_ptr<node_process> node_;
  uint16_t port_ = 0;
};

}  // namespace

TEST_F(hygiene_node, error_bodies_are_valid_utf8_json_whatever_bytes_the_path_carries) {
  for (auto [method, target] : {std::pair{"POST", "/api/v1/workers/%ff/drain"},
                                std::pair{"GET", "/api/v1/%ff%fe%c3"},
                                std::pair{"GET", "/api/v1/tasks/%c0%af%ed%a0%80"},
                                std::pair{"GET", "/api/v1/instances/%f4%90%80%80"}}) {
    auto r = http_call(port_, method, target);
    EXPECT_GE(r.status, 400u) << target;
    auto e = error_of(r);
    EXPECT_FALSE(str(e, "code").empty()) << target << ": " << r.body;
  }
  auto drain = http_call(port_, "POST", "/api/v1/workers/%ff/drain");
  EXPECT_EQ(drain.status, 404u) << drain.body;
  EXPECT_NE(str(error_of(drain), "message").find(fffd), std::string::npos)
      << "the byte is shown as U+FFFD: " << drain.body;
}

TEST_F(hygiene_node, a_json_key_given_twice_is_400_naming_it) {
  auto r = http_call(port_, "POST", "/api/v1/tasks", R"({"name":"a","kind":"noop","name":"b"})");
  EXPECT_EQ(r.status, 400u) << r.body;
  auto e = error_of(r);
  EXPECT_EQ(str(e, "code"), "invalid_argument");
  EXPECT_EQ(str(e, "field"), "name");
  EXPECT_NE(str(e, "message").find("duplicate"), std::string::npos) << r.body;
  auto nested = http_call(port_, "POST", "/api/v1/tasks",
                          R"({"name":"a","kind":"noop","retry":{"policy":"none","policy":"fixed"}})");
  EXPECT_EQ(nested.status, 400u) << nested.body;
  EXPECT_EQ(str(error_of(nested), "field"), "retry.policy");
  auto tasks = http_call(port_, "GET", "/api/v1/tasks");
  EXPECT_EQ(parse(tasks).at("items").as_array().size(), 0u) << "nothing was created";
}

TEST_F(hygiene_node, an_idempotency_key_reused_with_another_body_is_422) {
  headers key{{"Idempotency-Key", "create-nightly-1"}};
  auto first = http_call(port_, "POST", "/api/v1/tasks", R"({"name":"nightly","kind":"noop"})",
                         10s, key);
  ASSERT_EQ(first.status, 201u) << first.body;
  auto id = num(parse(first).as_object(), "id");
  // A retry of the same request (re-serialized) answers with the first task.
  auto retry = http_call(port_, "POST", "/api/v1/tasks", R"({ "kind": "noop", "name": "nightly" })",
                         10s, key);
  ASSERT_EQ(retry.status, 201u) << retry.body;
  EXPECT_EQ(num(parse(retry).as_object(), "id"), id);
  // Another request under the same key is refused, naming the header.
  auto other = http_call(port_, "POST", "/api/v1/tasks", R"({"name":"weekly","kind":"noop"})",
                         10s, key);
  EXPECT_EQ(other.status, 422u) << other.body;
  auto e = error_of(other);
  EXPECT_EQ(str(e, "code"), "idempotency_key_reused");
  EXPECT_EQ(str(e, "field"), "Idempotency-Key");
  EXPECT_NE(str(e, "message").find("Idempotency-Key"), std::string::npos) << other.body;
  auto tasks = parse(http_call(port_, "GET", "/api/v1/tasks"));
  ASSERT_EQ(tasks.at("items").as_array().size(), 1u) << json::serialize(tasks);
  EXPECT_EQ(str(tasks.at("items").as_array().at(0).as_object(), "name"), "nightly");
}

TEST_F(hygiene_node, a_plus_in_a_path_is_a_plus_and_in_a_query_a_space) {
  auto reg = http_call(port_, "POST", "/api/v1/workers",
                       R"({"id":"w+1","callback_url":"http://127.0.0.1:9/","max_load":1})");
  ASSERT_EQ(reg.status, 201u) << reg.body;
  auto drain = http_call(port_, "POST", "/api/v1/workers/w+1/drain");
  EXPECT_EQ(drain.status, 200u) << "the path named worker 'w 1': " << drain.body;
  auto escaped = http_call(port_, "POST", "/api/v1/workers/w%2B1/undrain");
  EXPECT_EQ(escaped.status, 200u) << escaped.body;

  ASSERT_EQ(http_call(port_, "POST", "/api/v1/tasks", R"({"name":"nightly backup","kind":"noop"})")
                .status,
            201u);
  auto found = parse(http_call(port_, "GET", "/api/v1/tasks?name=nightly+backup"));
  EXPECT_EQ(found.at("items").as_array().size(), 1u) << json::serialize(found);
}

TEST_F(hygiene_node, a_malformed_escape_is_refused_and_a_raw_bar_is_taken_as_it_is) {
  ASSERT_EQ(http_call(port_, "POST", "/api/v1/tasks", R"({"name":"a|b","kind":"noop"})").status,
            201u);
  auto bad = http_call(port_, "GET", "/api/v1/tasks?name=50%");
  EXPECT_EQ(bad.status, 400u) << "a '%' without two hex digits was guessed at: " << bad.body;
  auto e = error_of(bad);
  EXPECT_EQ(str(e, "code"), "invalid_argument");
  EXPECT_NE(str(e, "message").find("%25"), std::string::npos) << bad.body;
  EXPECT_EQ(http_call(port_, "GET", "/api/v1/tasks/%zz").status, 400u);

  auto bar = http_call(port_, "GET", "/api/v1/tasks?name=a|b");
  ASSERT_EQ(bar.status, 200u) << bar.body;
  EXPECT_EQ(parse(bar).at("items").as_array().size(), 1u) << bar.body;
  auto escaped = parse(http_call(port_, "GET", "/api/v1/tasks?name=a%7Cb"));
  EXPECT_EQ(escaped.at("items").as_array().size(), 1u) << json::serialize(escaped);
}

TEST_F(hygiene_node, a_trickled_head_or_body_loses_its_connection_and_an_idle_one_does_not) {
  // Slowloris: one byte a second. The head must be complete 10 s after its
  // first byte; a body must keep 500 B/s after 10 s (server_options).
  auto head = std::async(std::launch::async, [&] {
    return seconds_until_closed_trickling(
        port_, "", "GET /api/v1/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " +
                       std::string(200, 'a'),
        40s);
  });
  auto body = std::async(std::launch::async, [&] {
    return seconds_until_closed_trickling(
        port_,
        "POST /api/v1/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Content-Length: 100000\r\n\r\n",
        R"({"name":"slow","kind":"noop","description":")" + std::string(200, 'a'), 40s);
  });
  // A kept-alive connection that sends nothing for longer than the head's
  // timeout is still served: the clock starts at a request's first byte.
  int idle = connect_to(port_);
  ASSERT_GE(idle, 0);
  EXPECT_EQ(status_line_of_get(idle, "/readyz"), "HTTP/1.1 200 OK");
  auto quiet_since = std::chrono::steady_clock::now();
  // Meanwhile other clients are served as usual.
  while (std::chrono::steady_clock::now() - quiet_since < 13s) {
    auto r = http_call(port_, "GET", "/api/v1/tasks");
    EXPECT_EQ(r.status, 200u) << r.body;
    std::this_thread::sleep_for(1s);
  }
  EXPECT_EQ(status_line_of_get(idle, "/readyz"), "HTTP/1.1 200 OK")
      << "an idle kept-alive connection was closed after " << seconds_since(quiet_since) << " s";
  ::close(idle);
  auto head_s = head.get(), body_s = body.get();
  EXPECT_GE(head_s, 0) << "a head trickled for 40 s kept its connection";
  EXPECT_LT(head_s, 20) << "header timeout 10 s";
  EXPECT_GE(body_s, 0) << "a body trickled for 40 s kept its connection";
  EXPECT_LT(body_s, 25) << "body grace 10 s, then 500 B/s";
  EXPECT_EQ(http_call(port_, "GET", "/api/v1/tasks").status, 200u);
}

TEST(trace_ids, two_nodes_first_runs_share_neither_half_of_their_trace_id) {
  std::vector<std::string> traces;
  for (int n = 0; n < 2; ++n) {
    temp_dir dir;
    node_process node(dir.path() + "/data");
    ASSERT_TRUE(node.running());
    auto port = node.http_port();
    auto made = http_call(port, "POST", "/api/v1/tasks", R"({"name":"t","kind":"noop"})");
    ASSERT_EQ(made.status, 201u) << made.body;
    auto fired = http_call(port, "POST", "/api/v1/tasks/1/trigger");
    ASSERT_EQ(fired.status, 201u) << fired.body;
    traces.push_back(str(parse(fired).at("instances").as_array().at(0).as_object(), "trace_id"));
    ASSERT_EQ(traces.back().size(), 32u) << fired.body;
  }
  EXPECT_NE(traces[0].substr(0, 16), traces[1].substr(0, 16)) << traces[0] << " " << traces[1];
  EXPECT_NE(traces[0].substr(16), traces[1].substr(16)) << traces[0] << " " << traces[1];
}
