// The commands that measure the model: eval (the mean loss and metrics of
// --data) and check (gradients against finite differences, batched against
// per-example).
#pragma once

#include "runtime/driver/Dataset.h"
#include "runtime/driver/Session.h"

namespace foldc::rt {

/// `eval`: one JSON line of the loss and metrics of --data.
int eval(Session &session);
/// `check`: gradients of the whole of --data against finite differences, and
/// batched against per-example: one JSON line; exit 1 when either fails.
int check(Session &session);
/// The loss and metrics of all of `data`; each rank evaluates its share and
/// every rank gets the sum.
BatchResult evaluate(Session &session, const Dataset &data);

} // namespace foldc::rt
