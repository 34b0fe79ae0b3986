// The process's memory use, for reports (benchmarks, out-of-memory errors).
#pragma once

#include <sys/resource.h>

namespace foldc::rt {

/// The process's peak resident memory so far, in MiB.
inline double peakResidentMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_maxrss) / 1024.0; // Linux reports KiB
}

} // namespace foldc::rt
