// The commands that run the model on examples for their outputs: infer (of
// --data, or of standard input's lines as they come) and serve (over HTTP).
// Both streaming forms batch what arrives together (BatchQueue).
#pragma once

#include "runtime/driver/Session.h"

namespace foldc::rt {

/// `infer`: each example's output as a JSON line naming its line of --data;
/// an example that fails alone is reported on stderr and the others still
/// get theirs (exit 1 then). `--data -` answers standard input's lines as
/// they come. Rank 0 alone runs it.
int infer(Session &session);
/// `serve`: the model over HTTP until SIGTERM or SIGINT (Server.h).
int serve(Session &session);

} // namespace foldc::rt
