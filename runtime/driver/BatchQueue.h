// Dynamic batching for serving: requests of a few examples each arrive from
// many threads; one thread runs them together, in batches of at most a
// largest size, waiting at most a bounded time for a batch to fill.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace foldc::rt {

/// One example's result: its output, or why it has none.
struct Outcome {
  std::optional<nlohmann::json> output;
  std::string error;
};

class BatchQueue {
public:
  /// A parsed example, opaque to the queue (the model's own type).
  using Item = std::shared_ptr<const void>;
  /// Runs one batch: an output per item, in order; may throw (then each item
  /// of the batch runs alone, so that one bad example fails alone).
  using RunBatch = std::function<std::vector<nlohmann::json>(std::span<const Item>)>;

  struct Limits {
    size_t maxBatch = 32;                    ///< examples a batch holds at most
    std::chrono::microseconds maxWait{2000}; ///< how long a batch waits to fill
    size_t maxQueued = 4096;                 ///< examples waiting at most; then submit refuses
  };

  /// Starts the batching thread. `onBatch(size)` is told each batch's size.
  BatchQueue(RunBatch run, Limits limits, std::function<void(size_t)> onBatch = {});
  /// close(), then waits for the thread.
  ~BatchQueue();
  BatchQueue(const BatchQueue &) = delete;
  BatchQueue &operator=(const BatchQueue &) = delete;

  /// Is given a request's outcomes, in order, on the batching thread.
  using Done = std::function<void(std::vector<Outcome>)>;

  /// Queues `items` as one request; `done` gets their outcomes once all have
  /// run (they may be split over batches). False, and `done` never called,
  /// when the queue is full or closed.
  bool submit(std::vector<Item> items, Done done);
  /// submit(), the outcomes given by a future. Nullopt when full or closed.
  std::optional<std::future<std::vector<Outcome>>> submit(std::vector<Item> items);
  /// Refuses new requests; what is queued still runs.
  void close();

private:
  struct Request {
    std::vector<Outcome> outcomes;
    size_t remaining = 0;
    Done done;
  };
  struct Entry {
    Item item;
    std::shared_ptr<Request> request;
    size_t position;
    std::chrono::steady_clock::time_point queued;
  };

  void loop();
  /// Waits for a batch (or the end); takes it off the queue.
  std::vector<Entry> nextBatch();
  /// The outcomes of `batch`: together, or each alone when together fails.
  std::vector<Outcome> runBatch(const std::vector<Entry> &batch);

  RunBatch run_;
  Limits limits_;
  std::function<void(size_t)> onBatch_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Entry> queue_;
  bool closed_ = false;
  std::thread thread_;
};

} // namespace foldc::rt
