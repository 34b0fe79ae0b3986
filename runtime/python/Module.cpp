// The Python module of every generated model (see Module.h): the bindings,
// compiled once into the runtime (library foldc_python) against AnyModel.
#include "runtime/python/Module.h"

#include "runtime/engine/Optimizers.h"
#include "runtime/engine/Process.h"
#include "runtime/io/Safetensors.h"
#include "runtime/support/Threads.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <type_traits>

namespace foldc::rt::python {

namespace {

/// The stack the model's work runs on from Python, as on the command line:
/// the generated readers recurse as deep as the data.
constexpr size_t kStackBytes = size_t(1) << 30;

/// Examples given from Python: JSON strings, or dicts and lists of the JSONL
/// shape (converted without recursion, numpy numbers included). An empty
/// batch is an error where it means nothing (a mean, a step), as on the
/// command line.
std::vector<nlohmann::json> jsonValues(const py::iterable &examples, bool emptyAllowed) {
  // A str is iterable too, by character, and a dict by key: almost surely
  // one example passed where a list of them was meant.
  if (py::isinstance<py::str>(examples) || py::isinstance<py::bytes>(examples))
    throw py::type_error("expected a list of examples (dicts or JSON strings), got one string; "
                         "pass [example]");
  if (py::isinstance<py::dict>(examples))
    throw py::type_error("expected a list of examples, found one dict; pass [example]");
  std::vector<nlohmann::json> values;
  long index = 0;
  for (const py::handle &example : examples) {
    if (py::isinstance<py::str>(example))
      values.push_back(parseJson(JsonFromPython(index).convert(example).get<std::string>(),
                                 JsonPath(kExampleFile, index)));
    else
      values.push_back(JsonFromPython(index).convert(example));
    ++index;
  }
  if (values.empty() && !emptyAllowed)
    throw py::value_error("no examples: the batch is empty");
  return values;
}

/// `work()` on a thread whose stack fits deep data (kStackBytes), its
/// exception rethrown here.
template <class Work> auto onLargeStack(Work work) {
  using Result = decltype(work());
  if constexpr (std::is_void_v<Result>) {
    if (std::exception_ptr error = onThreads(kStackBytes, 1, [&](int) { work(); })[0])
      std::rethrow_exception(error);
  } else {
    std::optional<Result> result;
    if (std::exception_ptr error =
            onThreads(kStackBytes, 1, [&](int) { result.emplace(work()); })[0])
      std::rethrow_exception(error);
    return std::move(*result);
  }
}

/// A JSON value as a Python value (through Python's json module).
py::object pythonValue(const nlohmann::json &value) {
  return py::module_::import("json").attr("loads")(value.dump());
}

/// The order in which `NAME_driver train --seed SEED` visits `count`
/// examples in epoch `epoch` (1 for the first): a Python training loop
/// that follows it takes the same steps.
std::vector<int32_t> trainOrder(size_t count, uint64_t seed, int epoch) {
  std::vector<int32_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 shuffle(seed);
  for (int e = 1; e <= epoch; ++e)
    std::shuffle(order.begin(), order.end(), shuffle);
  return order;
}

/// Loads `path` into `params` keeping every parameter's storage, so that
/// numpy views of the parameters (Model.params) stay valid and see the new
/// values; a file that does not fit changes nothing.
void loadInPlace(ParamStore &params, const std::string &path) {
  std::vector<std::vector<float>> storage(size_t(params.count()));
  for (int id = 0; id < params.count(); ++id) {
    storage[size_t(id)] = std::move(params.at(id).value);
    params.at(id).value = storage[size_t(id)];
  }
  try {
    loadParams(params, path);
  } catch (...) {
    for (int id = 0; id < params.count(); ++id)
      params.at(id).value.swap(storage[size_t(id)]);
    throw;
  }
  for (int id = 0; id < params.count(); ++id) {
    std::ranges::copy(params.at(id).value, storage[size_t(id)].begin());
    params.at(id).value.swap(storage[size_t(id)]);
  }
}

/// A learning rate, clipping norm or weight decay given from Python: finite,
/// and positive or (`zeroAllowed`) zero.
double checkedRate(const char *name, double value, bool zeroAllowed) {
  if (!std::isfinite(value) || value < 0 || (value == 0 && !zeroAllowed))
    throw py::value_error(std::string(name) + " must be a finite number " +
                          (zeroAllowed ? ">= 0" : "> 0") + ", not " +
                          py::repr(py::float_(value)).cast<std::string>());
  return value;
}

/// Python's Optimizer: an optimizer and the one model whose parameters it
/// steps. Its slots (moments, accumulators) belong to that model's
/// parameters, so a step of another model would mix two models' states.
struct BoundOptimizer {
  std::unique_ptr<Optimizer> optimizer;
  long model = 0; ///< the PythonModel::serial() it stepped first; 0 before

