// Dynamic batching (see BatchQueue.h).
#include "runtime/driver/BatchQueue.h"

#include "runtime/support/Threads.h"

#include <exception>

namespace foldc::rt {

BatchQueue::BatchQueue(RunBatch run, Limits limits, std::function<void(size_t)> onBatch)
    : run_(std::move(run)), limits_(limits), onBatch_(std::move(onBatch)),
      // Unfolding an example recurses once per level of its data: the batches
      // run on a thread with a 1 GiB stack (reserved, touched only as used).
      thread_([this] { onThreads(size_t(1) << 30, 1, [this](int) { loop(); }); }) {}

BatchQueue::~BatchQueue() {
  close();
  thread_.join();
}

void BatchQueue::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  changed_.notify_all();
}

bool BatchQueue::submit(std::vector<Item> items, Done done) {
  if (items.empty()) {
    done({});
    return true;
  }
  auto request = std::make_shared<Request>();
  request->outcomes.resize(items.size());
  request->remaining = items.size();
  request->done = std::move(done);
  std::lock_guard lock(mutex_);
  if (closed_ || queue_.size() + items.size() > limits_.maxQueued)
    return false;
  auto now = std::chrono::steady_clock::now();
  for (size_t i = 0; i < items.size(); ++i)
    queue_.push_back({std::move(items[i]), request, i, now});
  changed_.notify_all();
  return true;
}

std::optional<std::future<std::vector<Outcome>>> BatchQueue::submit(std::vector<Item> items) {
  auto promise = std::make_shared<std::promise<std::vector<Outcome>>>();
  std::future<std::vector<Outcome>> result = promise->get_future();
  if (!submit(std::move(items), [promise](std::vector<Outcome> outcomes) {
        promise->set_value(std::move(outcomes));
      }))
    return std::nullopt;
  return result;
}

std::vector<BatchQueue::Entry> BatchQueue::nextBatch() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return closed_ || !queue_.empty(); });
  if (queue_.empty())
    return {};
  // The oldest example waits at most maxWait for others to join it.
  auto deadline = queue_.front().queued + limits_.maxWait;
  changed_.wait_until(lock, deadline, [&] { return closed_ || queue_.size() >= limits_.maxBatch; });
  size_t n = std::min(queue_.size(), limits_.maxBatch);
  std::vector<Entry> batch(std::make_move_iterator(queue_.begin()),
                           std::make_move_iterator(queue_.begin() + ptrdiff_t(n)));
  queue_.erase(queue_.begin(), queue_.begin() + ptrdiff_t(n));
  return batch;
}

std::vector<Outcome> BatchQueue::runBatch(const std::vector<Entry> &batch) {
  std::vector<Item> items;
  for (const Entry &e : batch)
    items.push_back(e.item);
  std::vector<Outcome> outcomes(batch.size());
  try {
    std::vector<nlohmann::json> outputs = run_(items);
    for (size_t i = 0; i < outcomes.size() && i < outputs.size(); ++i)
      outcomes[i].output = std::move(outputs[i]);
    return outcomes;
  } catch (const std::exception &) {
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    try {
      outcomes[i].output = std::move(run_(std::span<const Item>(&items[i], 1)).at(0));
    } catch (const std::exception &e) {
      outcomes[i].error = e.what();
    }
  }
  return outcomes;
}

void BatchQueue::loop() {
  for (;;) {
    std::vector<Entry> batch = nextBatch();
    if (batch.empty())
      return; // closed, and nothing is left
    if (onBatch_)
      onBatch_(batch.size());
    std::vector<Outcome> outcomes = runBatch(batch);
    for (size_t i = 0; i < batch.size(); ++i) {
      Request &request = *batch[i].request;
      request.outcomes[batch[i].position] = std::move(outcomes[i]);
      if (--request.remaining == 0)
        request.done(std::move(request.outcomes));
    }
  }
}

} // namespace foldc::rt
