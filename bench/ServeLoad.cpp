// serve_load: a load test of `NAME_driver serve` over loopback, bounded in
// requests and time. CONCURRENCY clients (each its own thread and keep-alive
// connection) post the lines of --data round robin as single examples;
// prints one JSON line: throughput, p50/p99 latency, errors.
//
//   serve_load --port 8080 --data dev.jsonl --concurrency 64 --requests 4000 --seconds 20
#include <CLI/CLI.hpp>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  int port = 8080;
  std::string data;
  int concurrency = 1;
  long requests = 2000;
  double seconds = 20;
};

std::vector<std::string> readLines(const std::string &file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      lines.push_back(line);
  return lines;
}

double percentile(std::vector<double> sorted, double p) {
  if (sorted.empty())
    return 0;
  size_t at = std::min(sorted.size() - 1, size_t(p * double(sorted.size())));
  return sorted[at];
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  CLI::App app{"serve_load: throughput and latency of a foldc model server over loopback"};
  app.add_option("--port", o.port, "the server's port on 127.0.0.1")->required();
  app.add_option("--data", o.data, "JSON Lines examples to post, round robin")->required();
  app.add_option("--concurrency", o.concurrency, "clients at once")->check(CLI::Range(1, 1024));
  app.add_option("--requests", o.requests, "requests in all, at most")
      ->check(CLI::Range(1L, 10000000L));
  app.add_option("--seconds", o.seconds, "stop after this long, at most")
      ->check(CLI::Range(0.1, 3600.0));
  CLI11_PARSE(app, argc, argv);
  std::vector<std::string> lines = readLines(o.data);
  if (lines.empty()) {
    std::cerr << "serve_load: no examples in " << o.data << "\n";
    return 1;
  }
  std::atomic<long> issued{0}, errors{0};
  std::mutex mutex;
  std::vector<double> latencies;
  auto begin = std::chrono::steady_clock::now();
  auto deadline = begin + std::chrono::duration<double>(o.seconds);
  std::vector<std::thread> clients;
  for (int c = 0; c < o.concurrency; ++c)
    clients.emplace_back([&] {
      httplib::Client client("127.0.0.1", o.port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_read_timeout(60, 0);
      std::vector<double> mine;
      for (long n; (n = issued++) < o.requests && std::chrono::steady_clock::now() < deadline;) {
        auto sent = std::chrono::steady_clock::now();
        auto answer = client.Post("/infer", lines[size_t(n) % lines.size()], "application/json");
        if (!answer || answer->status != 200)
          ++errors;
        mine.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count());
      }
      std::lock_guard lock(mutex);
      latencies.insert(latencies.end(), mine.begin(), mine.end());
    });
  for (std::thread &t : clients)
    t.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  std::sort(latencies.begin(), latencies.end());
  nlohmann::json report = {{"concurrency", o.concurrency},
                           {"requests", latencies.size()},
                           {"errors", errors.load()},
                           {"seconds", seconds},
                           {"requests_per_second", double(latencies.size()) / seconds},
                           {"p50_ms", 1000 * percentile(latencies, 0.50)},
                           {"p99_ms", 1000 * percentile(latencies, 0.99)}};
  std::cout << report.dump() << std::endl;
  return errors.load() ? 1 : 0;
}