  /// Binds to `serial` at the first step; refuses another model after.
  void bindTo(long serial) {
    if (model == 0)
      model = serial;
    else if (model != serial)
      throw py::value_error("this Optimizer steps another Model's parameters (its moments and "
                            "accumulators are theirs); make one Optimizer per Model");
  }
};

/// A model with the examples of one call, read from JSON. Calls from several
/// Python threads take turns: each releases the GIL while the model runs,
/// and the model (its executor, its parameters) serves one call at a time.
class PythonModel {
  /// Runs `work` without the GIL, once no other thread runs this model. The
  /// GIL is let go first: a thread waiting for the model must not hold it.
  /// (Defined before its callers: its return type is deduced.)
  template <class Work> auto alone(Work work) {
    py::gil_scoped_release unlocked;
    std::lock_guard<std::mutex> turn(busy_);
    return onLargeStack(work);
  }

public:
  explicit PythonModel(std::unique_ptr<AnyModel> model) : model_(std::move(model)) {}

  // Each reads its examples (deep data: recursive readers) and runs the
  // model on the large stack, where the examples are destroyed too.
  std::vector<nlohmann::json> infer(const py::iterable &examples, const std::string &precision) {
    RunOptions run = inferenceOptions(precision);
    std::vector<nlohmann::json> values = jsonValues(examples, true);
    return alone([&] { return model_->infer(values, run); });
  }
  BatchResult trainStep(const py::iterable &examples, BoundOptimizer &optimizer, uint64_t seed,
                        const std::string &reduction) {
    if (reduction != "mean" && reduction != "sum")
      throw py::value_error("reduction must be 'mean' or 'sum', not '" + reduction + "'");
    optimizer.bindTo(serial_); // with the GIL held: two threads cannot both bind
    std::vector<nlohmann::json> values = jsonValues(examples, false);
    RunOptions run;
    run.seed = seed;
    run.globalBatch = reduction == "sum" ? 1 : 0; // the objective's divisor (0: the examples)
    return alone([&] { return model_->trainStep(values, *optimizer.optimizer, run); });
  }
  BatchResult eval(const py::iterable &examples, const std::string &precision) {
    RunOptions run = inferenceOptions(precision);
    std::vector<nlohmann::json> values = jsonValues(examples, false);
    return alone([&] { return model_->eval(values, run); });
  }
  void load(const std::string &path) {
    alone([&] { loadInPlace(model_->params(), path); });
  }
  void save(const std::string &path) {
    alone([&] { model_->save(path); });
  }
  AnyModel &model() { return *model_; }

private:
  /// infer's and eval's options: the precision of the products with weights
  /// ("f32" or "bf16", as the driver's --precision).
  static RunOptions inferenceOptions(const std::string &precision) {
    if (precision != "f32" && precision != "bf16")
      throw py::value_error("precision must be 'f32' or 'bf16', not '" + precision + "'");
    const char *why = nullptr;
    if (precision == "bf16" && !bf16Available(&why))
      throw py::value_error(std::string("precision 'bf16': ") + why);
    RunOptions run;
    run.precision = precision == "bf16" ? Precision::Bf16 : Precision::F32;
    return run;
  }

  static long nextSerial() {
    static std::atomic<long> last{0};
    return ++last;
  }

