// Which of several values the selecting kernels took (the largest member of
// a segment, the largest or smallest along an axis), recorded while `check`
// probes the loss: a probe that selects another value than the unperturbed
// point has crossed a decision, like a loop that stops a step earlier, and
// its finite difference says nothing of the gradient there.
#pragma once

#include <cstdint>

namespace foldc::rt {

/// While a ChoiceLog lives on a thread, the selecting kernels that run on it
/// fold each choice into its digest, in the order they make them. Without
/// one, recording costs a test of a thread-local pointer.
class ChoiceLog {
public:
  ChoiceLog() : previous_(current()) { current() = this; }
  ~ChoiceLog() { current() = previous_; }
  ChoiceLog(const ChoiceLog &) = delete;
  ChoiceLog &operator=(const ChoiceLog &) = delete;

  /// The choices made so far (equal digests: the same choices).
  uint64_t digest() const { return digest_; }

  /// Whether choices are being recorded on this thread.
  static bool active() { return current() != nullptr; }
  /// Folds `choice` (a position among the values selected from) into this
  /// thread's log.
  static void record(int64_t choice) {
    if (ChoiceLog *log = current())
      log->digest_ = (log->digest_ ^ uint64_t(choice)) * 0x100000001b3ULL; // FNV-1a
  }

private:
  static ChoiceLog *&current() {
    thread_local ChoiceLog *log = nullptr;
    return log;
  }

  ChoiceLog *previous_;
  uint64_t digest_ = 0xcbf29ce484222325ULL;
};

} // namespace foldc::rt
