// The processes of a data-parallel run, as the driver sees them: their
// number, this one's rank, and the collectives training needs. A driver run
// without mpirun is one process (SingleProcess); MpiCommunicator.h is the
// same over MPI.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

namespace foldc::rt {

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Replaces `values` on every rank by their element-wise sum over the ranks.
  virtual void sum(std::span<float> values) = 0;
  virtual void sum(std::span<double> values) = 0;
  /// Every rank's `mine`, concatenated in rank order (the counts may differ).
  virtual std::vector<int32_t> gather(std::span<const int32_t> mine) = 0;
  /// Gives every rank rank 0's `values`.
  virtual void broadcast(std::span<float> values) = 0;
  /// Returns once every rank has called it.
  virtual void barrier() = 0;
  /// Ends every rank's process with `status`: after one rank's error, the
  /// others would wait for it forever in their next collective.
  [[noreturn]] virtual void abort(int status) = 0;
};

/// A run of one process: the collectives are the identity.
class SingleProcess final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void sum(std::span<float>) override {}
  void sum(std::span<double>) override {}
  std::vector<int32_t> gather(std::span<const int32_t> mine) override {
    return {mine.begin(), mine.end()};
  }
  void broadcast(std::span<float>) override {}
  void barrier() override {}
  [[noreturn]] void abort(int status) override { std::exit(status); }
};

} // namespace foldc::rt
