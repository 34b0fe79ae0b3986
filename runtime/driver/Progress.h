// An epoch's progress on stderr.
#pragma once

#include <chrono>
#include <cstddef>

namespace foldc::rt {

/// Reports an epoch's progress on stderr: examples done, their rate, the
/// time left and the running train loss. In a terminal one line is redrawn
/// each second (and cleared by finish()); into a file or pipe, a line every
/// ten seconds.
class Progress {
public:
  Progress(int epoch, int epochs, size_t total);

  void update(size_t done, double loss);
  /// Clears a redrawn line, so that what follows starts on a clean one.
  void finish();
  double seconds() const;

private:
  int epoch_, epochs_;
  size_t total_;
  bool terminal_, shown_ = false;
  std::chrono::steady_clock::time_point begin_ = std::chrono::steady_clock::now(), last_ = begin_;
};

} // namespace foldc::rt
