// The execute request of a run that uses secrets (actors/router/run_request):
// env-mapped values, `{{secret.NAME}}` filled in HTTP headers (as is) and body
// (JSON-escaped) before event values land (a payload cannot name a secret),
// every value listed for masking, the task itself untouched, and a run whose
// secret is gone or whose leader has secrets disabled refused with an error.
#include "actors/router/run_request.hpp"

#include <gtest/gtest.h>

#include "proto/errors.hpp"

namespace aisched::router {
namespace {

using namespace proto;

reveal_fn vault(std::map<std::string, std::string> values, std::set<std::string>* asked = nullptr) {
  return [=](const std::string& tenant, const std::set<std::string>& names)
             -> caf::expected<std::map<std::string, std::string>> {
    if (asked) *asked = names;
    std::map<std::string, std::string> out;
    for (auto& n : names) {
      auto i = values.find(tenant + "/" + n);
      if (i == values.end()) return make_error(errc::not_found, "name", "secret " + n + " does not exist");
      out[n] = i->second;
    }
    return out;
  };
}

instance run_of(const task& t) {
  instance x;
  x.id = std::to_string(t.id) + "-1-0";
  x.tenant = t.tenant;
  x.task_id = t.id;
  x.worker_id = "w1";
  x.attempt = 2;
  return x;
}

TEST(run_request, maps_secrets_to_environment_variables_and_lists_them_for_masking) {
  task t;
  t.id = 7;
  t.tenant = "acme";
  t.command = "use \"$DB\"";
  t.secrets = {{"DB", "prod-db"}};
  auto r = make_request(t, run_of(t), vault({{"acme/prod-db", "pw\"1"}}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->secret_env.at("DB"), "pw\"1");
  EXPECT_EQ(r->command, t.command);
  EXPECT_NE(std::find(r->redact.begin(), r->redact.end(), "pw\"1"), r->redact.end());
  EXPECT_NE(std::find(r->redact.begin(), r->redact.end(), "pw\\\"1"), r->redact.end());  // as JSON
  EXPECT_EQ(t.secrets.at("DB"), "prod-db");  // the task still names it only
}

TEST(run_request, fills_http_headers_and_body_before_event_values) {
  task t;
  t.id = 8;
  t.tenant = "acme";
  t.kind = task_kind::http;
  t.http.url = "https://api.example/{{event.payload.path}}";
  t.http.headers = {{"Authorization", "Bearer {{secret.token}}"}};
  t.http.body = R"({"key":"{{secret.token}}","who":"{{event.payload.who}}"})";
  auto x = run_of(t);
  x.event_name = "deploy";
  x.event_payload = R"({"who":"{{secret.other}}","path":"p"})";
  std::set<std::string> asked;
  auto r = make_request(t, x, vault({{"acme/token", "t\"k"}, {"acme/other", "NO"}}, &asked));
  ASSERT_TRUE(r);
  EXPECT_EQ(asked, std::set<std::string>{"token"});  // the payload named none
  EXPECT_EQ(r->http.headers.at("Authorization"), "Bearer t\"k");
  EXPECT_EQ(r->http.body.find("NO"), std::string::npos) << r->http.body;
  EXPECT_NE(r->http.body.find(R"("key":"t\"k")"), std::string::npos) << r->http.body;
  EXPECT_NE(r->http.body.find("{{secret.other}}"), std::string::npos) << r->http.body;
}

TEST(run_request, a_bulk_enqueued_run_substitutes_its_payload_without_an_event_name) {
  task t;
  t.id = 9;
  t.command = "echo {{event.payload.n}}";
  auto x = run_of(t);
  x.event_payload = R"({"n":7})";  // a bulk enqueue sets the payload, not event_name
  auto r = make_request(t, x, vault({}, nullptr));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->command.find("{{"), std::string::npos) << "left unsubstituted: " << r->command;
  bool seven = false;
  for (auto& [name, value] : r->env) seven |= value == "7";
  EXPECT_TRUE(seven) << "the payload's value is not in the run's variables: " << r->command;
}

TEST(run_request, a_missing_secret_or_disabled_secrets_refuse_the_run) {
  task t;
  t.id = 9;
  t.tenant = "acme";
  t.command = "true";
  t.secrets = {{"DB", "gone"}};
  auto missing = make_request(t, run_of(t), vault({}));
  ASSERT_FALSE(missing);
  EXPECT_NE(view(missing.error()).message.find("gone"), std::string::npos);
  auto disabled = make_request(t, run_of(t), reveal_fn{});
  ASSERT_FALSE(disabled);
  auto failed = unsendable(run_of(t), missing.error(), 1'000);
  EXPECT_EQ(failed.state, instance_state::failed);
  EXPECT_EQ(failed.worker_id, "w1");
  EXPECT_EQ(failed.attempt, 2u);
  EXPECT_NE(failed.error.find("gone"), std::string::npos);
}

TEST(run_request, a_task_without_secrets_never_asks_for_any) {
  task t;
  t.id = 10;
  t.command = "echo {{secret.x}}";  // refused at create; never filled here
  bool asked = false;
  reveal_fn spy = [&](const std::string&, const std::set<std::string>&)
      -> caf::expected<std::map<std::string, std::string>> {
    asked = true;
    return std::map<std::string, std::string>{};
  };
  auto r = make_request(t, run_of(t), spy);
  ASSERT_TRUE(r);
  EXPECT_FALSE(asked);
  EXPECT_TRUE(r->secret_env.empty());
  EXPECT_TRUE(r->redact.empty());
}

}  // namespace
}  // namespace aisched::router
