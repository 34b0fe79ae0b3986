// The worker pool.
#include "runtime/engine/WorkerPool.h"

namespace foldc::rt {

WorkerPool::WorkerPool(int threads) {
  for (int part = 1; part < threads; ++part)
    workers_.emplace_back([this, part] { work(part); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void WorkerPool::run(const std::function<void(int)> &job) {
  if (workers_.empty()) {
    job(0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &job;
    running_ = int(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  job(0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return running_ == 0; });
  job_ = nullptr;
}

void WorkerPool::work(int part) {
  long seen = 0;
  for (;;) {
    const std::function<void(int)> *job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_)
        return;
      seen = generation_;
      job = job_;
    }
    (*job)(part);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--running_ == 0)
        done_.notify_one();
    }
  }
}

} // namespace foldc::rt
