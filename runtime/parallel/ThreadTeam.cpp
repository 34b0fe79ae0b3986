// Collectives of threads through shared memory.
#include "runtime/parallel/ThreadTeam.h"

#include "runtime/support/Threads.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

namespace foldc::rt {

/// Member `rank` of a team as a Communicator. Each collective publishes this
/// member's buffer and reads everyone's.
class ThreadTeam::Member final : public Communicator {
public:
  Member(ThreadTeam &team, int rank) : team_(team), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return team_.size(); }
  void sum(std::span<float> values) override { sumOf(values); }
  void sum(std::span<double> values) override { sumOf(values); }
  std::vector<int32_t> gather(std::span<const int32_t> mine) override {
    std::vector<int32_t> all;
    team_.exchange(rank_, mine.data(), mine.size(), [&](int r) {
      auto *theirs = static_cast<const int32_t *>(team_.data_[size_t(r)]);
      all.insert(all.end(), theirs, theirs + team_.counts_[size_t(r)]);
    });
    return all;
  }
  void broadcast(std::span<float> values) override {
    std::vector<float> root;
    team_.exchange(rank_, values.data(), values.size(), [&](int r) {
      if (r == 0 && rank_ != 0) {
        auto *first = static_cast<const float *>(team_.data_[0]);
        root.assign(first, first + team_.counts_[0]);
      }
    });
    if (rank_ != 0)
      std::copy(root.begin(), root.end(), values.begin());
  }
  void barrier() override { team_.arriveAndWait(); }
  /// Ends the team's collectives (the others throw out of theirs) and
  /// throws the error that run() rethrows.
  [[noreturn]] void abort(int status) override {
    team_.fail();
    throw std::runtime_error("thread " + std::to_string(rank_) + " of " + std::to_string(size()) +
                             " ended the run (status " + std::to_string(status) + ")");
  }

private:
  /// Each member adds up its slice of everyone's buffers (in rank order),
  /// then takes the others' slices of the sum: every element is summed once,
  /// by one member, and all get the same bits.
  template <class T> void sumOf(std::span<T> values) {
    size_t n = values.size(), members = size_t(size());
    auto begin = [&](size_t member) { return n * member / members; };
    size_t lo = begin(size_t(rank_)), hi = begin(size_t(rank_) + 1);
    std::vector<T> slice(hi - lo, T(0));
    team_.exchange(rank_, values.data(), n, [&](int r) {
      auto *theirs = static_cast<const T *>(team_.data_[size_t(r)]);
      for (size_t k = lo; k < hi; ++k)
        slice[k - lo] += theirs[k];
    });
    std::copy(slice.begin(), slice.end(), values.begin() + std::ptrdiff_t(lo));
    team_.exchange(rank_, values.data(), n, [&](int r) {
      if (r == rank_)
        return;
      auto *theirs = static_cast<const T *>(team_.data_[size_t(r)]);
      std::copy(theirs + begin(size_t(r)), theirs + begin(size_t(r) + 1),
                values.begin() + std::ptrdiff_t(begin(size_t(r))));
    });
  }

  ThreadTeam &team_;
  int rank_;
};

ThreadTeam::ThreadTeam(int size)
    : size_(std::max(1, size)), data_(size_t(size_)), counts_(size_t(size_)) {}

int ThreadTeam::run(size_t stackBytes, const std::function<int(Communicator &)> &work) {
  failed_ = false; // no member runs between runs
  waiting_ = 0;
  int result = 0;
  std::vector<std::exception_ptr> errors = onThreads(stackBytes, size_, [&](int rank) {
    Member member(*this, rank);
    try {
      int status = work(member);
      if (rank == 0)
        result = status;
    } catch (const Failed &) {
      // Another member failed; its own error is the one to report.
    } catch (...) {
      fail();
      throw;
    }
  });
  for (const std::exception_ptr &error : errors)
    if (error)
      std::rethrow_exception(error);
  return result;
}

void ThreadTeam::exchange(int rank, const void *data, size_t count,
                          const std::function<void(int)> &read) {
  data_[size_t(rank)] = data;
  counts_[size_t(rank)] = count;
  arriveAndWait();
  for (int r = 0; r < size_; ++r)
    read(r);
  arriveAndWait();
}

namespace {

/// Tells the CPU that this thread is spinning (on x86, `pause`: its sibling
/// hyperthread gets the core's resources meanwhile).
inline void spinPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

} // namespace

void ThreadTeam::arriveAndWait() {
  if (failed_.load(std::memory_order_acquire))
    throw Failed{};
  long generation = generation_.load(std::memory_order_acquire);
  if (waiting_.fetch_add(1, std::memory_order_acq_rel) + 1 == size_) {
    waiting_.store(0, std::memory_order_relaxed); // before the others can arrive again
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    return;
  }
  // Spin first: the others usually arrive within microseconds (a sum's
  // halves); a member still computing its share sleeps below instead.
  auto spinUntil = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
  for (int round = 0; generation_.load(std::memory_order_acquire) == generation; ++round) {
    if (failed_.load(std::memory_order_acquire))
      throw Failed{};
    if (round % 64 == 63 && std::chrono::steady_clock::now() > spinUntil) {
      generation_.wait(generation, std::memory_order_acquire); // fail() wakes it too
      continue;
    }
    spinPause();
  }
  if (failed_.load(std::memory_order_acquire))
    throw Failed{}; // the rendezvous may not have completed: another member failed
}

void ThreadTeam::fail() {
  failed_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_release); // wakes the sleepers, who see failed_
  generation_.notify_all();
}

} // namespace foldc::rt
