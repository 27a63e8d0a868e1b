// Tests of worker::executor's HTTP tasks against a loopback stub server: status
// codes, the request it sends (method, body, headers, run identity), connection
// errors, timeouts and cancellation.
#include "actors/worker/executor_fixture.hpp"
#include "support/loopback.hpp"

namespace aisched::worker {
namespace {

using namespace testing_support;

// -- http ---------------------------------------------------------------------------

/// A one-thread HTTP/1.1 server on 127.0.0.1 (port chosen by the kernel) answering every
/// request with `status` and `body`, or, with `hang`, never answering. Records requests.
class http_stub {
 public:
  http_stub(int status, std::string body, bool hang = false)
      : status_(status), body_(std::move(body)), hang_(hang) {
    fd_ = test::listen_loopback(8, port_);
    thread_ = std::thread([this] { serve(); });
  }

  ~http_stub() {
    stop_ = true;
    thread_.join();
    for (int c : held_) close(c);
    close(fd_);
  }

  http_stub(const http_stub&) = delete;
  http_stub& operator=(const http_stub&) = delete;

  std::string url(const std::string& path = "/hook") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  std::vector<std::string> requests() const {
    std::lock_guard<std::mutex> guard(mtx_);
    return requests_;
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      auto request = read_request(c);
      {
        std::lock_guard<std::mutex> guard(mtx_);
        requests_.push_back(request);
      }
      if (hang_) {
        held_.push_back(c);  // closed by the destructor
        continue;
      }
      std::string response = "HTTP/1.1 " + std::to_string(status_) +
                             " Stub\r\nContent-Length: " + std::to_string(body_.size()) +
                             "\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n" + body_;
      for (size_t sent = 0; sent < response.size();) {
        auto n = send(c, response.data() + sent, response.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<size_t>(n);
      }
      close(c);
    }
  }

  /// Reads the head and a Content-Length body (2 s at most).
  std::string read_request(int c) {
    std::string data;
    auto until = steady::now() + 2s;
    size_t want = std::string::npos;
    char buf[4096];
    while (steady::now() < until && data.size() < want) {
      pollfd p{c, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      auto n = recv(c, buf, sizeof buf, 0);
      if (n <= 0) break;
      data.append(buf, static_cast<size_t>(n));
      auto head_end = data.find("\r\n\r\n");
      if (head_end != std::string::npos && want == std::string::npos) {
        size_t body = 0;
        auto lower = data.substr(0, head_end);
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        auto cl = lower.find("\r\ncontent-length:");
        if (cl != std::string::npos) body = std::stoul(lower.substr(cl + 17));
        want = head_end + 4 + body;
      }
    }
    return data;
  }

  int status_;
  std::string body_;
  bool hang_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<int> held_;  // serve thread only
  mutable std::mutex mtx_;
  std::vector<std::string> requests_;
};

/// The value of header `name` (case-insensitive) in a raw request, or nullopt.
std::optional<std::string> header_of(const std::string& request, const std::string& name) {
  for (auto& line : lines_of(request)) {
    auto colon = line.find(':');
    if (colon == std::string::npos || colon != name.size()) continue;
    if (!std::equal(name.begin(), name.end(), line.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        }))
      continue;
    auto v = line.substr(colon + 1);
    while (!v.empty() && (v.front() == ' ')) v.erase(0, 1);
    while (!v.empty() && (v.back() == '\r' || v.back() == ' ')) v.pop_back();
    return v;
  }
  return std::nullopt;
}

TEST_F(executor_test, http_2xx_is_success_with_status_and_body) {
  http_stub server(200, "all good");
  auto req = http(server.url());
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::success) << r.error;
  EXPECT_EQ(r.exit_code, 200);
  EXPECT_EQ(r.output, "all good");
  EXPECT_EQ(r.error, "");
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].rfind("GET /hook HTTP/1.1\r\n", 0), 0u) << server.requests()[0];
}

TEST_F(executor_test, http_204_is_success) {
  http_stub server(204, "");
  auto req = http(server.url());
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::success) << r.error;
  EXPECT_EQ(r.exit_code, 204);
}

TEST_F(executor_test, http_5xx_and_4xx_are_failed_with_the_status) {
  for (int status : {500, 404}) {
    http_stub server(status, "broken");
    auto req = http(server.url());
    auto r = run(req);
    EXPECT_EQ(r.state, instance_state::failed) << status;
    EXPECT_EQ(r.exit_code, status);
    EXPECT_EQ(r.error, "HTTP status " + std::to_string(status));
    EXPECT_EQ(r.output, "broken");
  }
}

TEST_F(executor_test, http_sends_method_body_headers_and_run_identity) {
  http_stub server(201, "created");
  auto req = http(server.url("/jobs?x=1"));
  req.http.method = "POST";
  req.http.body = R"({"a":1})";
  req.http.headers = {{"Content-Type", "application/json"}, {"X-Custom", "yes"}};
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::success) << r.error;
  EXPECT_EQ(r.exit_code, 201);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  const auto& got = reqs[0];
  EXPECT_EQ(got.rfind("POST /jobs?x=1 HTTP/1.1\r\n", 0), 0u) << got;
  EXPECT_EQ(got.substr(got.find("\r\n\r\n") + 4), R"({"a":1})");
  EXPECT_EQ(header_of(got, "Content-Type"), "application/json");
  EXPECT_EQ(header_of(got, "X-Custom"), "yes");
  EXPECT_EQ(header_of(got, "Idempotency-Key"), "idem-abc");
  EXPECT_EQ(header_of(got, "Shard-No"), "1");
  EXPECT_EQ(header_of(got, "Shard-Total"), "4");
  EXPECT_EQ(header_of(got, "Schedule-Instance-Id"), "42-1700000000000-1");
  EXPECT_EQ(header_of(got, "Attempt"), "2");
  EXPECT_EQ(header_of(got, "Trace-Id"), "trace-xyz");
  EXPECT_EQ(header_of(got, "Task-Id"), "42");
  EXPECT_FALSE(header_of(got, "Path")) << "PATH must not travel as a header";
  EXPECT_FALSE(header_of(got, "Home")) << "HOME must not travel as a header";
}

TEST_F(executor_test, http_connection_refused_is_failed_with_the_curl_error) {
  // A bound socket that does not listen: connecting to it is refused, and no one else
  // can take the port meanwhile.
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(s, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  auto req = http("http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/");
  auto start = steady::now();
  auto r = run(req);
  close(s);
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.error, curl_easy_strerror(CURLE_COULDNT_CONNECT));
  EXPECT_LT(ms(steady::now() - start), 5000);
}

TEST_F(executor_test, http_without_answer_times_out) {
  http_stub server(200, "", /*hang=*/true);
  auto req = http(server.url());
  req.timeout = 300;
  auto start = steady::now();
  auto r = run(req);
  auto took = steady::now() - start;
  EXPECT_EQ(r.state, instance_state::timed_out) << r.error;
  EXPECT_EQ(r.error, "timed out after 300ms");
  EXPECT_GE(ms(took), 250);
  EXPECT_LT(ms(took), 5000);
}

TEST_F(executor_test, http_cancel_aborts_the_request) {
  http_stub server(200, "", /*hang=*/true);
  auto req = http(server.url());
  auto start = steady::now();
  auto r = run(req, [&] { return steady::now() >= start + 200ms; });
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.error, "cancelled");
  EXPECT_LT(ms(steady::now() - start), 5000);
}


}  // namespace
}  // namespace aisched::worker
