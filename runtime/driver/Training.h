// train: the training loop over --data, with --dev evaluated each epoch,
// --save, --curve, --checkpoint and --resume.
#pragma once

#include "runtime/driver/Session.h"

namespace foldc::rt {

/// `train`: epochs of shuffled batches, each one optimizer step, then the
/// epoch's JSON line (and dev results, what --save kept). Over several ranks
/// each runs its share of every batch and the step sums their gradients.
int train(Session &session);

} // namespace foldc::rt
