// Communicator over MPI: the processes that mpirun started. Header-only and
// included only by a generated driver built with FOLDC_WITH_MPI
// (foldc_add_model links it to MPI::MPI_CXX when CMake finds MPI), so the
// runtime library itself never depends on MPI.
#pragma once

#include "runtime/parallel/Communicator.h"

#include <mpi.h>

#include <cstdlib>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace foldc::rt {

class MpiCommunicator final : public Communicator {
public:
  /// Initialises MPI. The driver's work runs on one thread other than main's
  /// (its large stack), one call at a time: MPI_THREAD_SERIALIZED.
  MpiCommunicator(int *argc, char ***argv) {
    // Open MPI moves a large message between two processes of one machine
    // either with one copy by Linux's cross-memory attach (CMA), its default,
    // or with two through a shared-memory segment. On virtual machines CMA
    // pins every page of the gradient sum and was the slower (bench/README.md,
    // "Open MPI copies through shared memory"). A user's own setting
    // (mpirun --mca, the environment) wins.
    setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", /*overwrite=*/0);
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
    if (provided < MPI_THREAD_SERIALIZED)
      throw std::runtime_error("MPI: this MPI library cannot be called from a worker thread");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiCommunicator() override { MPI_Finalize(); }
  MpiCommunicator(const MpiCommunicator &) = delete;
  MpiCommunicator &operator=(const MpiCommunicator &) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void sum(std::span<float> values) override {
    MPI_Allreduce(MPI_IN_PLACE, values.data(), count(values.size()), MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
  }
  void sum(std::span<double> values) override {
    MPI_Allreduce(MPI_IN_PLACE, values.data(), count(values.size()), MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
  }
  std::vector<int32_t> gather(std::span<const int32_t> mine) override {
    int n = count(mine.size());
    std::vector<int> counts(size_t(size_), 0), offsets(size_t(size_), 0);
    MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), 0);
    std::vector<int32_t> all(size_t(offsets.back() + counts.back()));
    MPI_Allgatherv(mine.data(), n, MPI_INT32_T, all.data(), counts.data(), offsets.data(),
                   MPI_INT32_T, MPI_COMM_WORLD);
    return all;
  }
  void broadcast(std::span<float> values) override {
    MPI_Bcast(values.data(), count(values.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
  }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  [[noreturn]] void abort(int status) override {
    MPI_Abort(MPI_COMM_WORLD, status);
    std::exit(status); // MPI_Abort does not return; this says so to the compiler
  }

private:
  /// MPI counts are ints: a buffer of 2^31 floats or more is an error, not a wrap.
  static int count(size_t n) {
    if (n > size_t(std::numeric_limits<int>::max()))
      throw std::runtime_error("MPI: a message of " + std::to_string(n) +
                               " elements is more than one call can send");
    return int(n);
  }

  int rank_ = 0, size_ = 1;
};

} // namespace foldc::rt
