// The request threads of `serve` (see RequestWorkers.h).
#include "runtime/driver/RequestWorkers.h"

#include "runtime/support/Threads.h"

namespace foldc::rt {

RequestWorkers::RequestWorkers(int count)
    : supervisor_([this, count] { onThreads(size_t(256) << 20, count, [this](int) { work(); }); }) {
}

RequestWorkers::~RequestWorkers() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  supervisor_.join();
}

void RequestWorkers::enqueue(std::function<void()> task) {
  std::lock_guard lock(mutex_);
  tasks_.push_back(std::move(task));
  changed_.notify_one();
}

void RequestWorkers::work() {
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

} // namespace foldc::rt
