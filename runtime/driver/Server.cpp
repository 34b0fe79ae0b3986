// The HTTP server of `NAME_driver serve` (see Server.h).
#include "runtime/driver/Server.h"

#include "runtime/driver/ServeMetrics.h"
#include "runtime/support/Threads.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <sys/socket.h>

namespace foldc::rt {

namespace {

/// httplib's worker pool, on threads with large stacks: reading an example
/// recurses once per level of its data, and a deep tree is data like any
/// other (the driver's own threads have 1 GiB stacks for the same reason).
class LargeStackPool : public httplib::TaskQueue {
public:
  explicit LargeStackPool(int threads) {
    supervisor_ = std::thread(
        [this, threads] { onThreads(size_t(256) << 20, threads, [this](int) { work(); }); });
  }
  ~LargeStackPool() override { shutdown(); }

  void enqueue(std::function<void()> task) override {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
    changed_.notify_one();
  }
  /// Runs what is queued, then ends the workers.
  void shutdown() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      changed_.notify_all();
    }
    if (supervisor_.joinable())
      supervisor_.join();
  }

private:
  void work() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty())
          return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread supervisor_;
};

/// Set by SIGTERM or SIGINT (async-signal-safe); a watcher stops the server.
std::atomic<bool> stopRequested{false};
extern "C" void requestStop(int) { stopRequested.store(true); }

/// SIGTERM and SIGINT stop the server while it runs; the previous handlers
/// come back after.
class StopOnSignals {
public:
  StopOnSignals() {
    stopRequested.store(false);
    previousTerm_ = std::signal(SIGTERM, requestStop);
    previousInt_ = std::signal(SIGINT, requestStop);
  }
  ~StopOnSignals() {
    std::signal(SIGTERM, previousTerm_);
    std::signal(SIGINT, previousInt_);
  }

private:
  void (*previousTerm_)(int);
  void (*previousInt_)(int);
};

void reply(httplib::Response &res, int status, const nlohmann::json &body) {
  res.status = status;
  // Messages quote what the client sent: bytes that are not UTF-8 are replaced.
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                  "application/json");
}

/// POST /infer.
void infer(const std::string &text, httplib::Response &res, const ParseExample &parse,
           BatchQueue &queue, ServeMetrics &metrics) {
  auto begin = std::chrono::steady_clock::now();
  RequestBody body;
  try {
    body = parseRequestBody(text, parse);
  } catch (const DataError &e) {
    return reply(res, 400, {{"error", e.what()}});
  }
  bool many = body.many;
  size_t count = body.examples.size();
  auto pending = queue.submit(std::move(body.examples));
  if (!pending)
    return reply(res, 503, {{"error", "the queue is full (--max-queue); try again later"}});
  std::vector<Outcome> outcomes = pending->get();
  nlohmann::json answers = nlohmann::json::array();
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (!outcomes[i].output)
      return reply(res, 400,
                   {{"error", "body: " + (many ? "[" + std::to_string(i) + "]: " : std::string()) +
                                  outcomes[i].error}});
    answers.push_back({{"output", std::move(*outcomes[i].output)}});
  }
  metrics.countRequest(
      count, std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  reply(res, 200, many ? answers : answers[0]);
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

int serveHttp(const ServeOptions &options, ParseExample parse, BatchQueue::RunBatch run,
              const std::function<void(int)> &onListening) {
  ServeMetrics metrics;
  BatchQueue queue(std::move(run), options.limits, [&](size_t size) { metrics.countBatch(size); });
  httplib::Server server;
  server.new_task_queue = [&] { return new LargeStackPool(options.threads); };
  server.set_payload_max_length(options.maxBodyBytes);
  server.set_read_timeout(options.readTimeoutMs / 1000, options.readTimeoutMs % 1000 * 1000);
  server.set_write_timeout(options.readTimeoutMs / 1000, options.readTimeoutMs % 1000 * 1000);
  // A connection waits this long (whole seconds) for its next request.
  server.set_keep_alive_timeout(std::max(1L, (options.readTimeoutMs + 999) / 1000));
  server.set_logger([&](const httplib::Request &, const httplib::Response &res) {
    metrics.countResponse(res.status);
  });
  // The body is read through a content reader: cpp-httplib answers 413 to
  // a body over 8 KB sent as a form (curl -d's and urllib's default type)
  // when it reads the body itself.
  server.Post("/infer", [&](const httplib::Request &req, httplib::Response &res,
                            const httplib::ContentReader &read) {
    std::string text;
    bool whole = read([&](const char *data, size_t size) {
      text.append(data, size);
      return true;
    });
    if (!whole) {
      bool tooLarge = std::strtoull(req.get_header_value("Content-Length").c_str(), nullptr, 10) >
                          options.maxBodyBytes ||
                      text.size() >= options.maxBodyBytes;
      return tooLarge ? reply(res, 413,
                              {{"error", "body: larger than --max-body-bytes " +
                                             std::to_string(options.maxBodyBytes)}})
                      : reply(res, 400, {{"error", "body: could not be read to its end"}});
    }
    infer(text, res, parse, queue, metrics);
  });
  server.Get("/healthz", [](const httplib::Request &, httplib::Response &res) {
    res.set_content("ok\n", "text/plain");
  });
  server.Get("/metrics", [&](const httplib::Request &, httplib::Response &res) {
    res.set_content(metrics.text(), "text/plain; version=0.0.4");
  });
  // Small requests answered at once: no Nagle delay (40 ms with delayed ACKs).
  server.set_tcp_nodelay(true);
  // The library listens with a backlog of 5: a burst of new clients would
  // see their connections dropped and retried a second later. The listening
  // socket is caught as it is made and given the system's largest backlog.
  int listening = -1;
  server.set_socket_options([&](socket_t sock) {
    httplib::default_socket_options(sock);
    listening = sock;
  });
  int port = options.port;
  if (port == 0)
    port = server.bind_to_any_port(options.host);
  else if (!server.bind_to_port(options.host, port))
    port = -1;
  if (port < 0)
    return 1;
  if (listening >= 0)
    ::listen(listening, SOMAXCONN);
  StopOnSignals signals;
  std::thread watcher([&] {
    while (!stopRequested.load() && !server.is_running())
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    while (!stopRequested.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    server.stop();
  });
  onListening(port);
  server.listen_after_bind();
  stopRequested.store(true); // listening failed, or stopped: the watcher ends
  watcher.join();
  return 0;
}

} // namespace foldc::rt
