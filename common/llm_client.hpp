// The client of an OpenAI-compatible chat endpoint (`POST {endpoint}/chat/completions`)
// on libcurl: plain and streamed (SSE) completions, tool calls, a fallback
// endpoint/model tried when the primary fails, a requests-per-minute limit and
// the ai_* metrics. Curl runs on the client's own threads, never on CAF's:
// actors call complete_async() and get the result back through a callback they
// turn into a message (caf::anon_send to themselves).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "common/sse_reader.hpp"
#include "proto/ai_types.hpp"

namespace aisched::llm {

/// Where and how to reach the model. Read by runtime/config from the config
/// file, flags and AISCHED_LLM_* environment variables.
struct llm_config {
  std::string endpoint;  ///< base URL, e.g. "http://127.0.0.1:9000/v1" (".../chat/completions" is appended)
  std::string api_key;   ///< sent as `Authorization: Bearer <key>` when not empty
  std::string model;
  std::string fallback_endpoint;  ///< empty: no fallback; the fallback key/model default to the primary's
  std::string fallback_api_key;
  std::string fallback_model;
  std::chrono::milliseconds connect_timeout{5'000};
  std::chrono::milliseconds timeout{60'000};  ///< whole request, per attempt
  double requests_per_minute = 60;            ///< 0 = unlimited
  unsigned threads = 2;                       ///< concurrent requests in flight

  /// True when an endpoint and a model are set.
  bool configured() const { return !endpoint.empty() && !model.empty(); }
};

/// Tool calls and chat messages are proto's (their stored JSON is proto/json_wire's).
using proto::chat_message;
using proto::tool_call;

/// A tool described to the model; `parameters` is a JSON-schema object as JSON text.
struct tool_spec {
  std::string name;
  std::string description;
  std::string parameters;
};

struct chat_request {
  std::vector<chat_message> messages;
  std::vector<tool_spec> tools;
  bool stream = false;
  double temperature = -1;  ///< < 0: provider default
  unsigned max_tokens = 0;  ///< 0: provider default
  bool json_object = false; ///< asks for `response_format: {"type":"json_object"}`
  /// The feature label of ai_requests_total{feature,result} ("chat", "analysis", ...).
  std::string feature = "chat";
  /// False: the client counts an answer as "ok" or "fallback" when it arrives.
  /// True: the caller checks the answer before using it and counts it itself
  /// with count_answer(), so a rejected answer is "invalid", never "ok".
  /// Errors and rate limits are counted by the client either way.
  bool caller_counts_answer = false;
};

struct token_usage {
  uint64_t prompt_tokens = 0;
  uint64_t completion_tokens = 0;
};

struct completion {
  std::string content;
  std::string reasoning_content;  ///< kept when the provider sends it
  std::vector<tool_call> tool_calls;
  std::string finish_reason;
  token_usage usage;
  std::string model;          ///< the model that answered
  bool used_fallback = false;
};

/// A piece of a streamed answer, handed over as it arrives.
struct stream_delta {
  std::string content;
  std::string reasoning_content;
};

/// Called on a client thread for each streamed delta (never for plain requests).
using delta_fn = std::function<void(const stream_delta&)>;
/// Called once on a client thread with the outcome.
using completion_fn = std::function<void(caf::expected<completion>)>;

/// Thread-safe. Owns its worker threads; the destructor finishes queued
/// requests' callbacks with an error and joins the threads.
class llm_client {
 public:
  explicit llm_client(llm_config cfg);
  ~llm_client();
  llm_client(const llm_client&) = delete;
  llm_client& operator=(const llm_client&) = delete;

  bool configured() const { return cfg_.configured(); }
  const llm_config& config() const { return cfg_; }

  /// Blocking request (tries the fallback when the primary fails with a
  /// connect error, a timeout, a 5xx or a 429). Never call it on an actor
  /// thread. Errors: errc::unavailable (not configured, rate limited,
  /// transport, provider error), errc::invalid_argument (unreadable answer).
  caf::expected<completion> complete(const chat_request& req, const delta_fn& on_delta = nullptr);

  /// complete() on one of the client's threads; `done` runs there too.
  void complete_async(chat_request req, delta_fn on_delta, completion_fn done);

 private:
  struct impl;
  llm_config cfg_;
  std::unique_ptr<impl> impl_;
};

/// Counts one answered request of `feature` in ai_requests_total (for requests
/// sent with caller_counts_answer): "invalid" when the caller rejected `c`,
/// else "fallback" or "ok" by which endpoint answered. Thread-safe.
void count_answer(const std::string& feature, const completion& c, bool accepted);

// -- pure parts, exposed for tests -------------------------------------------

/// The JSON body of a chat/completions request for `model`.
std::string request_body(const chat_request& req, const std::string& model);

/// Parses a non-streamed chat/completions answer.
caf::expected<completion> parse_completion(const std::string& body);

/// Accumulates a streamed answer: feed it the raw bytes as they arrive (split
/// anywhere; common/sse_reader makes the events); it assembles content,
/// reasoning and tool calls (arguments concatenated per call `index`) and
/// reports each delta.
class stream_accumulator {
 public:
  explicit stream_accumulator(delta_fn on_delta = nullptr);
  stream_accumulator(const stream_accumulator&) = delete;  // its reader calls back into it
  stream_accumulator& operator=(const stream_accumulator&) = delete;

  /// Consumes bytes; false when an event did not parse (the error says why).
  bool feed(std::string_view bytes);
  /// Ends the stream: a last event without its blank line still counts.
  bool finish() { return feed("\n\n"); }
  /// True once `data: [DONE]` arrived.
  bool done() const { return done_; }
  /// The assembled answer (call at the end of the stream).
  completion result() const;
  const std::string& error() const { return error_; }

 private:
  bool event(std::string_view data);
  delta_fn on_delta_;
  http::sse_reader reader_;
  completion out_;
  std::vector<int> tool_index_;  // provider index of each entry of out_.tool_calls
  bool done_ = false;
  std::string error_;
};

}  // namespace aisched::llm
