// Tests for the one libcurl client (common/curl_session.hpp) against a loopback
// receiver: what goes on the wire, how the answer comes back, and each way a
// request ends (ok, stopped, cancelled, timed out, failed).
#include "common/curl_session.hpp"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "support/http_receiver.hpp"
#include "support/loopback.hpp"

namespace aisched::http {
namespace {

using std::chrono::milliseconds;
using test::http_receiver;

TEST(curl_session, sends_method_headers_and_body_and_collects_the_answer) {
  http_receiver rx({201}, "created");
  curl_request r;
  r.method = "PUT";
  r.url = rx.url("/things/1");
  r.headers = {"X-Test: yes", "Content-Type: application/json"};
  r.body = R"({"a":1})";
  r.timeout = milliseconds(5000);
  auto got = perform(r);
  EXPECT_EQ(got.outcome, curl_outcome::ok);
  EXPECT_EQ(got.status, 201);
  EXPECT_EQ(got.body, "created");
  ASSERT_EQ(rx.requests().size(), 1u);
  auto req = rx.requests()[0];
  EXPECT_EQ(req.head.substr(0, req.head.find("\r\n")), "PUT /things/1 HTTP/1.1");
  EXPECT_EQ(req.header("x-test").value_or(""), "yes");
  EXPECT_EQ(req.header("content-length").value_or(""), "7");
  EXPECT_EQ(req.body, R"({"a":1})");
}

TEST(curl_session, an_empty_body_is_sent_with_content_length_zero_and_none_without_one) {
  http_receiver rx({200});
  curl_request r;
  r.method = "POST";
  r.url = rx.url();
  r.body = "";
  EXPECT_EQ(perform(r).outcome, curl_outcome::ok);
  r.body.reset();
  r.method = "GET";
  EXPECT_EQ(perform(r).outcome, curl_outcome::ok);
  auto reqs = rx.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].header("content-length").value_or("none"), "0");
  EXPECT_EQ(reqs[1].header("content-length").value_or("none"), "none");
}

TEST(curl_session, the_collected_body_stops_at_its_cap_and_a_sink_sees_every_byte) {
  std::string big(100'000, 'x');
  http_receiver rx({500}, big);
  curl_request r;
  r.url = rx.url();
  r.body_cap = 1000;
  auto got = perform(r);
  EXPECT_EQ(got.outcome, curl_outcome::ok);
  EXPECT_EQ(got.status, 500);
  EXPECT_EQ(got.body.size(), 1000u);
  size_t seen = 0;
  long status_seen = 0;
  r.on_data = [&](long status, std::string_view bytes) {
    status_seen = status;
    seen += bytes.size();
    return true;
  };
  got = perform(r);
  EXPECT_EQ(got.outcome, curl_outcome::ok);
  EXPECT_EQ(seen, big.size());
  EXPECT_EQ(status_seen, 500);
  EXPECT_TRUE(got.body.empty());
}

TEST(curl_session, a_sink_that_says_stop_ends_the_transfer_without_an_error) {
  http_receiver rx({200}, std::string(100'000, 'y'));
  curl_request r;
  r.url = rx.url();
  size_t calls = 0;
  r.on_data = [&](long, std::string_view) { return ++calls < 1; };
  auto got = perform(r);
  EXPECT_EQ(got.outcome, curl_outcome::stopped);
  EXPECT_EQ(calls, 1u);
  EXPECT_EQ(got.status, 200);
  EXPECT_TRUE(got.error.empty());
}

TEST(curl_session, cancelling_aborts_a_request_the_server_never_answers) {
  http_receiver rx({200}, "", /*hang=*/true);
  std::atomic<bool> cancel{false};
  std::thread flip([&] {
    std::this_thread::sleep_for(milliseconds(200));
    cancel = true;
  });
  curl_request r;
  r.url = rx.url();
  r.timeout = milliseconds(30'000);
  r.cancelled = [&] { return cancel.load(); };
  auto start = std::chrono::steady_clock::now();
  auto got = perform(r);
  flip.join();
  EXPECT_EQ(got.outcome, curl_outcome::cancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(curl_session, a_request_past_its_timeout_is_timed_out) {
  http_receiver rx({200}, "", /*hang=*/true);
  curl_request r;
  r.url = rx.url();
  r.timeout = milliseconds(300);
  auto got = perform(r);
  EXPECT_EQ(got.outcome, curl_outcome::timed_out);
  EXPECT_EQ(got.status, 0);
}

TEST(curl_session, a_refused_connection_fails_naming_curl_error_and_its_detail) {
  test::refused_port refused;
  curl_request r;
  r.url = refused.url();
  auto got = perform(r);
  auto reply = post_json(r.url, "{}", 2000);
  auto port = std::to_string(refused.port());
  EXPECT_EQ(got.outcome, curl_outcome::failed);
  EXPECT_EQ(got.error, "Couldn't connect to server");
  EXPECT_NE(got.detail.find(port), std::string::npos) << got.detail;
  EXPECT_EQ(reply.status, 0);
  EXPECT_EQ(reply.error, "Couldn't connect to server");
}

TEST(curl_session, post_json_labels_the_body_and_keeps_extra_headers) {
  http_receiver rx({202}, "queued");
  auto reply = post_json(rx.url(), R"({"k":"v"})", 5000, {"Authorization: Bearer t"});
  EXPECT_EQ(reply.status, 202);
  EXPECT_EQ(reply.body, "queued");
  ASSERT_EQ(rx.requests().size(), 1u);
  auto req = rx.requests()[0];
  EXPECT_EQ(req.head.substr(0, 5), "POST ");
  EXPECT_EQ(req.header("content-type").value_or(""), "application/json");
  EXPECT_EQ(req.header("authorization").value_or(""), "Bearer t");
  EXPECT_EQ(req.body, R"({"k":"v"})");
}

TEST(curl_session, one_session_serves_many_requests) {
  http_receiver rx({200, 404, 200}, "b");
  curl_session s;
  curl_request r;
  r.url = rx.url();
  EXPECT_EQ(s.perform(r).status, 200);
  EXPECT_EQ(s.perform(r).status, 404);
  r.method = "HEAD";
  auto got = s.perform(r);
  EXPECT_EQ(got.status, 200);
  EXPECT_TRUE(got.body.empty());
  EXPECT_EQ(rx.requests().size(), 3u);
}

}  // namespace
}  // namespace aisched::http
