// The OpenAI-compatible client; see llm_client.hpp. Its own threads call the
// model over HTTP and pace the calls in real time, so it reads the system's
// clock (common/clock.hpp): there is no model in a simulation to pace.
#include "common/llm_client.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <boost/json.hpp>

#include "common/clock.hpp"
#include "common/curl_session.hpp"
#include "common/token_bucket.hpp"
#include "obs/metrics.hpp"
#include "proto/errors.hpp"
#include "proto/time.hpp"

namespace aisched::llm {

namespace json = boost::json;

// -- request and answer codecs -----------------------------------------------

namespace {

json::object message_json(const chat_message& m) {
  json::object o;
  o["role"] = m.role;
  if (m.role == "assistant" && !m.tool_calls.empty() && m.content.empty())
    o["content"] = nullptr;
  else
    o["content"] = m.content;
  if (!m.tool_calls.empty()) {
    json::array calls;
    for (auto& c : m.tool_calls)
      calls.push_back(json::object{{"id", c.id},
                                   {"type", "function"},
                                   {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    o["tool_calls"] = std::move(calls);
  }
  if (!m.tool_call_id.empty()) o["tool_call_id"] = m.tool_call_id;
  if (!m.name.empty()) o["name"] = m.name;
  return o;
}

std::string str(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

uint64_t u64(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  if (!v) return 0;
  if (v->is_uint64()) return v->get_uint64();
  if (v->is_int64() && v->get_int64() >= 0) return static_cast<uint64_t>(v->get_int64());
  return 0;
}

void read_usage(const json::object& o, token_usage& u) {
  if (auto* usage = o.if_contains("usage"); usage && usage->is_object()) {
    u.prompt_tokens = u64(usage->get_object(), "prompt_tokens");
    u.completion_tokens = u64(usage->get_object(), "completion_tokens");
  }
}

const json::object* first_choice(const json::object& o) {
  auto* choices = o.if_contains("choices");
  if (!choices || !choices->is_array() || choices->get_array().empty()) return nullptr;
  return choices->get_array()[0].if_object();
}

}  // namespace

std::string request_body(const chat_request& req, const std::string& model) {
  json::object o;
  o["model"] = model;
  json::array msgs;
  for (auto& m : req.messages) msgs.push_back(message_json(m));
  o["messages"] = std::move(msgs);
  if (!req.tools.empty()) {
    json::array tools;
    for (auto& t : req.tools) {
      json::error_code ec;
      auto params = json::parse(t.parameters, ec);
      if (ec || !params.is_object()) params = json::object{{"type", "object"}};
      tools.push_back(json::object{
          {"type", "function"},
          {"function",
           {{"name", t.name}, {"description", t.description}, {"parameters", std::move(params)}}}});
    }
    o["tools"] = std::move(tools);
  }
  o["stream"] = req.stream;
  if (req.stream) o["stream_options"] = {{"include_usage", true}};
  if (req.temperature >= 0) o["temperature"] = req.temperature;
  if (req.max_tokens > 0) o["max_tokens"] = req.max_tokens;
  if (req.json_object) o["response_format"] = {{"type", "json_object"}};
  return json::serialize(o);
}

caf::expected<completion> parse_completion(const std::string& body) {
  json::error_code ec;
  auto v = json::parse(body, ec);
  if (ec || !v.is_object())
    return make_error(errc::invalid_argument, "the LLM answer is not JSON: " + body.substr(0, 200));
  auto& o = v.get_object();
  auto* choice = first_choice(o);
  if (!choice) return make_error(errc::invalid_argument, "the LLM answer has no choices");
  completion out;
  out.model = str(o, "model");
  out.finish_reason = str(*choice, "finish_reason");
  read_usage(o, out.usage);
  auto* msg = choice->if_contains("message");
  if (!msg || !msg->is_object()) return make_error(errc::invalid_argument, "the LLM answer has no message");
  auto& m = msg->get_object();
  out.content = str(m, "content");
  out.reasoning_content = str(m, "reasoning_content");
  if (auto* calls = m.if_contains("tool_calls"); calls && calls->is_array()) {
    for (auto& c : calls->get_array()) {
      if (!c.is_object()) continue;
      tool_call tc;
      tc.id = str(c.get_object(), "id");
      if (auto* f = c.get_object().if_contains("function"); f && f->is_object()) {
        tc.name = str(f->get_object(), "name");
        tc.arguments = str(f->get_object(), "arguments");
      }
      out.tool_calls.push_back(std::move(tc));
    }
  }
  return out;
}

// -- streaming ----------------------------------------------------------------

stream_accumulator::stream_accumulator(delta_fn on_delta)
    : on_delta_(std::move(on_delta)),
      reader_([this](const http::sse_event& e) { return event(e.data); }) {}

bool stream_accumulator::feed(std::string_view bytes) { return reader_.feed(bytes); }

namespace {

/// A tool call's `index` when it is a small non-negative integer, else -1 (as
/// if absent). The provider is not ours: `1e300` or `0.5` must not throw out
/// of libcurl's write callback, which ends the process.
int call_index(const json::value* i) {
  constexpr int64_t limit = 1 << 20;
  if (i == nullptr) return -1;
  if (i->is_int64() && i->get_int64() >= 0 && i->get_int64() < limit)
    return static_cast<int>(i->get_int64());
  if (i->is_uint64() && i->get_uint64() < static_cast<uint64_t>(limit))
    return static_cast<int>(i->get_uint64());
  if (i->is_double() && i->get_double() >= 0 && i->get_double() < limit &&
      i->get_double() == std::trunc(i->get_double()))
    return static_cast<int>(i->get_double());
  return -1;
}

}  // namespace

bool stream_accumulator::event(std::string_view l) {
  while (!l.empty() && (l.front() == ' ' || l.back() == ' '))
    l = l.front() == ' ' ? l.substr(1) : l.substr(0, l.size() - 1);
  if (l.empty()) return true;  // an event without data
  if (l == "[DONE]") {
    done_ = true;
    return true;
  }
  json::error_code ec;
  auto v = json::parse(l, ec);
  if (ec || !v.is_object()) {
    error_ = "unreadable stream chunk: " + std::string(l.substr(0, 200));
    return false;
  }
  auto& o = v.get_object();
  if (o.contains("error")) {
    error_ = "provider error in stream: " + json::serialize(o.at("error")).substr(0, 300);
    return false;
  }
  if (auto m = str(o, "model"); !m.empty()) out_.model = m;
  read_usage(o, out_.usage);
  auto* choice = first_choice(o);
  if (!choice) return true;  // the usage-only chunk
  if (auto f = str(*choice, "finish_reason"); !f.empty()) out_.finish_reason = f;
  auto* delta = choice->if_contains("delta");
  if (!delta || !delta->is_object()) return true;
  auto& d = delta->get_object();
  stream_delta piece{str(d, "content"), str(d, "reasoning_content")};
  out_.content += piece.content;
  out_.reasoning_content += piece.reasoning_content;
  if (on_delta_ && (!piece.content.empty() || !piece.reasoning_content.empty())) on_delta_(piece);
  if (auto* calls = d.if_contains("tool_calls"); calls && calls->is_array()) {
    for (auto& c : calls->get_array()) {
      if (!c.is_object()) continue;
      auto& co = c.get_object();
      // Providers send `index` on every piece of a call and the id and name
      // only on its first; without an index, a piece with an id starts a call.
      int index = call_index(co.if_contains("index"));
      auto id = str(co, "id");
      size_t slot = out_.tool_calls.size();
      for (size_t k = 0; k < tool_index_.size(); ++k)
        if (index >= 0 && tool_index_[k] == index) slot = k;
      if (index < 0 && id.empty() && !out_.tool_calls.empty()) slot = out_.tool_calls.size() - 1;
      if (slot == out_.tool_calls.size()) {
        out_.tool_calls.emplace_back();
        tool_index_.push_back(index);
      }
      auto& tc = out_.tool_calls[slot];
      if (!id.empty()) tc.id = id;
      if (auto* f = co.if_contains("function"); f && f->is_object()) {
        // Most providers send the name once, some in pieces, and some repeat the
        // complete name in every delta: a piece equal to the whole name so far is
        // that repetition, not `create_taskcreate_task`.
        auto name = str(f->get_object(), "name");
        if (name != tc.name) tc.name += name;
        tc.arguments += str(f->get_object(), "arguments");
      }
    }
  }
  return true;
}

completion stream_accumulator::result() const { return out_; }

// -- transport ------------------------------------------------------------------

namespace {

struct target {
  std::string endpoint, api_key, model;
};

struct attempt_outcome {
  caf::expected<completion> result{completion{}};
  bool retryable = false;  // connect error, timeout, 5xx, 429
  bool streamed_any = false;
};

std::string base_url(std::string e) {
  while (!e.empty() && e.back() == '/') e.pop_back();
  if (e.size() >= 17 && e.compare(e.size() - 17, 17, "/chat/completions") == 0) return e;
  return e + "/chat/completions";
}

attempt_outcome attempt(const llm_config& cfg, const target& to, const chat_request& req,
                        const delta_fn& on_delta, const std::atomic<bool>& stopping) {
  attempt_outcome out;
  bool streamed = false;
  stream_accumulator acc([&](const stream_delta& d) {
    streamed = true;
    if (on_delta) on_delta(d);
  });
  auto url = base_url(to.endpoint);
  http::curl_request call;
  call.method = "POST";
  call.url = url;
  call.headers.push_back("Content-Type: application/json");
  if (req.stream) call.headers.push_back("Accept: text/event-stream");
  if (!to.api_key.empty()) call.headers.push_back("Authorization: Bearer " + to.api_key);
  call.body = request_body(req, to.model);
  call.timeout = cfg.timeout;
  call.connect_timeout = cfg.connect_timeout;
  std::string body;  // plain answers and error bodies
  bool parse_failed = false;
  call.on_data = [&](long status, std::string_view bytes) {
    if (req.stream && status >= 200 && status < 300) {
      if (!acc.feed(bytes)) parse_failed = true;
    } else if (body.size() < (8u << 20)) {
      body.append(bytes);
    }
    return true;
  };
  call.cancelled = [&stopping] { return stopping.load(); };
  auto got = http::perform(call);
  auto status = got.status;
  out.streamed_any = streamed;
  auto where = " (" + to.endpoint + ", model " + to.model + ")";
  if (got.outcome != http::curl_outcome::ok) {
    out.retryable = got.outcome != http::curl_outcome::cancelled;
    out.result = make_error(errc::unavailable, "LLM request failed: " + got.error + where);
    return out;
  }
  if (status < 200 || status >= 300) {
    out.retryable = status >= 500 || status == 429;
    out.result = make_error(errc::unavailable, "LLM answered HTTP " + std::to_string(status) +
                                                   where + ": " + body.substr(0, 300));
    return out;
  }
  if (!req.stream) {
    out.result = parse_completion(body);
    return out;
  }
  if (parse_failed) {
    out.result = make_error(errc::invalid_argument, acc.error() + where);
    return out;
  }
  if (!acc.finish()) {  // a last event without its blank line
    out.result = make_error(errc::invalid_argument, acc.error() + where);
    return out;
  }
  out.result = acc.result();
  return out;
}

}  // namespace

// -- the client -------------------------------------------------------------------

struct llm_client::impl {
  std::mutex mtx;
  std::condition_variable cv;
  std::deque<std::function<void()>> jobs;
  std::vector<std::thread> threads;
  std::atomic<bool> stopping{false};
  token_bucket bucket;
  std::mutex bucket_mtx;

  explicit impl(const llm_config& cfg)
      : bucket(cfg.requests_per_minute / 60.0, std::max(1.0, cfg.requests_per_minute),
               system_now_ms()) {}

  void run() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mtx);
        cv.wait(lock, [&] { return stopping.load() || !jobs.empty(); });
        if (jobs.empty()) return;
        job = std::move(jobs.front());
        jobs.pop_front();
      }
      job();
    }
  }

