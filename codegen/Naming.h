// The one place language identifiers become C++ identifiers.
#pragma once

#include "passes/batching/BatchPlan.h"

#include <map>
#include <set>
#include <string>

namespace foldc {

/// Names in generated C++. A language identifier keeps its spelling unless
/// C++ or the generated code claims it: keywords and alternative tokens
/// (`and`, `not`, ...), identifiers C++ reserves (a leading `_`, `__`),
/// names the generated code defines (`Model`, `graph`, `std`, the
/// namespace, ...) and names ending in `_`. Those get `_k` (and more `k`s
/// until unique among the program's names). Names the generator makes up
/// for itself (locals, instances, parameter members) all end in `_`, so they
/// never meet a language identifier.
class CppNames {
public:
  CppNames(const BatchPlan &plan, const std::string &cppNamespace);

  /// A data type, variant, field or def name as written.
  const std::string &operator()(const std::string &source) const;

  /// A local of `function`: parameters and binders by their names, the rest `vN_`.
  std::string local(const FunctionPlan &function, int local) const;
  /// The unfolding function of a def.
  std::string function(const FunctionPlan &function) const;
  /// The class of a kernel: `Kernel3_tree_lstm_1`.
  static std::string kernelClass(const KernelPlan &kernel);
  /// The variable holding an instance of a kernel.
  static std::string instance(const KernelPlan &kernel);
  /// A kernel's member holding the index of parameter `param`.
  static std::string paramMember(int param);
  /// The reader of a data type: `readTree`.
  std::string reader(const PlanDataType &data) const;

private:
  void add(const std::string &source);

  std::set<std::string> sources_; ///< every identifier of the program
  std::set<std::string> taken_;   ///< C++ names given out
  std::set<std::string> claimed_; ///< what C++ and the generated code reserve
  mutable std::map<std::string, std::string> cpp_;
};

} // namespace foldc
