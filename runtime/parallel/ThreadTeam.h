// Threads of one process as the ranks of a data-parallel run: `--threads N`
// trains N replicas of the model, each on its share of every batch with
// single-threaded kernels, and their collectives go through shared memory.
// (Multi-threaded GEMMs share only the GEMMs, a third of a step's work being
// elsewhere; replicas share all of it.)
#pragma once

#include "runtime/parallel/Communicator.h"

#include <atomic>
#include <cstddef>
#include <functional>
#include <vector>

namespace foldc::rt {

class ThreadTeam {
public:
  explicit ThreadTeam(int size);
  ThreadTeam(const ThreadTeam &) = delete;
  ThreadTeam &operator=(const ThreadTeam &) = delete;

  int size() const { return size_; }

  /// Runs `work(member)` for every member on threads of `stackBytes` stacks
  /// (reserved, touched only as used) and waits for all of them; gives
  /// member 0's result. A member's exception ends the collectives the others
  /// wait in (so none waits forever) and is rethrown here, the lowest
  /// rank's first.
  int run(size_t stackBytes, const std::function<int(Communicator &member)> &work);

private:
  class Member;
  /// Thrown in members waiting for one that failed (not a std::exception:
  /// nothing between the collective and run() may take it for an error of
  /// its own).
  struct Failed {};

  /// Publishes this member's `data` and waits until every member has, or
  /// throws Failed; `read(r)` then sees member r's data, then all wait again
  /// so that no buffer is reused while another member reads it.
  void exchange(int rank, const void *data, size_t count, const std::function<void(int)> &read);
  /// Returns once every member has arrived (or throws Failed). Waiting
  /// spins for a few microseconds, then sleeps: a step of a data-parallel
  /// run crosses about ten of these, and a sleep and wake-up cost 20-80 us.
  void arriveAndWait();
  void fail();

  const int size_;
  std::atomic<int> waiting_ = 0;
  /// Counts the rendezvous completed; waiters watch it change.
  std::atomic<long> generation_ = 0;
  std::atomic<bool> failed_ = false;
  std::vector<const void *> data_;
  std::vector<size_t> counts_;
};

} // namespace foldc::rt
