// Wall-clock seconds for the runtime's reports (executor stats, the driver's
// progress and timing fields).
#pragma once

#include <chrono>

namespace foldc::rt {

inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace foldc::rt
