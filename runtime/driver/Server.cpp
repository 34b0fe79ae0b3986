// The HTTP server of `NAME_driver serve` (see Server.h): one event loop
// (Boost.Asio) holds every connection, a few threads read request bodies and
// write answers, and one thread runs the batches (BatchQueue).
#include "runtime/driver/Server.h"

#include "runtime/driver/HttpConnection.h"
#include "runtime/driver/RequestWorkers.h"
#include "runtime/driver/ServeMetrics.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>

#include <csignal>
#include <sys/resource.h>
#include <unordered_set>

namespace foldc::rt {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using boost::system::error_code;
using http::Answer;
using http::jsonAnswer;

namespace {

/// Open files allowed to the process: raised to the hard limit, since every
/// connection is one. A few are kept for the model's own files.
size_t connectionsAllowed(size_t wanted) {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0)
    return wanted;
  if (files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
    getrlimit(RLIMIT_NOFILE, &files);
  }
  constexpr rlim_t kReserved = 64;
  if (files.rlim_cur == RLIM_INFINITY || files.rlim_cur <= kReserved)
    return wanted;
  return std::min(wanted, size_t(files.rlim_cur - kReserved));
}

Answer textAnswer(std::string text, std::string contentType = "text/plain") {
  Answer answer;
  answer.body = std::move(text);
  answer.contentType = std::move(contentType);
  return answer;
}

class HttpServer final : public http::ConnectionHost {
public:
  HttpServer(const ServeOptions &options, ParseExample parse, BatchQueue::RunBatch run)
      : options_(options), parse_(std::move(parse)), acceptor_(io_), signals_(io_, SIGTERM, SIGINT),
        retryAccept_(io_), workers_(options.threads),
        queue_(std::move(run), options.limits, [this](size_t size) { metrics_.countBatch(size); }) {
  }

  /// Binds the address; an error message when it cannot.
  std::string bind(int &port);
  /// Serves until SIGTERM or SIGINT and the drain after it.
  void run();

  const ServeOptions &options() const override { return options_; }
  bool stopping() const override { return stopping_; }
  http::Clock::time_point drainEnd() const override { return drainEnd_; }
  void handle(http::Request request, Reply reply) override;
  void answered(int status) override { metrics_.countResponse(status); }
  void closed(http::Connection &connection) override { connections_.erase(&connection); }

private:
  void accept();
  void stop();
  /// POST /infer, on a request thread.
  void infer(const std::string &text, const Reply &reply);
  /// Sends an answer from a worker (or the batching thread) back to the loop.
  Reply onLoop(Reply reply);

  const ServeOptions &options_;
  ParseExample parse_;
  ServeMetrics metrics_;
  // Destroyed in reverse: the batching thread first (its callbacks hand work
  // to the workers), then the workers (whose last tasks may release the last
  // hold on a connection, whose socket needs the loop), then the loop.
  asio::io_context io_{1};
  asio::ip::tcp::acceptor acceptor_;
  asio::signal_set signals_;
  asio::steady_timer retryAccept_;
  RequestWorkers workers_;
  BatchQueue queue_;
  std::unordered_set<http::Connection *> connections_;
  size_t maxConnections_ = 0;
  bool stopping_ = false;
  http::Clock::time_point drainEnd_;
};

std::string HttpServer::bind(int &port) {
  error_code ec;
  asio::ip::address address = asio::ip::make_address(options_.host, ec);
  if (ec)
    return "'" + options_.host + "' is not an IP address";
  asio::ip::tcp::endpoint at(address, static_cast<unsigned short>(port));
  acceptor_.open(at.protocol(), ec);
  // SO_REUSEADDR (not SO_REUSEPORT): a restart binds past connections in
  // TIME_WAIT, and a second server on a port in use fails here.
  if (!ec)
    acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec)
    acceptor_.bind(at, ec);
  if (!ec)
    acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return ec.message();
  port = acceptor_.local_endpoint().port();
  maxConnections_ = connectionsAllowed(options_.maxConnections);
  return "";
}

void HttpServer::run() {
  signals_.async_wait([this](error_code ec, int) {
    if (!ec)
      stop();
  });
  accept();
  io_.run();
  queue_.close();
}

void HttpServer::accept() {
  acceptor_.async_accept([this](error_code ec, asio::ip::tcp::socket socket) {
    if (stopping_)
      return;
    if (ec) { // out of files, most likely: try again shortly, without spinning
      retryAccept_.expires_after(std::chrono::milliseconds(50));
      retryAccept_.async_wait([this](error_code) {
        if (!stopping_)
          accept();
      });
      return;
    }
    auto connection = std::make_shared<http::Connection>(std::move(socket), *this);
    bool full = connections_.size() >= maxConnections_;
    connections_.insert(connection.get());
    if (full) {
      connection->refuse(
          jsonAnswer(503, {{"error", "too many connections (--max-connections " +
                                         std::to_string(maxConnections_) + "); try again later"}}));
    } else {
      connection->start();
    }
    accept();
  });
}

