// Tests of worker::executor's HTTP tasks against a loopback receiver: status
// codes, the request it sends (method, body, headers, run identity), connection
// errors, timeouts and cancellation.
#include "actors/worker/executor_fixture.hpp"
#include "support/http_receiver.hpp"

namespace aisched::worker {
namespace {

using namespace testing_support;

// -- http ---------------------------------------------------------------------------

using test::http_receiver;

TEST_F(executor_test, http_2xx_is_success_with_status_and_body) {
  http_receiver server({200}, "all good");
  auto req = http(server.url());
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::success) << r.error;
  EXPECT_EQ(r.exit_code, 200);
  EXPECT_EQ(r.output, "all good");
  EXPECT_EQ(r.error, "");
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].head.rfind("GET /hook HTTP/1.1\r\n", 0), 0u)
      << server.requests()[0].head;
}

TEST_F(executor_test, http_204_is_success) {
  http_receiver server({204}, "");
  auto req = http(server.url());
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::success) << r.error;
  EXPECT_EQ(r.exit_code, 204);
}

TEST_F(executor_test, http_5xx_and_4xx_are_failed_with_the_status) {
  for (int status : {500, 404}) {
    http_receiver server({status}, "broken");
    auto req = http(server.url());
    auto r = run(req);
    EXPECT_EQ(r.state, instance_state::failed) << status;
    EXPECT_EQ(r.exit_code, status);
    EXPECT_EQ(r.error, "HTTP status " + std::to_string(status));
    EXPECT_EQ(r.output, "broken");
  }
}

TEST_F(executor_test, http_sends_method_body_headers_and_run_identity) {
  http_receiver server({201}, "created");
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
  EXPECT_EQ(got.head.rfind("POST /jobs?x=1 HTTP/1.1\r\n", 0), 0u) << got.head;
  EXPECT_EQ(got.body, R"({"a":1})");
  EXPECT_EQ(got.header("Content-Type"), "application/json");
  EXPECT_EQ(got.header("X-Custom"), "yes");
  EXPECT_EQ(got.header("Idempotency-Key"), "idem-abc");
  EXPECT_EQ(got.header("Shard-No"), "1");
  EXPECT_EQ(got.header("Shard-Total"), "4");
  EXPECT_EQ(got.header("Schedule-Instance-Id"), "42-1700000000000-1");
  EXPECT_EQ(got.header("Attempt"), "2");
  EXPECT_EQ(got.header("Trace-Id"), "trace-xyz");
  EXPECT_EQ(got.header("Task-Id"), "42");
  EXPECT_FALSE(got.header("Path")) << "PATH must not travel as a header";
  EXPECT_FALSE(got.header("Home")) << "HOME must not travel as a header";
}

TEST_F(executor_test, http_json_body_goes_out_as_application_json_unless_a_header_says_otherwise) {
  http_receiver server({200});
  auto req = http(server.url("/hook"));
  req.http.method = "POST";
  req.http.body = R"({"event":"deploy","n":1})";
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::success) << r.error;
  req.http.headers = {{"content-type", "text/plain"}};  // the task's own, in any case
  r = run(req);
  EXPECT_EQ(r.state, instance_state::success) << r.error;
  req.http.headers.clear();
  req.http.body = "a=1&b=2";  // not JSON: curl's default stays
  r = run(req);
  EXPECT_EQ(r.state, instance_state::success) << r.error;
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].header("Content-Type"), "application/json") << reqs[0].head;
  EXPECT_EQ(reqs[0].body, R"({"event":"deploy","n":1})");
  EXPECT_EQ(reqs[1].header("Content-Type"), "text/plain") << reqs[1].head;
  EXPECT_EQ(reqs[2].header("Content-Type"), "application/x-www-form-urlencoded") << reqs[2].head;
}

TEST_F(executor_test, http_connection_refused_is_failed_with_the_curl_error) {
  test::refused_port refused;
  auto req = http(refused.url());
  auto start = steady::now();
  auto r = run(req);
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.error, curl_easy_strerror(CURLE_COULDNT_CONNECT));
  EXPECT_LT(ms(steady::now() - start), 5000);
}

TEST_F(executor_test, http_without_answer_times_out) {
  http_receiver server({200}, "", /*hang=*/true);
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
  http_receiver server({200}, "", /*hang=*/true);
  auto req = http(server.url());
  auto start = steady::now();
  auto r = run(req, [&] { return steady::now() >= start + 200ms; });
  EXPECT_EQ(r.state, instance_state::failed);
  EXPECT_EQ(r.error, "cancelled");
  EXPECT_LT(ms(steady::now() - start), 5000);
}


}  // namespace
}  // namespace aisched::worker
