// Python values of the JSONL shape as JSON, without recursion and without
// Python's json module: a tree 10^5 levels deep is data, not a
// RecursionError or a crash.
#pragma once

#include "runtime/io/Jsonl.h"

#include <pybind11/pybind11.h>

#include <cmath>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace foldc::rt::python {

namespace py = pybind11;

/// What errors about examples given from Python name as their file:
/// `example:INDEX: path: what`.
inline const std::string kExampleFile = "example";

/// Converts one example, depth first with an explicit stack. Dicts (string
/// keys), lists and tuples, numpy arrays (as lists), None, bools, ints and
/// floats (numpy's too: anything with `__index__`, or a real number with
/// `__float__`) and str are taken; anything else, a key that is not a str, a non-finite float or
/// a str that is not valid Unicode (a lone surrogate) is a DataError
/// naming the example and the path to the value.
class JsonFromPython {
public:
  explicit JsonFromPython(long example) : example_(example) {}

  nlohmann::json convert(py::handle root) {
    nlohmann::json out;
    pending_.push_back({root, &out, -1, {}, 0});
    while (!pending_.empty()) {
      Frame frame = std::move(pending_.back());
      pending_.pop_back();
      frames_.push_back({frame.parent, std::move(frame.key), frame.index});
      fill(frame.value, *frame.slot, int(frames_.size()) - 1);
    }
    return out;
  }

private:
  /// A value still to convert, where its JSON goes, and its step from its parent.
  struct Frame {
    py::handle value;
    nlohmann::json *slot;
    int parent;
    std::string key; ///< a dict's key; empty for a list element (then `index`)
    size_t index;
  };
  struct Step {
    int parent;
    std::string key;
    size_t index;
  };

  void fill(py::handle value, nlohmann::json &slot, int self) {
    if (value.is_none()) {
      slot = nullptr;
    } else if (PyBool_Check(value.ptr())) {
      slot = value.ptr() == Py_True;
    } else if (PyDict_Check(value.ptr())) {
      slot = nlohmann::json::object();
      for (auto [key, item] : py::reinterpret_borrow<py::dict>(value)) {
        if (!PyUnicode_Check(key.ptr()))
          fail(self, "a dict key must be a str, found " + typeName(key));
        std::string name = text(key, self);
        pending_.push_back({item, &slot[name], self, name, 0}); // map nodes stay put
      }
    } else if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) {
      py::sequence items = py::reinterpret_borrow<py::sequence>(value);
      slot = nlohmann::json::array();
      slot.get_ref<nlohmann::json::array_t &>().resize(items.size());
      for (size_t i = 0; i < items.size(); ++i)
        pending_.push_back({items[i], &slot[i], self, {}, i});
    } else if (PyUnicode_Check(value.ptr())) {
      slot = text(value, self);
    } else if (isArray(value)) { // numpy: its elements as (nested) lists of numbers
      arrays_.push_back(value.attr("tolist")());
      fill(arrays_.back(), slot, self);
    } else if (PyIndex_Check(value.ptr())) { // int, numpy integers
      slot = integer(value, self);
    } else if (PyFloat_Check(value.ptr()) || PyObject_HasAttrString(value.ptr(), "__float__")) {
      double number = PyFloat_AsDouble(value.ptr());
      if (PyErr_Occurred()) {
        PyErr_Clear();
        fail(self, "expected a number, found " + typeName(value));
      }
      if (!std::isfinite(number))
        fail(self, "expected a finite number, found " + std::to_string(number));
      slot = number;
    } else {
      fail(self, "expected a dict, list, str, number, bool or None, found " + typeName(value));
    }
  }

  nlohmann::json integer(py::handle value, int self) {
    py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
    int overflow = 0;
    long long n = index ? PyLong_AsLongLongAndOverflow(index.ptr(), &overflow) : -1;
    if (!index || overflow != 0 || (n == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      fail(self, "an integer beyond 64 bits");
    }
    return n;
  }

  std::string text(py::handle value, int self) {
    Py_ssize_t size = 0;
    const char *utf8 = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
    if (!utf8) {
      PyErr_Clear();
      fail(self, "a str that is not valid Unicode (a lone surrogate?)");
    }
    return std::string(utf8, size_t(size));
  }

  /// A numpy array (or anything with the array interface and tolist()).
  static bool isArray(py::handle value) {
    return PyObject_HasAttrString(value.ptr(), "__array_interface__") &&
           PyObject_HasAttrString(value.ptr(), "tolist");
  }

  static std::string typeName(py::handle value) {
    return py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>();
  }

  /// `left.Node.words[3]`: the path from the example to step `self`.
  std::string path(int self) const {
    std::vector<const Step *> steps;
    for (int at = self; at >= 0 && frames_[size_t(at)].parent >= 0; at = frames_[size_t(at)].parent)
      steps.push_back(&frames_[size_t(at)]);
    std::string out;
    for (auto it = steps.rbegin(); it != steps.rend(); ++it)
      out += (*it)->key.empty() ? "[" + std::to_string((*it)->index) + "]"
                                : (out.empty() ? "" : ".") + (*it)->key;
    return out;
  }

  [[noreturn]] void fail(int self, const std::string &what) const {
    std::string where = path(self);
    throw DataError(kExampleFile + ":" + std::to_string(example_) + ": " +
                    (where.empty() ? "" : where + ": ") + what);
  }

  long example_;
  std::vector<Frame> pending_;
  std::vector<Step> frames_;
  /// The lists numpy arrays were turned into: alive while their elements wait.
  std::deque<py::object> arrays_;
};

} // namespace foldc::rt::python
