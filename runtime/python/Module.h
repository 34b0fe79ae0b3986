// A generated model as a Python module (pybind11): `foldc_add_model(...
// PYTHON)` and foldc.load compile NAME_python.cpp, which foldc writes as one
// call of defineModule<Model> for the model's type and example reader. The
// bindings themselves (Model, Optimizer, train_order, set_threads) are
// compiled once, in the runtime (Module.cpp, library foldc_python), against
// AnyModel: a model's module instantiates only its TypedModel.
#pragma once

#include "runtime/io/Jsonl.h"
#include "runtime/model/Model.h"
#include "runtime/python/Values.h"

#include <pybind11/pybind11.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace foldc::rt::python {

namespace py = pybind11;

/// What the bindings need of a model, whatever its type. Calls come one at
/// a time, on a thread whose stack fits deep data.
class AnyModel {
public:
  virtual ~AnyModel() = default;
  /// Each reads `values` as the model's examples (a DataError names the one
  /// that does not read: `example:I: path: what`) and runs them as one batch.
  virtual std::vector<nlohmann::json> infer(const std::vector<nlohmann::json> &values,
                                            const RunOptions &run) = 0;
  virtual BatchResult trainStep(const std::vector<nlohmann::json> &values, Optimizer &optimizer,
                                const RunOptions &run) = 0;
  virtual BatchResult eval(const std::vector<nlohmann::json> &values, const RunOptions &run) = 0;
  virtual ParamStore &params() = 0;
  virtual const std::vector<std::string> &metricNames() const = 0;
  virtual void save(const std::string &path) const = 0;
};

/// AnyModel for the generated model M, its examples read by `read`.
template <class M> class TypedModel final : public AnyModel {
public:
  using Example = typename M::Example;
  using Reader = Example (*)(const nlohmann::json &, const JsonPath &);

  TypedModel(Reader read, uint64_t seed) : read_(read) { model_.init(seed); }

  std::vector<nlohmann::json> infer(const std::vector<nlohmann::json> &values,
                                    const RunOptions &run) override {
    std::vector<Example> batch = readAll(values);
    return model_.infer(pointers(batch), run);
  }
  BatchResult trainStep(const std::vector<nlohmann::json> &values, Optimizer &optimizer,
                        const RunOptions &run) override {
    std::vector<Example> batch = readAll(values);
    return model_.train_step(pointers(batch), optimizer, run);
  }
  BatchResult eval(const std::vector<nlohmann::json> &values, const RunOptions &run) override {
    std::vector<Example> batch = readAll(values);
    return model_.eval(pointers(batch), run);
  }
  ParamStore &params() override { return model_.params(); }
  const std::vector<std::string> &metricNames() const override { return model_.metricNames(); }
  void save(const std::string &path) const override { model_.save(path); }

private:
  std::vector<Example> readAll(const std::vector<nlohmann::json> &values) {
    std::vector<Example> batch;
    batch.reserve(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      batch.push_back(read_(values[i], JsonPath(kExampleFile, long(i))));
    return batch;
  }
  typename M::Batch pointers(const std::vector<Example> &batch) {
    pointers_.clear();
    for (const Example &e : batch)
      pointers_.push_back(&e);
    return typename M::Batch(pointers_);
  }

  Reader read_;
  M model_;
  std::vector<const Example *> pointers_;
};

/// Makes a model with parameters initialised from `seed`.
using ModelMaker = std::function<std::unique_ptr<AnyModel>(uint64_t seed)>;

/// Defines Model (made by `make`), Optimizer, DataError, ParamsError,
/// train_order and set_threads in `module`.
void defineModule(py::module_ &module, const std::string &name, ModelMaker make);

/// defineModule for the generated model M.
template <class M>
void defineModule(py::module_ &module, const std::string &name,
                  typename TypedModel<M>::Reader read) {
  defineModule(module, name, [read](uint64_t seed) -> std::unique_ptr<AnyModel> {
    return std::make_unique<TypedModel<M>>(read, seed);
  });
}

} // namespace foldc::rt::python
