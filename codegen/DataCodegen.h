// C++ for the `data` declarations: structs, and JSONL readers whose errors
// are `FILE:LINE: path.to.field: what was expected`.
#pragma once

#include "codegen/Emitter.h"
#include "codegen/Naming.h"
#include "passes/batching/BatchPlan.h"

namespace foldc {

/// The C++ type that holds a host value of `type` (e.g. std::vector<int64_t>).
/// Data types are prefixed with `scope` (a namespace and `::`, or nothing).
std::string cppHostType(const BatchPlan &plan, const CppNames &names, const TypeRef &type,
                        const std::string &scope = "");

/// Declares every data type and its reader (`Tree readTree(json, path)`) in
/// `header`, and defines the readers in `source`. With a model, also
/// `std::vector<Input> readExamples(file)` for its input type.
void emitDataTypes(const BatchPlan &plan, const CppNames &names, Emitter &header, Emitter &source);

/// What a driver's --help says its --data holds: the model's example type
/// and every data type it reaches, as JSON (`Tree = {"Leaf": {...}} | ...`).
std::string exampleFormat(const BatchPlan &plan);

} // namespace foldc
