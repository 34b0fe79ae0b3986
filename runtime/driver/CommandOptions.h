// The options of a generated driver's commands: one builder per command
// (CLI11), and the checks of options taken together.
#pragma once

#include "runtime/driver/Options.h"

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace foldc::rt {

/// The subcommands of a driver's command line, their options bound to one
/// DriverOptions.
struct Subcommands {
  CLI::App *train, *eval, *infer, *serve, *check, *info;
};
Subcommands addSubcommands(CLI::App &app, DriverOptions &options);

/// What is wrong with the parsed command's options taken together (for a
/// model whose metrics are `metricNames`), or "".
std::string misuseOf(const Subcommands &commands, const DriverOptions &options,
                     const std::vector<std::string> &metricNames);

} // namespace foldc::rt
