// infer and serve (see Inference.h).
#include "runtime/driver/Inference.h"

#include "runtime/driver/BatchQueue.h"
#include "runtime/driver/Dataset.h"
#include "runtime/driver/InitialParams.h"
#include "runtime/driver/Server.h"
#include "runtime/support/Timing.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <future>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

namespace foldc::rt {

namespace {

/// What serve and `infer --data -` run on each batch the queue forms.
BatchQueue::RunBatch inferParsedBatch(Session &session) {
  return [&session](std::span<const BatchQueue::Item> items) {
    return session.model.inferParsed(items, session.runOptions());
  };
}

BatchQueue::Limits batchLimits(const DriverOptions &options) {
  BatchQueue::Limits limits;
  limits.maxBatch = size_t(options.batchSize);
  limits.maxWait = std::chrono::microseconds(options.maxWaitMicros);
  limits.maxQueued = size_t(options.maxQueue);
  return limits;
}

/// The outputs of `batch`. When the batch fails (a word id outside the
/// embedding, a beam width of 0...), each example runs alone: the others
/// keep their outputs, and each failing one is reported on stderr as
/// `FILE:LINE: what` and has none.
std::vector<std::optional<nlohmann::json>> inferBatch(Session &session, const Dataset &data,
                                                      DriverModel::Indices batch) {
  std::vector<std::optional<nlohmann::json>> outputs;
  try {
    for (nlohmann::json &o : session.model.infer(data.set, batch, session.runOptions()))
      outputs.emplace_back(std::move(o));
    return outputs;
  } catch (const std::exception &) {
    outputs.clear();
  }
  for (int32_t example : batch) {
    try {
      outputs.emplace_back(std::move(session.model.infer(
          data.set, DriverModel::Indices(&example, 1), session.runOptions())[0]));
    } catch (const std::exception &e) {
      std::cerr << data.file << ":" << data.lines[size_t(example)] << ": " << e.what() << '\n';
      outputs.emplace_back(std::nullopt);
    }
  }
  return outputs;
}

/// Answers printed in the order their lines came, by a thread of their own,
/// so that reading the next line never waits for an answer.
class OrderedPrinter {
public:
  OrderedPrinter() : thread_([this] { print(); }) {}
  ~OrderedPrinter() { finish(); }

  void add(long line, std::future<std::vector<Outcome>> outcome) {
    std::lock_guard lock(mutex_);
    pending_.push_back({line, std::move(outcome)});
    changed_.notify_one();
  }
  /// A line that could not be read, reported at once on stderr.
  void reject(long line, const std::exception &e) {
    std::lock_guard lock(mutex_);
    std::cerr << (dynamic_cast<const DataError *>(&e) ? "" : "-:" + std::to_string(line) + ": ")
              << e.what() << std::endl;
    ++failed_;
  }
  /// Prints what is pending, then ends; gives the count of failed lines.
  size_t finish() {
    {
      std::lock_guard lock(mutex_);
      ended_ = true;
      changed_.notify_one();
    }
    if (thread_.joinable())
      thread_.join();
    return failed_;
  }

private:
  struct Pending {
    long line;
    std::future<std::vector<Outcome>> outcome;
  };

  void print() {
    for (;;) {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return ended_ || !pending_.empty(); });
      if (pending_.empty())
        return;
      Pending next = std::move(pending_.front());
      pending_.pop_front();
      lock.unlock();
      Outcome o = std::move(next.outcome.get().at(0));
      if (o.output) {
        std::cout << nlohmann::json{{"line", next.line}, {"output", *o.output}}.dump() << std::endl;
      } else {
        std::lock_guard relock(mutex_);
        std::cerr << "-:" << next.line << ": " << o.error << std::endl;
        ++failed_;
      }
    }
  }

  std::deque<Pending> pending_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool ended_ = false;
  size_t failed_ = 0;
  std::thread thread_;
};

/// `infer --data -`: answers each line of standard input as it comes,
/// batching the lines that arrive within --max-wait-us of each other. A bad
/// line is reported on stderr as `-:LINE: what`; the others still get their
/// answers, in order.
int inferStream(Session &session) {
  startParams(session, false);
  BatchQueue queue(inferParsedBatch(session), batchLimits(session.options));
  OrderedPrinter printer;
  static const std::string stdinName = "-";
  std::string text;
  for (long line = 1; std::getline(std::cin, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    BatchQueue::Item item;
    try {
      JsonPath at(stdinName, line);
      item = session.model.parseExample(parseJson(text, at), at);
    } catch (const std::exception &e) {
      printer.reject(line, e);
      continue;
    }
    std::optional<std::future<std::vector<Outcome>>> outcome;
    while (!(outcome = queue.submit({item}))) // the queue is full: wait for it to drain
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    printer.add(line, std::move(*outcome));
  }
  size_t failed = printer.finish();
  int status = flushed();
  return failed ? 1 : status;
}

} // namespace

int infer(Session &session) {
  if (!session.leader()) // outputs per example: the other ranks have nothing to do
    return 0;
  const DriverOptions &options = session.options;
  if (options.data == "-")
    return inferStream(session);
  Dataset data = loadDataset(session, 0, options.data, options.limit);
  startParams(session, false);
  auto begin = std::chrono::steady_clock::now();
  std::vector<int32_t> all = data.indices();
  size_t failed = 0;
  for (size_t at = 0; at < all.size(); at += size_t(options.batchSize)) {
    auto batch = session.batchAt(all, at);
    std::vector<std::optional<nlohmann::json>> outputs = inferBatch(session, data, batch);
    for (size_t i = 0; i < outputs.size(); ++i) { // each names the line of --data it came from
      if (!outputs[i]) {
        ++failed;
        continue;
      }
      std::cout
          << nlohmann::json{{"line", data.lines[size_t(batch[i])]}, {"output", *outputs[i]}}.dump()
          << '\n';
    }
  }
  double seconds = secondsSince(begin);
  std::fprintf(stderr, "infer: %zu examples in %.3g s (%.0f examples/s)\n", all.size(), seconds,
               double(all.size()) / seconds);
  if (failed)
    std::fprintf(stderr, "infer: %zu of %zu examples failed (reported above)\n", failed,
                 all.size());
  int status = flushed();
  return failed ? 1 : status;
}

int serve(Session &session) {
  startParams(session, false);
  const DriverOptions &options = session.options;
  ServeOptions o;
  o.host = options.host;
  o.port = options.port;
  o.limits = batchLimits(options);
  o.maxBodyBytes = size_t(options.maxBodyBytes);
  o.threads = options.httpThreads;
  o.maxConnections = size_t(options.maxConnections);
  o.readTimeoutMs = options.readTimeoutMs;
  o.requestTimeoutMs = options.requestTimeoutMs;
  o.idleTimeoutMs = options.idleTimeoutMs;
  o.drainMs = options.drainMs;
  serveHttp(
      o,
      [&session](const nlohmann::json &value, const JsonPath &at) {
        return session.model.parseExample(value, at);
      },
      inferParsedBatch(session),
      [&](int port) {
        std::cerr << "serving on http://" << o.host << ":" << port << " (batches of up to "
                  << o.limits.maxBatch << ", waiting at most " << o.limits.maxWait.count() << " us)"
                  << std::endl;
      });
  std::cerr << "stopped: every request in flight was answered" << std::endl;
  return 0;
}

} // namespace foldc::rt
