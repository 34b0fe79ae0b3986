// The command line of a generated model (`NAME train|eval|infer|check`): the
// generated NAME_main.cpp calls runDriver with its Model and example reader.
// The driver itself (runtime/driver/*.cpp) is compiled once into the
// runtime's driver layer; a model reaches it through DriverModel, so each
// model's main instantiates only the small adapter below. Built with FOLDC_WITH_MPI
// (foldc_add_model does when CMake finds MPI), the driver trains data-parallel under mpirun.
#pragma once

#include "runtime/io/Jsonl.h"
#include "runtime/model/GradientCheck.h"
#include "runtime/model/Model.h"
#include "runtime/parallel/Communicator.h"
#ifdef FOLDC_WITH_MPI
#include "runtime/parallel/MpiCommunicator.h"
#endif

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace foldc::rt {

/// What the driver needs of a model, whatever its example type. Examples
/// live in the model's datasets (0: --data, 1: --dev), named by index.
class DriverModel {
public:
  using Indices = std::span<const int32_t>;
  virtual ~DriverModel() = default;

  /// Reads `file` into dataset `set` (at most `limit` examples when > 0);
  /// gives each example's line in the file.
  virtual std::vector<long> load(int set, const std::string &file, long limit) = 0;
  virtual void init(uint64_t seed) = 0;
  virtual void loadParams(const std::string &file) = 0;
  virtual void saveParams(const std::string &file) const = 0;
  /// One optimizer step (ModelBase::train_step): data-parallel ranks give
  /// the sum of their gradients as `sumGradients`.
  virtual BatchResult trainStep(int set, Indices batch, Optimizer &optimizer,
                                const RunOptions &options,
                                const GradientSum &sumGradients = {}) = 0;
  virtual BatchResult eval(int set, Indices batch, const RunOptions &options) = 0;
  virtual std::vector<nlohmann::json> infer(int set, Indices batch, const RunOptions &options) = 0;
  /// One example read from a JSON value (a request's body, a line of
  /// standard input), held for inferParsed; throws DataError at `at`.
  virtual std::shared_ptr<const void> parseExample(const nlohmann::json &value,
                                                   const JsonPath &at) const = 0;
  /// The outputs of examples that parseExample gave.
  virtual std::vector<nlohmann::json>
  inferParsed(std::span<const std::shared_ptr<const void>> examples, const RunOptions &options) = 0;
  virtual GradientCheck checkGradients(int set, Indices batch, double step) = 0;
  virtual const std::vector<std::string> &metricNames() const = 0;
  virtual const ParamStore &params() const = 0;
  virtual ParamStore &params() = 0;
  virtual std::span<const std::unique_ptr<Kernel>> kernels() const = 0;
  /// A new model of the same kind, with no examples and no parameters yet
  /// (a data-parallel replica for another thread).
  virtual std::unique_ptr<DriverModel> replica() const = 0;
  /// Drops the examples (on the driver's large stack: deep data is freed
  /// recursively).
  virtual void unload() = 0;
};

/// A generated Model `M` as a DriverModel, reading examples with `read`.
template <class M> class DriverModelOf final : public DriverModel {
public:
  using Example = typename M::Example;
  using Reader = std::vector<Example> (*)(const std::string &, std::vector<long> *);
  using ValueReader = Example (*)(const nlohmann::json &, const JsonPath &);

  DriverModelOf(Reader read, ValueReader readValue) : read_(read), readValue_(readValue) {}

  std::vector<long> load(int set, const std::string &file, long limit) override {
    std::vector<long> lines;
    sets_[set] = read_(file, &lines);
    if (limit > 0 && sets_[set].size() > size_t(limit)) {
      sets_[set].resize(size_t(limit));
      lines.resize(size_t(limit));
    }
    return lines;
  }
  void init(uint64_t seed) override { model_.init(seed); }
  void loadParams(const std::string &file) override { model_.load(file); }
  void saveParams(const std::string &file) const override { model_.save(file); }
  BatchResult trainStep(int set, Indices batch, Optimizer &optimizer, const RunOptions &options,
                        const GradientSum &sumGradients = {}) override {
    return model_.train_step(examples(set, batch), optimizer, options, sumGradients);
  }
  BatchResult eval(int set, Indices batch, const RunOptions &options) override {
    return model_.eval(examples(set, batch), options);
  }
  std::vector<nlohmann::json> infer(int set, Indices batch, const RunOptions &options) override {
    return model_.infer(examples(set, batch), options);
  }
  std::shared_ptr<const void> parseExample(const nlohmann::json &value,
                                           const JsonPath &at) const override {
    return std::make_shared<const Example>(readValue_(value, at));
  }
  std::vector<nlohmann::json> inferParsed(std::span<const std::shared_ptr<const void>> examples,
                                          const RunOptions &options) override {
    pointers_.clear();
    for (const std::shared_ptr<const void> &e : examples)
      pointers_.push_back(static_cast<const Example *>(e.get()));
    return model_.infer(typename M::Batch(pointers_), options);
  }
  GradientCheck checkGradients(int set, Indices batch, double step) override {
    return foldc::rt::checkGradients(model_, examples(set, batch), step);
  }
  const std::vector<std::string> &metricNames() const override { return model_.metricNames(); }
  const ParamStore &params() const override { return model_.params(); }
  ParamStore &params() override { return model_.params(); }
  std::span<const std::unique_ptr<Kernel>> kernels() const override { return model_.kernels(); }
  std::unique_ptr<DriverModel> replica() const override {
    return std::make_unique<DriverModelOf<M>>(read_, readValue_);
  }
  void unload() override {
    for (std::vector<Example> &set : sets_)
      std::vector<Example>().swap(set);
  }

private:
  typename M::Batch examples(int set, Indices batch) {
    pointers_.clear();
    for (int32_t i : batch)
      pointers_.push_back(&sets_[set][size_t(i)]);
    return typename M::Batch(pointers_);
  }

  Reader read_;
  ValueReader readValue_;
  M model_;
  std::vector<Example> sets_[2];
  std::vector<const Example *> pointers_;
};

/// `NAME train|eval|infer|check|info|serve` over `model`. Exit status: 0, 1 on bad
/// data, parameters or files (or a failed check), 2 on bad usage. The work
/// runs on a thread with a 1 GiB stack (reserved, touched only as used):
/// reading, unfolding and freeing an example recurse once per level of its
/// data, and a tree 10^5 levels deep is data like any other.
/// `dataFormat` (for --help) says what a line of --data holds.
///
/// Over several `processes` (mpirun), `train` is data-parallel: every rank
/// reads all of --data, runs its share of each global batch (split by the
/// examples' sizes) and takes the same optimizer step on the summed
/// gradients; `eval` and --dev are split the same way and summed; rank 0
/// alone writes (output, --save, --curve, --checkpoint); `infer` and `check`
/// run on rank 0. A rank's error ends every rank (Communicator::abort).
/// In one process, --threads N runs `train` and `eval` the same way over N
/// replicas of the model (model.replica()) on N threads, one GEMM thread each.
int runDriver(int argc, char **argv, const std::string &name, DriverModel &model,
              const std::string &dataFormat, Communicator &processes);

template <class M>
int runDriver(int argc, char **argv, const std::string &name,
              typename DriverModelOf<M>::Reader read,
              typename DriverModelOf<M>::ValueReader readValue, const std::string &dataFormat) {
  DriverModelOf<M> model(read, readValue);
#ifdef FOLDC_WITH_MPI
  MpiCommunicator processes(&argc, &argv);
#else
  SingleProcess processes;
#endif
  return runDriver(argc, argv, name, model, dataFormat, processes);
}

} // namespace foldc::rt
