// Beast plumbing of the HTTP server; see server.hpp.
#include "gateway/server.hpp"

#include <fcntl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <thread>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>

#include "common/clock.hpp"
#include "gateway/request_head.hpp"
#include "proto/errors.hpp"
#include "proto/json.hpp"

namespace aisched::gateway {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

namespace {

/// An error body for what the server refuses before routing: the same shape
/// (and UTF-8 guarantee) as every route's, built by proto::error_to_json.
std::string error_body(errc code, const std::string& message) {
  return boost::json::serialize(proto::error_to_json(make_error(code, message)));
}

/// A WebSocket connection after the upgrade: text frames in, queued text
/// frames out, all on the connection's strand.
class ws_session : public std::enable_shared_from_this<ws_session> {
 public:
  ws_session(beast::tcp_stream stream, const std::atomic<bool>& stopping)
      : ws_(std::move(stream)), stopping_(stopping) {}

  void start(std::shared_ptr<http::request<http::string_body>> req, ws_fn on_open) {
    beast::get_lowest_layer(ws_).expires_never();  // the websocket keeps its own timeouts
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.async_accept(*req, [self = shared_from_this(), req, on_open](beast::error_code ec) {
      if (ec) return;
      self->on_text_ = on_open(std::make_shared<channel>(self));
      self->read();
    });
  }

 private:
  class channel : public ws_channel {
   public:
    explicit channel(std::shared_ptr<ws_session> s) : s_(std::move(s)) {}
    bool send(std::string text) override {
      if (!open()) return false;
      asio::post(s_->ws_.get_executor(), [s = s_, text = std::move(text)]() mutable {
        s->frames_.push_back(std::move(text));
        s->pump();
      });
      return true;
    }
    bool open() const override { return !s_->gone_ && !s_->stopping_; }
    void close() override {
      asio::post(s_->ws_.get_executor(), [s = s_] {
        s->closing_ = true;
        s->pump();
      });
    }

   private:
    std::shared_ptr<ws_session> s_;
  };

  void read() {
    ws_.async_read(buf_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) {
        self->gone_ = true;
        self->on_text_ = nullptr;  // lets the route's state go
        return;
      }
      auto text = beast::buffers_to_string(self->buf_.data());
      self->buf_.consume(self->buf_.size());
      if (self->on_text_) self->on_text_(std::move(text));
      self->read();
    });
  }

  void pump() {
    if (writing_ || gone_) return;
    if (frames_.empty()) {
      if (!closing_ || close_sent_) return;
      close_sent_ = true;
      ws_.async_close(websocket::close_code::normal,
                      [self = shared_from_this()](beast::error_code) { self->gone_ = true; });
      return;
    }
    writing_ = true;
    auto data = std::make_shared<std::string>(std::move(frames_.front()));
    frames_.pop_front();
    ws_.text(true);
    ws_.async_write(asio::buffer(*data), [self = shared_from_this(), data](beast::error_code ec, size_t) {
      self->writing_ = false;
      if (ec) {
        self->gone_ = true;
        self->frames_.clear();
        return;
      }
      self->pump();
    });
  }

  websocket::stream<beast::tcp_stream> ws_;
  const std::atomic<bool>& stopping_;
  beast::flat_buffer buf_;
  std::function<void(std::string)> on_text_;
  std::deque<std::string> frames_;  // strand only
  bool writing_ = false, closing_ = false, close_sent_ = false;
  std::atomic<bool> gone_{false};
};

class session : public std::enable_shared_from_this<session> {
 public:
  session(tcp::socket sock, const server_options& opts, const handler_fn& handler,
          std::atomic<int>& in_flight, const std::atomic<bool>& stopping)
      : stream_(std::move(sock)),
        opts_(opts),
        handler_(handler),
        in_flight_(in_flight),
        stopping_(stopping) {}

  void start() { read(); }

 private:
  /// The writer a streaming route gets: each call hops onto the session's strand.
  class chunk_writer : public stream_writer {
   public:
    explicit chunk_writer(std::shared_ptr<session> s) : s_(std::move(s)) {}
    ~chunk_writer() override { close(); }
    bool write(std::string data) override {
      if (!open()) return false;
      s_->queued_ += data.size();
      asio::post(s_->stream_.get_executor(), [s = s_, data = std::move(data)]() mutable {
        s->chunks_.push_back(std::move(data));
        s->pump();
      });
      return true;
    }
    bool open() const override { return !s_->gone_ && !s_->stopping_; }
    size_t queued_bytes() const override { return s_->queued_; }
    void close() override {
      if (closed_.exchange(true)) return;
      asio::post(s_->stream_.get_executor(), [s = s_] {
        s->closing_ = true;
        s->pump();
      });
    }

   private:
    std::shared_ptr<session> s_;
    std::atomic<bool> closed_{false};
  };

