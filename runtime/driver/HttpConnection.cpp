// One connection of `serve` (see HttpConnection.h).
#include "runtime/driver/HttpConnection.h"

#include <boost/asio/write.hpp>
#include <boost/beast/http/write.hpp>

#include <algorithm>

namespace foldc::rt::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using boost::system::error_code;

namespace {

/// Request header fields larger than this get 431.
constexpr uint32_t kHeaderLimit = 32 * 1024;
/// How much one read takes from the socket.
constexpr size_t kReadChunk = 64 * 1024;
/// How long a closing connection drops what the client still sends.
constexpr auto kLingerAtMost = std::chrono::seconds(2);

std::chrono::milliseconds ms(long n) { return std::chrono::milliseconds(n); }

} // namespace

Answer jsonAnswer(int status, const nlohmann::json &body) {
  Answer answer;
  answer.status = status;
  answer.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return answer;
}

namespace {

/// What a request read after SIGTERM gets.
Answer stoppingAnswer() { return jsonAnswer(503, {{"error", "the server is stopping"}}); }

} // namespace

Connection::Connection(asio::ip::tcp::socket socket, ConnectionHost &host)
    : socket_(std::move(socket)), deadline_(socket_.get_executor()), host_(host) {}

void Connection::start() {
  error_code ignored;
  // Small answers go out at once: no Nagle delay (40 ms with delayed ACKs).
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
  readRequest();
}

void Connection::refuse(Answer answer) {
  answer.close = true;
  write(std::move(answer));
}

void Connection::drain() {
  if (phase_ == Phase::Idle || phase_ == Phase::Reading)
    armDeadline(std::min(deadline_.expiry(), host_.drainEnd()));
}

void Connection::readRequest() {
  parser_.emplace();
  parser_->header_limit(kHeaderLimit);
  parser_->body_limit(host_.options().maxBodyBytes);
  parser_->eager(true); // a body is parsed as it arrives, chunked or not
  continued_ = false;
  phase_ = Phase::Idle;
  parseBuffered();
}

Clock::time_point Connection::readingDeadline() const {
  const ServeOptions &o = host_.options();
  Clock::time_point at = phase_ == Phase::Idle ? Clock::now() + ms(o.idleTimeoutMs)
                                               : std::min(Clock::now() + ms(o.readTimeoutMs),
                                                          requestBegan_ + ms(o.requestTimeoutMs));
  return host_.stopping() ? std::min(at, host_.drainEnd()) : at;
}

void Connection::parseBuffered() {
  if (phase_ == Phase::Idle && buffer_.size() > 0) {
    phase_ = Phase::Reading; // the request's first byte: its own limits start
    requestBegan_ = Clock::now();
  }
  error_code ec;
  while (buffer_.size() > 0 && !parser_->is_done()) {
    size_t used = parser_->put(buffer_.data(), ec);
    buffer_.consume(used);
    if (ec == bhttp::error::need_more) {
      ec = {};
      break;
    }
    if (ec)
      break;
  }
  const ServeOptions &o = host_.options();
  if (ec == bhttp::error::body_limit)
    return fail(jsonAnswer(
        413, {{"error", "body: larger than --max-body-bytes " + std::to_string(o.maxBodyBytes)}}));
  if (ec == bhttp::error::header_limit)
    return fail(jsonAnswer(431, {{"error", "request header fields larger than " +
                                               std::to_string(kHeaderLimit) + " bytes"}}));
  if (ec)
    return fail(jsonAnswer(400, {{"error", "malformed HTTP request: " + ec.message()}}));
  if (parser_->is_done())
    return dispatch();
  if (parser_->is_header_done() && !continued_ && expectsContinue()) {
    // The client waits for leave to send its body.
    continued_ = true;
    rawWrite_ = std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n");
    asio::async_write(socket_, asio::buffer(*rawWrite_),
                      [self = shared_from_this()](error_code error, size_t) {
                        if (error)
                          return self->close();
                        self->readMore();
                      });
    return;
  }
  readMore();
}

