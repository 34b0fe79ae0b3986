// Threads with large stacks for work that recurses as deep as its input
// (the runtime over deep data, the compiler over deeply nested source).
// Depends on nothing else of the runtime: foldc compiles it too.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <vector>

namespace foldc::rt {

/// Runs `work(i)` for i = 0..count-1 at once, each on a thread of its own
/// whose stack is `stackBytes` large (reserved, touched only as used), and
/// waits for them all. Gives each one's exception, null where it returned.
/// If a thread cannot be started none runs and a std::system_error is thrown,
/// except for one piece of work: then it runs on the caller's stack.
std::vector<std::exception_ptr> onThreads(size_t stackBytes, int count,
                                          const std::function<void(int)> &work);

} // namespace foldc::rt
