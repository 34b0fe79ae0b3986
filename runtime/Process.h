// Process-wide settings for running models (threads and the allocator), and
// threads with large stacks for the work.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <vector>

namespace foldc::rt {

/// Sets the threads Eigen's GEMM may use and keeps freed memory in the heap.
/// glibc returns large blocks to the kernel on free (mmap/munmap), so every
/// batch would page-fault its buffers and Eigen's GEMM packing space anew;
/// measured on the Tree-LSTM benchmark, that was 40% of the time at batch 256.
/// Call once at start-up, before running models.
void configureProcess(int threads);

/// Runs `work(i)` for i = 0..count-1 at once, each on a thread of its own
/// whose stack is `stackBytes` large (reserved, touched only as used), and
/// waits for them all. Gives each one's exception, null where it returned.
/// If a thread cannot be started none runs and a std::system_error is thrown,
/// except for one piece of work: then it runs on the caller's stack.
std::vector<std::exception_ptr> onThreads(size_t stackBytes, int count,
                                          const std::function<void(int)> &work);

} // namespace foldc::rt