void HttpServer::stop() {
  stopping_ = true;
  drainEnd_ = http::Clock::now() + std::chrono::milliseconds(options_.drainMs);
  error_code ignored;
  acceptor_.close(ignored);
  retryAccept_.cancel();
  // A second signal ends the process the usual way.
  signals_.clear(ignored);
  for (http::Connection *connection : connections_)
    connection->drain();
}

http::ConnectionHost::Reply HttpServer::onLoop(Reply reply) {
  // The loop runs until the answer is written, even once every client is idle.
  auto guard = std::make_shared<asio::executor_work_guard<asio::io_context::executor_type>>(
      io_.get_executor());
  return [reply = std::move(reply), guard](Answer answer) {
    reply(std::move(answer));
    guard->reset();
  };
}

void HttpServer::handle(http::Request request, Reply reply) {
  std::string_view target(request.target().data(), request.target().size());
  std::string_view path = target.substr(0, target.find('?'));
  auto only = [&](bhttp::verb verb, const char *name) {
    if (request.method() == verb)
      return true;
    Answer refused = jsonAnswer(405, {{"error", std::string(path) + " answers " + name + " only"}});
    refused.headers.emplace_back("Allow", name);
    reply(std::move(refused));
    return false;
  };
  if (path == "/healthz") {
    if (only(bhttp::verb::get, "GET"))
      reply(textAnswer("ok\n"));
  } else if (path == "/metrics") {
    if (only(bhttp::verb::get, "GET"))
      reply(textAnswer(metrics_.text(), "text/plain; version=0.0.4"));
  } else if (path == "/infer") {
    if (!only(bhttp::verb::post, "POST"))
      return;
    if (boost::beast::iequals(request[bhttp::field::content_type].substr(0, 10), "multipart/"))
      return reply(
          jsonAnswer(415, {{"error", "body: a multipart form; send the JSON itself as the body "
                                     "(Content-Type: application/json)"}}));
    workers_.enqueue([this, text = std::move(request.body()), reply = onLoop(std::move(reply))] {
      infer(text, reply);
    });
  } else {
    reply(jsonAnswer(404, {{"error", "no endpoint " + std::string(path) +
                                         ": serve answers POST /infer, GET /healthz and "
                                         "GET /metrics"}}));
  }
}

void HttpServer::infer(const std::string &text, const Reply &reply) {
  auto begin = std::chrono::steady_clock::now();
  RequestBody body;
  try {
    body = parseRequestBody(text, parse_);
  } catch (const DataError &e) {
    return reply(jsonAnswer(400, {{"error", e.what()}}));
  } catch (const std::exception &e) { // out of memory: this request fails, not the server
    return reply(jsonAnswer(500, {{"error", std::string("body: ") + e.what()}}));
  }
  size_t count = body.examples.size();
  if (count > options_.limits.maxQueued)
    return reply(jsonAnswer(
        413, {{"error", "body: " + std::to_string(count) + " examples, more than --max-queue " +
                            std::to_string(options_.limits.maxQueued) +
                            " can ever hold: send them in smaller requests"}}));
  bool many = body.many;
  bool queued = queue_.submit(std::move(body.examples), [=, this](std::vector<Outcome> outcomes) {
    // The answer is built on a request thread, not the batching one.
    workers_.enqueue([=, this, outcomes = std::move(outcomes)]() mutable {
      nlohmann::json answers = nlohmann::json::array();
      for (size_t i = 0; i < outcomes.size(); ++i) {
        if (!outcomes[i].output)
          return reply(jsonAnswer(
              400, {{"error", "body: " + (many ? "[" + std::to_string(i) + "]: " : std::string()) +
                                  outcomes[i].error}}));
        answers.push_back({{"output", std::move(*outcomes[i].output)}});
      }
      metrics_.countRequest(
          count, std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
      reply(jsonAnswer(200, many ? answers : answers[0]));
    });
  });
  if (!queued)
    reply(jsonAnswer(503, {{"error", "the queue is full (--max-queue); try again later"}}));
}

} // namespace

RequestBody parseRequestBody(const std::string &text, const ParseExample &parse) {
  static const std::string where = "body";
  JsonPath root(where, 1);
  nlohmann::json body = parseJson(text, root);
  RequestBody request;
  request.many = body.is_array();
  if (!request.many) {
    request.examples.push_back(parse(body, root));
    return request;
  }
  for (size_t i = 0; i < body.size(); ++i)
    request.examples.push_back(parse(body[i], root.index(i)));
  return request;
}

void serveHttp(const ServeOptions &options, ParseExample parse, BatchQueue::RunBatch run,
               const std::function<void(int)> &onListening) {
  HttpServer server(options, std::move(parse), std::move(run));
  int port = options.port;
  if (std::string error = server.bind(port); !error.empty())
    throw std::runtime_error("cannot listen on " + options.host + ":" +
                             std::to_string(options.port) + ": " + error);
  onListening(port);
  server.run();
}

} // namespace foldc::rt
