// Threads and allocator settings for running models.
#include "runtime/engine/Process.h"

#include "runtime/engine/Gemm.h"

#include <Eigen/Core>
#include <malloc.h>

namespace foldc::rt {

void configureProcess(int threads) {
  // Eigen's threaded products choose their blocking of the summed dimension
  // by the thread count: its own products stay on one thread, so that
  // results do not depend on the count (the linear layers' GEMMs split rows).
  Eigen::setNbThreads(1);
  setGemmThreads(threads < 1 ? 1 : threads);
  mallopt(M_MMAP_THRESHOLD, 1 << 30); // serve large blocks from the heap...
  mallopt(M_TRIM_THRESHOLD, -1);      // ...and never give them back
  mallopt(M_ARENA_MAX, 1);            // one heap for every thread: no per-thread arena's mmap
}

} // namespace foldc::rt
