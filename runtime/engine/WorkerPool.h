// A fixed set of worker threads that run the parts of one job together.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace foldc::rt {

/// Runs `job(part)` for part = 0..parts-1, part 0 on the calling thread and
/// the others on workers kept alive between jobs (a thread start per batch
/// would cost more than small batches take).
class WorkerPool {
public:
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;

  int size() const { return int(workers_.size()) + 1; }
  /// Blocks until every part has run.
  void run(const std::function<void(int)> &job);

private:
  void work(int part);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)> *job_ = nullptr;
  long generation_ = 0;
  int running_ = 0;
  bool stopping_ = false;
};

} // namespace foldc::rt