  std::unique_ptr<AnyModel> model_;
  std::mutex busy_;
  const long serial_ = nextSerial();
};

/// {"loss": ..., METRIC: mean, ...} as Python values.
py::dict resultDict(const BatchResult &result, const std::vector<std::string> &metrics) {
  return pythonValue(result.toJson(metrics)).cast<py::dict>();
}

} // namespace

void defineModule(py::module_ &module, const std::string &name, ModelMaker make) {
  using Model = PythonModel;
  module.doc() =
      "The foldc model '" + name + "' (generated): Model, Optimizer, train_order, set_threads.";
  py::register_exception<DataError>(module, "DataError", PyExc_ValueError);
  py::register_exception<SafetensorsError>(module, "ParamsError", PyExc_ValueError);

  // module_local: every generated module defines its own Model and
  // Optimizer, and two of them can be imported into one process.
  py::class_<BoundOptimizer>(module, "Optimizer", py::module_local(),
                             "An optimizer as `train --optimizer` makes it: sgd, adagrad, adam, "
                             "adamw or rmsprop; it steps one Model.")
      .def(py::init([](const std::string &kind, std::optional<double> lr, double clip,
                       std::optional<double> weightDecay) {
             const OptimizerKind *k = findOptimizer(kind);
             if (!k)
               throw py::value_error("no optimizer '" + kind + "'");
             return BoundOptimizer{
                 k->make(lr ? checkedRate("lr", *lr, false) : k->defaultLearningRate,
                         checkedRate("clip", clip, true),
                         weightDecay ? checkedRate("weight_decay", *weightDecay, true)
                                     : k->defaultWeightDecay)};
           }),
           py::arg("kind") = "adam", py::arg("lr") = py::none(), py::arg("clip") = 0.0,
           py::arg("weight_decay") = py::none(),
           "lr and weight_decay default to the kind's own, as on the command line; clip 0 "
           "clips nothing.")
      .def_property(
          "lr", [](const BoundOptimizer &o) { return o.optimizer->learningRate(); },
          [](BoundOptimizer &o, double lr) {
            o.optimizer->setLearningRate(checkedRate("lr", lr, false));
          });

  py::class_<Model>(module, "Model", py::module_local())
      .def(py::init([make](uint64_t seed) { return std::make_unique<Model>(make(seed)); }),
           py::arg("seed") = 1, "New parameters, initialised from `seed` as `--seed` does.")
      .def("load", &Model::load)
      .def("save", &Model::save)
      .def(
          "infer",
          [](Model &m, const py::iterable &examples, const std::string &precision) {
            // One JSON text for all the outputs: Python parses it once.
            return pythonValue(nlohmann::json(m.infer(examples, precision))).cast<py::list>();
          },
          py::arg("examples"), py::arg("precision") = "f32",
          "The output of each example (dicts and lists of the JSONL shape, or JSON strings); "
          "`precision` 'bf16' multiplies by the weights in bfloat16 (infer --precision).")
      .def(
          "train_step",
          [](Model &m, const py::iterable &batch, BoundOptimizer &optimizer, uint64_t seed,
             const std::string &reduction) {
            return resultDict(m.trainStep(batch, optimizer, seed, reduction),
                              m.model().metricNames());
          },
          py::arg("batch"), py::arg("optimizer"), py::arg("seed") = 0,
          py::arg("reduction") = "mean",
          "One optimizer step on the batch; `seed` draws the dropout masks (train's step k of a "
          "run with --seed S uses S * 1000003 + k); `reduction` 'sum' steps on the summed "
          "losses instead of their mean over the batch (train --loss-reduction).")
      .def(
          "_train_step",
          [](Model &m, const py::iterable &batch, BoundOptimizer &optimizer, uint64_t seed,
             const std::string &reduction) {
            BatchResult r = m.trainStep(batch, optimizer, seed, reduction);
            return py::make_tuple(r.examples, r.loss, r.metrics);
          },
          py::arg("batch"), py::arg("optimizer"), py::arg("seed") = 0,
          py::arg("reduction") = "mean",
          "train_step's result as (examples, loss, [(metric sum, emissions), ...]): what "
          "foldc's Model.fit adds up over an epoch as `train` does.")
      .def(
          "eval",
          [](Model &m, const py::iterable &batch, const std::string &precision) {
            return resultDict(m.eval(batch, precision), m.model().metricNames());
          },
          py::arg("batch"), py::arg("precision") = "f32",
          "The mean loss and metrics of the batch; `precision` as infer's.")
      .def_property_readonly("metric_names", [](Model &m) { return m.model().metricNames(); })
      .def_property_readonly(
          "params",
          [](py::object self) {
            Model &m = self.cast<Model &>();
            py::dict out;
            ParamStore &params = m.model().params();
            for (int id = 0; id < params.count(); ++id) {
              Param &p = params.at(id);
              // A view of the parameter's own values: the model stays alive while it lives.
              out[py::str(p.name)] = py::array_t<float>(p.shape, p.value.data(), self);
            }
            return out;
          },
          "Every parameter by name, as numpy arrays viewing the model's own values (no copy).");

  // One GEMM thread, as the command line's default: the same sums in the
  // same order, so a Python loop takes the steps `train` takes.
  configureProcess(1);
  module.def(
      "set_threads",
      [](int threads) {
        if (threads < 1)
          throw py::value_error("threads must be at least 1, not " + std::to_string(threads));
        configureProcess(threads);
      },
      py::arg("threads"), "The threads the model's GEMMs use (1 at import, as `--threads 1`).");
  module.def(
      "train_order",
      [](size_t count, uint64_t seed, int epoch) {
        if (epoch < 1)
          throw py::value_error("epochs count from 1, as train's do; not " + std::to_string(epoch));
        return trainOrder(count, seed, epoch);
      },
      py::arg("count"), py::arg("seed"), py::arg("epoch"),
      "The order in which `train --seed SEED` visits COUNT examples in epoch EPOCH.");
}

} // namespace foldc::rt::python
