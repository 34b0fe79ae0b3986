// One HTTP/1.1 connection of `serve`: reads its requests one after another
// (pipelined ones in order) with a limit on every phase, hands each whole
// request to the server and writes the answers. Waiting (for a client, or
// for the model) holds no thread: every connection lives on one event loop.
#pragma once

#include "runtime/driver/Server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace foldc::rt::http {

using Request = boost::beast::http::request<boost::beast::http::string_body>;
using Clock = std::chrono::steady_clock;

/// What the server answers to one request.
struct Answer {
  int status = 200;
  std::string body;
  std::string contentType = "application/json";
  std::vector<std::pair<std::string, std::string>> headers; ///< more fields (Allow)
  bool close = false;                                       ///< end the connection after it
};
/// An answer of JSON (bytes of the client's that are not UTF-8 replaced).
Answer jsonAnswer(int status, const nlohmann::json &body);

class Connection;

/// What a connection asks of its server; called on the event loop's thread.
class ConnectionHost {
public:
  /// Sends an answer to the connection; may be called from any thread, once.
  using Reply = std::function<void(Answer)>;

  virtual const ServeOptions &options() const = 0;
  /// After SIGTERM: every request read from now on is answered 503.
  virtual bool stopping() const = 0;
  /// Clients are idle at most until then (meaningful while stopping).
  virtual Clock::time_point drainEnd() const = 0;
  /// Answers a whole request through `reply`.
  virtual void handle(Request request, Reply reply) = 0;
  /// An answer was written.
  virtual void answered(int status) = 0;
  /// The connection is closed; it will read and write no more.
  virtual void closed(Connection &connection) = 0;

protected:
  ~ConnectionHost() = default;
};

class Connection : public std::enable_shared_from_this<Connection> {
public:
  Connection(boost::asio::ip::tcp::socket socket, ConnectionHost &host);

  /// Reads the first request.
  void start();
  /// Answers `answer` without reading anything, then closes (the server is
  /// full).
  void refuse(Answer answer);
  /// The server is stopping: a connection waiting for a request waits at
  /// most until the host's drainEnd().
  void drain();

private:
  /// Where the connection is; each phase has its own deadline.
  enum class Phase { Idle, Reading, Handling, Writing, Lingering, Closed };

  void readRequest();
  /// Parses what is buffered; dispatches a request once whole.
  void parseBuffered();
  void readMore();
  void dispatch();
  /// A request that cannot be read on: its answer, then the connection ends.
  void fail(Answer answer);
  void write(Answer answer);
  /// After the last answer: the client's remaining bytes are read and
  /// dropped for a while, so that closing does not reset the connection
  /// before the client has read the answer.
  void linger();
  void close();

  void armDeadline(Clock::time_point at);
  void onDeadline();
  Clock::time_point readingDeadline() const;
  bool expectsContinue() const;

  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer deadline_;
  ConnectionHost &host_;
  Phase phase_ = Phase::Idle;
  bool timedOut_ = false;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  Clock::time_point requestBegan_;
  bool continued_ = false;       ///< `100 Continue` sent for this request
  unsigned requestVersion_ = 11; ///< the answer's HTTP version
  bool keepAlive_ = true;        ///< the client keeps the connection after the answer
  std::shared_ptr<boost::beast::http::response<boost::beast::http::string_body>> response_;
  std::shared_ptr<std::string> rawWrite_; ///< `100 Continue`
  std::vector<char> discard_;             ///< what lingering reads
};

} // namespace foldc::rt::http
