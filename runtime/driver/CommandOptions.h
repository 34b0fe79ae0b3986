// The options of a generated driver's commands: one builder per command
// (CLI11), and the checks of options taken together.
#pragma once

#include "runtime/driver/Options.h"
#include "runtime/driver/Session.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace foldc::rt {

/// The subcommands of a driver's command line, their options bound to one
/// DriverOptions: each command that runs the model, and info.
struct Subcommands {
  std::vector<std::pair<Command, CLI::App *>> commands;
  CLI::App *info = nullptr;

  /// The command the parsed command line names, if it names one (not info).
  std::optional<Command> parsed() const;
};
Subcommands addSubcommands(CLI::App &app, DriverOptions &options);

/// What is wrong with `command`'s options taken together (for a model whose
/// metrics are `metricNames`), or "".
std::string misuseOf(Command command, const DriverOptions &options,
                     const std::vector<std::string> &metricNames);

} // namespace foldc::rt
