// The parameters a command starts from: --params, else --seed's
// initialisation; then --init-from's tensors and --vectors' rows.
#pragma once

#include "runtime/driver/Session.h"

namespace foldc::rt {

/// Loads --params, or initialises from --seed; then sets the tensors of
/// --init-from and the embedding rows of --vectors. For work `shared` by the
/// ranks, rank 0's parameters are then given to all. (runDriver has set the
/// process's threads.)
void startParams(Session &session, bool shared = true);

} // namespace foldc::rt
