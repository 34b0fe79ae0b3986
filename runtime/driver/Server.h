// `NAME_driver serve`: the model behind HTTP, concurrent requests batched
// dynamically (BatchQueue).
#pragma once

#include "runtime/driver/BatchQueue.h"
#include "runtime/io/Jsonl.h"

#include <functional>
#include <string>

namespace foldc::rt {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  BatchQueue::Limits limits;
  size_t maxBodyBytes = size_t(1) << 20; ///< larger bodies get 413
  int threads = 96;                      ///< HTTP workers: requests in flight at once
  /// A client that sends nothing (or takes nothing) for this long while a
  /// request or an answer is under way is disconnected.
  long readTimeoutMs = 5000;
};

/// Reads one example of a request body into the model's own type; throws
/// DataError at `at`.
using ParseExample = std::function<BatchQueue::Item(const nlohmann::json &, const JsonPath &)>;

/// The examples of a request body: one JSON value, or a JSON array of them.
struct RequestBody {
  std::vector<BatchQueue::Item> examples;
  bool many = false; ///< an array: the answer is an array too
};
/// Reads a request body; throws DataError for a body that is not JSON
/// (`body:1: example: invalid JSON at column 7: ...`) or an example that does
/// not read (`body:1: [2].label: expected an int, ...`: its place in the body).
RequestBody parseRequestBody(const std::string &body, const ParseExample &parse);

/// Serves until SIGTERM or SIGINT, then finishes the requests in flight and
/// returns 0 (1 when the address cannot be bound):
///
/// - `POST /infer`: one example (a JSON value of the data's shape) answers
///   `{"output": ...}`; a JSON array of examples answers an array of those.
///   A body that is not JSON or an example that does not read or run gets 400
///   with `{"error": "body:1: [2].label: expected an int, ..."}` (its place in
///   the body); a body over `maxBodyBytes` 413; a full queue 503.
/// - `GET /healthz`: 200 `ok`.
/// - `GET /metrics`: ServeMetrics in Prometheus text.
///
/// `run` runs one batch (on the batching thread alone); `onListening(port)`
/// is called once the socket is bound (port 0 picks a free one).
int serveHttp(const ServeOptions &options, ParseExample parse, BatchQueue::RunBatch run,
              const std::function<void(int)> &onListening);

} // namespace foldc::rt