bool Connection::expectsContinue() const {
  return beast::iequals(parser_->get()[bhttp::field::expect], "100-continue");
}

void Connection::readMore() {
  armDeadline(readingDeadline());
  socket_.async_read_some(
      buffer_.prepare(kReadChunk), [self = shared_from_this()](error_code ec, size_t n) {
        if (self->phase_ == Phase::Closed)
          return;
        if (self->timedOut_) {
          self->timedOut_ = false;
          if (self->phase_ == Phase::Idle)
            return self->close(); // an idle client is let go without a word
          if (self->host_.stopping())
            return self->fail(stoppingAnswer());
          return self->fail(jsonAnswer(
              408, {{"error", "request not received whole in time (--read-timeout-ms between "
                              "bytes, --request-timeout-ms in all)"}}));
        }
        if (ec)
          return self->close(); // the client went away
        self->buffer_.commit(n);
        self->parseBuffered();
      });
}

void Connection::dispatch() {
  phase_ = Phase::Handling;
  deadline_.cancel(); // the model's time is not the client's
  Request request = parser_->release();
  requestVersion_ = request.version();
  keepAlive_ = request.keep_alive();
  if (host_.stopping())
    return write(stoppingAnswer());
  host_.handle(std::move(request), [self = shared_from_this()](Answer answer) {
    asio::post(self->socket_.get_executor(),
               [self, answer = std::move(answer)]() mutable { self->write(std::move(answer)); });
  });
}

void Connection::fail(Answer answer) {
  if (parser_ && parser_->is_header_done())
    requestVersion_ = parser_->get().version();
  answer.close = true; // what follows in the stream cannot be told apart
  write(std::move(answer));
}

void Connection::write(Answer answer) {
  if (phase_ == Phase::Closed)
    return;
  phase_ = Phase::Writing;
  bool close = answer.close || !keepAlive_ || host_.stopping();
  response_ = std::make_shared<bhttp::response<bhttp::string_body>>(
      static_cast<bhttp::status>(answer.status), requestVersion_);
  response_->set(bhttp::field::content_type, answer.contentType);
  for (const auto &[name, value] : answer.headers)
    response_->set(name, value);
  response_->body() = std::move(answer.body);
  response_->keep_alive(!close);
  response_->prepare_payload();
  armDeadline(Clock::now() + ms(host_.options().readTimeoutMs)); // the client must take it
  bhttp::async_write(
      socket_, *response_,
      [self = shared_from_this(), status = answer.status, close](error_code ec, size_t) {
        if (self->phase_ == Phase::Closed)
          return;
        if (ec)
          return self->close();
        self->host_.answered(status);
        if (close)
          return self->linger();
        self->readRequest(); // a pipelined request may be buffered already
      });
}

void Connection::linger() {
  phase_ = Phase::Lingering;
  error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  if (discard_.empty()) {
    discard_.resize(kReadChunk);
    armDeadline(Clock::now() + kLingerAtMost);
  }
  socket_.async_read_some(asio::buffer(discard_),
                          [self = shared_from_this()](error_code ec, size_t) {
                            if (self->phase_ == Phase::Closed)
                              return;
                            if (ec || self->timedOut_)
                              return self->close();
                            self->linger();
                          });
}

void Connection::close() {
  if (phase_ == Phase::Closed)
    return;
  phase_ = Phase::Closed;
  deadline_.cancel();
  error_code ignored;
  socket_.close(ignored);
  host_.closed(*this);
}

void Connection::armDeadline(Clock::time_point at) {
  deadline_.expires_at(at);
  deadline_.async_wait([self = shared_from_this()](error_code ec) {
    if (!ec)
      self->onDeadline();
  });
}

void Connection::onDeadline() {
  if (phase_ == Phase::Closed || deadline_.expiry() > Clock::now())
    return;
  if (phase_ == Phase::Writing)
    return close(); // a client that does not take its answer
  // The pending read ends with operation_aborted and sees timedOut_.
  timedOut_ = true;
  error_code ignored;
  socket_.cancel(ignored);
}

} // namespace foldc::rt::http
