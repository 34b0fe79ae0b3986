// `NAME_driver serve`: the model behind HTTP, concurrent requests batched
// dynamically (BatchQueue), every client limited in size and time.
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
  size_t maxBodyBytes = size_t(1) << 20; ///< larger bodies, however framed, get 413
  int threads = 4;                       ///< threads reading bodies and writing answers
  size_t maxConnections = 10000;         ///< beyond, a new connection gets 503
  /// A client that sends nothing (or takes nothing) for this long while a
  /// request or an answer is under way gets 408 and is disconnected.
  long readTimeoutMs = 5000;
  /// A request must arrive whole within this time of its first byte.
  long requestTimeoutMs = 30000;
  /// A connection waits this long for its next request (or its first).
  long idleTimeoutMs = 10000;
  /// After SIGTERM, open connections are kept this long: what arrives on
  /// them gets 503 with `Connection: close`.
  long drainMs = 1000;
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

/// Serves until SIGTERM or SIGINT, then answers the requests in flight and
/// returns; throws std::runtime_error when the address cannot be bound (a
/// port in use included):
///
/// - `POST /infer`: one example (a JSON value of the data's shape) answers
///   `{"output": ...}`; a JSON array of examples answers an array of those.
///   A body that is not JSON or an example that does not read or run gets 400
///   with `{"error": "body:1: [2].label: expected an int, ..."}` (its place in
///   the body); a body over `maxBodyBytes` 413, as is an array of more
///   examples than the queue holds; a full queue 503; a multipart form 415.
/// - `GET /healthz`: 200 `ok`.
/// - `GET /metrics`: ServeMetrics in Prometheus text.
///
/// Requests on one connection are answered in order (pipelining); a
/// connection is kept until the client closes it or is idle. A request not
/// read whole in time gets 408, header fields over 32 KiB 431; both close
/// the connection.
///
/// `run` runs one batch (on the batching thread alone); `onListening(port)`
/// is called once the socket is bound (port 0 picks a free one).
void serveHttp(const ServeOptions &options, ParseExample parse, BatchQueue::RunBatch run,
               const std::function<void(int)> &onListening);

} // namespace foldc::rt