  /// Waits up to idle_timeout for a request's first byte, then reads it by
  /// read_head and read_body, each with its own deadline.
  void read() {
    parser_.emplace();
    limit(*parser_, request_limits{opts_.max_body_bytes});
    if (buf_.size() > 0) return read_head();  // a pipelined request has begun
    stream_.expires_after(opts_.idle_timeout);
    stream_.async_read_some(buf_.prepare(4096),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec) return self->close();  // idle, closed: nothing to answer
                              self->buf_.commit(n);
                              self->read_head();
                            });
  }

  /// The head must be complete header_timeout after its first byte.
  void read_head() {
    stream_.expires_after(opts_.header_timeout);
    http::async_read_header(stream_, buf_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              if (ec) return self->on_read(ec);
                              self->body_start_ = steady_now();
                              self->body_bytes_ = 0;
                              self->read_body();
                            });
  }

  /// Each read of the body must end by the instant the bytes received so far
  /// fall behind body_min_rate (counted after body_grace).
  void read_body() {
    if (parser_->is_done()) return on_read({});
    auto rate = std::max<size_t>(1, opts_.body_min_rate);
    stream_.expires_at(body_start_ + opts_.body_grace +
                       std::chrono::milliseconds(body_bytes_ * 1000 / rate));
    http::async_read_some(stream_, buf_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, size_t n) {
                            if (ec) return self->on_read(ec);
                            self->body_bytes_ += n;
                            self->read_body();
                          });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == asio::error::connection_reset || ec == asio::error::eof)
      return close();
    if (ec) {
      auto r = refusal_for(ec);
      return write_and_close(r.status, error_body(r.code, r.message));
    }
    auto msg = parser_->release();
    upgrade_.reset();
    if (websocket::is_upgrade(msg))
      upgrade_ = std::make_shared<http::request<http::string_body>>(msg);
    keep_alive_ = msg.keep_alive();
    version_ = msg.version();
    auto parsed = to_request(std::move(msg));
    if (!parsed) {  // a malformed escape in the target
      auto why = view(parsed.error()).message;
      return write_and_close(400, error_body(errc::invalid_argument, why));
    }
    auto req = std::move(*parsed);
    beast::error_code peer_ec;
    auto peer = stream_.socket().remote_endpoint(peer_ec);
    if (!peer_ec) req.peer = peer.address().to_string();
    ++in_flight_;
    auto self = shared_from_this();
    auto executor = stream_.get_executor();
    auto replied = std::make_shared<std::atomic<bool>>(false);
    handler_(std::move(req), [self, executor, replied](http_response res) {
      if (replied->exchange(true)) return;  // a route answered twice: keep the first
      asio::post(executor, [self, res = std::move(res)]() mutable {
        --self->in_flight_;
        self->write(std::move(res));
      });
    });
  }

  void write(http_response r) {
    if (r.websocket) {
      if (!upgrade_)
        return write_and_close(400, error_body(errc::invalid_argument,
                                               "this route needs a WebSocket upgrade request"));
      // The connection now belongs to the WebSocket session.
      return std::make_shared<ws_session>(std::move(stream_), stopping_)
          ->start(upgrade_, std::move(r.websocket));
    }
    if (r.stream) return write_stream(std::move(r));
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(version_);
    res->result(r.status);
    res->set(http::field::server, "aisched");
    res->set(http::field::content_type, r.content_type);
    for (auto& [name, value] : r.headers) res->set(name, value);
    res->keep_alive(keep_alive_);
    res->body() = std::move(r.body);
    res->prepare_payload();
    stream_.expires_after(opts_.idle_timeout);  // the read's deadline may have passed
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res](beast::error_code ec, size_t) {
                        if (ec || !res->keep_alive()) return self->close();
                        self->read();
                      });
  }

  /// Sends the headers of a chunked response, then hands the route a writer.
  /// The connection closes when the body ends: no pipelining behind a stream.
  void write_stream(http_response r) {
    auto res = std::make_shared<http::response<http::empty_body>>();
    res->version(version_);
    res->result(r.status);
    res->set(http::field::server, "aisched");
    res->set(http::field::content_type, r.content_type);
    res->set(http::field::cache_control, "no-cache");
    for (auto& [name, value] : r.headers) res->set(name, value);
    res->keep_alive(false);
    res->chunked(true);
    auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*res);
    stream_.expires_never();
    http::async_write_header(
        stream_, *sr,
        [self = shared_from_this(), res, sr, start = std::move(r.stream)](beast::error_code ec,
                                                                          size_t) {
          if (ec) {
            self->gone_ = true;
            return self->close();
          }
          start(std::make_shared<chunk_writer>(self));
        });
  }

  /// Writes queued chunks one at a time; after close(), the last chunk.
  void pump() {
    if (writing_ || finished_) return;
    if (chunks_.empty()) {
      if (!closing_) return;
      finished_ = true;
      asio::async_write(stream_, http::make_chunk_last(),
                        [self = shared_from_this()](beast::error_code, size_t) { self->close(); });
      return;
    }
    writing_ = true;
    auto data = std::make_shared<std::string>(std::move(chunks_.front()));
    chunks_.pop_front();
    asio::async_write(stream_, http::make_chunk(asio::buffer(*data)),
                      [self = shared_from_this(), data](beast::error_code ec, size_t) {
                        self->writing_ = false;
                        self->queued_ -= data->size();
                        if (ec) {
                          self->gone_ = true;
                          self->finished_ = true;
                          self->chunks_.clear();
                          self->queued_ = 0;
                          return self->close();
                        }
                        self->pump();
                      });
  }

  void write_and_close(unsigned status, std::string body) {
    keep_alive_ = false;
    version_ = 11;
    draining_ = true;
    write(http_response{status, std::move(body), "application/json"});
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    if (draining_) drain();
  }

  /// After refusing a request mid-body, read and discard what the client still
  /// sends (bounded) so closing does not reset the connection before the client
  /// has read our answer.
  void drain() {
    if (drained_ > opts_.max_body_bytes * 16) return;
    stream_.expires_after(std::chrono::seconds(5));
    stream_.async_read_some(asio::buffer(scratch_),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec) return;
                              self->drained_ += n;
                              self->drain();
                            });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<http::request<http::string_body>> upgrade_;  // the request asked for a WebSocket
  std::chrono::steady_clock::time_point body_start_;  // the end of the head being read
  size_t body_bytes_ = 0;                             // of its body, received so far
  const server_options& opts_;
  const handler_fn& handler_;
  std::atomic<int>& in_flight_;
  const std::atomic<bool>& stopping_;
  // Streamed bodies (touched on the strand only, except gone_).
  std::deque<std::string> chunks_;
  bool writing_ = false, closing_ = false, finished_ = false;
  std::atomic<bool> gone_{false};
  std::atomic<size_t> queued_{0};  // bytes written by the route, not yet sent
  bool keep_alive_ = false;
  unsigned version_ = 11;
  bool draining_ = false;
  size_t drained_ = 0;
  std::array<char, 16 * 1024> scratch_;
};

}  // namespace