  /// Waits (on a client thread) for a token, at most `limit`; false if none came.
  bool admit(std::chrono::milliseconds limit) {
    auto deadline = system_now_ms() + limit.count();
    for (;;) {
      duration_ms wait = 0;
      {
        std::lock_guard<std::mutex> lock(bucket_mtx);
        if (bucket.unlimited() || bucket.take(1, system_now_ms()) == 1) return true;
        wait = std::max<duration_ms>(bucket.wait_ms(system_now_ms()), 10);
      }
      if (stopping || system_now_ms() + wait > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min<duration_ms>(wait, 200)));
    }
  }
};

llm_client::llm_client(llm_config cfg) : cfg_(std::move(cfg)), impl_(new impl(cfg_)) {
  for (unsigned i = 0; i < std::max(1u, cfg_.threads); ++i)
    impl_->threads.emplace_back([this] { impl_->run(); });
}

llm_client::~llm_client() {
  std::deque<std::function<void()>> left;
  {
    std::lock_guard<std::mutex> lock(impl_->mtx);
    impl_->stopping = true;
    left.swap(impl_->jobs);
  }
  impl_->cv.notify_all();
  for (auto& t : impl_->threads) t.join();
  for (auto& job : left) job();  // they see `stopping` and fail fast
}

caf::expected<completion> llm_client::complete(const chat_request& req, const delta_fn& on_delta) {
  auto& m = obs::get();
  if (!configured())
    return make_error(errc::unavailable, "llm_not_configured", "no LLM endpoint and model are configured");
  if (impl_->stopping) return make_error(errc::unavailable, "the LLM client is shutting down");
  if (!impl_->admit(cfg_.timeout)) {
    obs::ai_requests(req.feature, "rate_limited").inc();
    return make_error(errc::unavailable, "LLM requests-per-minute limit reached (" +
                                             std::to_string(cfg_.requests_per_minute) + ")");
  }
  auto count = [&](const completion& c) {
    m.ai_prompt_tokens.inc(static_cast<double>(c.usage.prompt_tokens));
    m.ai_completion_tokens.inc(static_cast<double>(c.usage.completion_tokens));
  };
  target primary{cfg_.endpoint, cfg_.api_key, cfg_.model};
  auto first = attempt(cfg_, primary, req, on_delta, impl_->stopping);
  if (first.result) {
    count(*first.result);
    if (!req.caller_counts_answer) count_answer(req.feature, *first.result, true);
    return first.result;
  }
  bool has_fallback = !cfg_.fallback_endpoint.empty() || !cfg_.fallback_model.empty();
  if (!has_fallback || !first.retryable || first.streamed_any || impl_->stopping) {
    obs::ai_requests(req.feature, "error").inc();
    return first.result;
  }
  target fallback{cfg_.fallback_endpoint.empty() ? cfg_.endpoint : cfg_.fallback_endpoint,
                  cfg_.fallback_api_key.empty() ? cfg_.api_key : cfg_.fallback_api_key,
                  cfg_.fallback_model.empty() ? cfg_.model : cfg_.fallback_model};
  auto second = attempt(cfg_, fallback, req, on_delta, impl_->stopping);
  if (!second.result) {
    obs::ai_requests(req.feature, "error").inc();
    return make_error(errc::unavailable, view(first.result.error()).message + "; fallback: " +
                                             view(second.result.error()).message);
  }
  second.result->used_fallback = true;
  count(*second.result);
  if (!req.caller_counts_answer) count_answer(req.feature, *second.result, true);
  return second.result;
}

void count_answer(const std::string& feature, const completion& c, bool accepted) {
  obs::ai_requests(feature, !accepted ? "invalid" : c.used_fallback ? "fallback" : "ok").inc();
}

void llm_client::complete_async(chat_request req, delta_fn on_delta, completion_fn done) {
  auto job = [this, req = std::move(req), on_delta = std::move(on_delta),
              done = std::move(done)] { done(complete(req, on_delta)); };
  {
    std::lock_guard<std::mutex> lock(impl_->mtx);
    if (!impl_->stopping) {
      impl_->jobs.push_back(std::move(job));
      impl_->cv.notify_one();
      return;
    }
  }
  job();
}

}  // namespace aisched::llm
