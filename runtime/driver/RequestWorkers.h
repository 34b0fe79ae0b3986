// The threads of `serve` that read request bodies and build answers: work
// that recurses as deep as a request's data, so each has a large stack.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace foldc::rt {

class RequestWorkers {
public:
  /// Starts `count` threads with 256 MiB stacks (reserved, touched only as used).
  explicit RequestWorkers(int count);
  /// Runs what is queued, then ends the threads.
  ~RequestWorkers();
  RequestWorkers(const RequestWorkers &) = delete;
  RequestWorkers &operator=(const RequestWorkers &) = delete;

  /// Runs `task` on one of the threads, in the order queued.
  void enqueue(std::function<void()> task);

private:
  void work();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread supervisor_; ///< starts the workers and waits for them
};

} // namespace foldc::rt
