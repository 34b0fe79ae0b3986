// An epoch's progress on stderr (see Progress.h).
#include "runtime/driver/Progress.h"

#include "runtime/support/Timing.h"

#include <cstdio>
#include <unistd.h>

namespace foldc::rt {

Progress::Progress(int epoch, int epochs, size_t total)
    : epoch_(epoch), epochs_(epochs), total_(total), terminal_(isatty(STDERR_FILENO) == 1) {}

void Progress::update(size_t done, double loss) {
  auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::seconds(terminal_ ? 1 : 10))
    return;
  last_ = now;
  double rate = double(done) / secondsSince(begin_);
  std::fprintf(stderr,
               "%sepoch %d/%d: %zu/%zu examples, %.0f examples/s, %.0f s left, train loss %.4g%s",
               terminal_ ? "\r\033[K" : "", epoch_, epochs_, done, total_, rate,
               double(total_ - done) / rate, loss, terminal_ ? "" : "\n");
  shown_ = true;
}

void Progress::finish() {
  if (terminal_ && shown_)
    std::fprintf(stderr, "\r\033[K");
}

double Progress::seconds() const { return secondsSince(begin_); }

} // namespace foldc::rt