struct server::impl {
  server_options opts;
  handler_fn handler;
  asio::io_context ioc;
  std::optional<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
  std::atomic<int> in_flight{0};
  std::atomic<bool> stopping{false};  // streams end: their writers report closed
  bool stopped = false;

  void accept() {
    acceptor->async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket s) {
      if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
      // Asio opens sockets without close-on-exec; runs must never inherit a client's.
      if (!ec) ::fcntl(s.native_handle(), F_SETFD, FD_CLOEXEC);
      if (!ec) std::make_shared<session>(std::move(s), opts, handler, in_flight, stopping)->start();
      accept();
    });
  }
};

server::server(server_options opts, handler_fn handler) : impl_(new impl) {
  impl_->opts = std::move(opts);
  impl_->handler = std::move(handler);
}

server::~server() { stop(); }

caf::expected<uint16_t> server::start() {
  beast::error_code ec;
  auto addr = asio::ip::make_address(impl_->opts.host, ec);
  if (ec)
    return make_error(errc::invalid_argument, "http-addr",
                      "cannot parse address '" + impl_->opts.host + "'");
  tcp::endpoint ep{addr, impl_->opts.port};
  auto& acc = impl_->acceptor.emplace(impl_->ioc);
  acc.open(ep.protocol(), ec);
  if (!ec) ::fcntl(acc.native_handle(), F_SETFD, FD_CLOEXEC);  // see accept()
  if (!ec) acc.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acc.bind(ep, ec);
  if (!ec) acc.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return make_error(errc::unavailable, "http-addr",
                      "cannot listen on " + impl_->opts.host + ":" +
                          std::to_string(impl_->opts.port) + ": " + ec.message());
  auto port = acc.local_endpoint().port();
  impl_->accept();
  for (unsigned i = 0; i < std::max(1u, impl_->opts.io_threads); ++i)
    impl_->threads.emplace_back([this] { impl_->ioc.run(); });
  return port;
}

void server::stop() {
  if (impl_->stopped || impl_->threads.empty()) return;
  impl_->stopped = true;
  impl_->stopping = true;
  asio::post(impl_->ioc, [this] {
    beast::error_code ignored;
    impl_->acceptor->close(ignored);
  });
  // Grace period for requests already handed to actors.
  for (int i = 0; i < 200 && impl_->in_flight.load() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  impl_->ioc.stop();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
}

}  // namespace aisched::gateway
