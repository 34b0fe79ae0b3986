// `NAME info`: a summary of the model's parameters, kernels and metrics.
#pragma once

#include "runtime/driver/Driver.h"

#include <ostream>
#include <string>

namespace foldc::rt {

/// The parameters of each layer and def (the part of a parameter's name
/// before its last dot), their total, the kernels (one per batching key) and
/// the metrics of `model`, named `name`.
void printSummary(const std::string &name, const DriverModel &model, std::ostream &out);

} // namespace foldc::rt
