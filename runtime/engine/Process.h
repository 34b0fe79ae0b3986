// Process-wide settings for running models (threads and the allocator).
#pragma once

namespace foldc::rt {

/// Sets the threads the linear layers' GEMMs may use (each GEMM's rows split
/// among them: results are the same whatever the count) and keeps freed
/// memory in the heap.
/// glibc returns large blocks to the kernel on free (mmap/munmap), so every
/// batch would page-fault its buffers and Eigen's GEMM packing space anew
/// (bench/README.md, "What made the difference"). All threads share the main
/// heap: a thread's own arena (the large-stack thread that runs commands has
/// one) serves a block too big for its 64 MB heaps by mmap whatever the
/// threshold, and unmaps it on free.
/// Call once at start-up, before running models.
void configureProcess(int threads);

} // namespace foldc::rt
