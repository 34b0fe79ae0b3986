// C++ for the `data` declarations: structs, and JSONL readers whose errors
// are `FILE:LINE: path.to.field: what was expected` (§7).
#pragma once

#include "codegen/Emitter.h"
#include "passes/sema/TypedProgram.h"

namespace foldc {

/// The C++ type that holds a host value of `type` (e.g. std::vector<int64_t>).
std::string cppHostType(const TypeRef &type);

/// Declares every data type and its reader (`Tree readTree(json, path)`) in
/// `header`, and defines the readers in `source`. With a model, also
/// `std::vector<Input> readExamples(file)` for its input type.
void emitDataTypes(const TypedProgram &program, Emitter &header, Emitter &source);

} // namespace foldc
