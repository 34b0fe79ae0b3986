// Threads with large stacks (see Threads.h).
#include "runtime/support/Threads.h"

#include <pthread.h>

#include <atomic>
#include <latch>
#include <system_error>

namespace foldc::rt {

namespace {

/// One thread's piece of work. The threads start together once all exist,
/// or not at all.
struct Piece {
  const std::function<void(int)> *work;
  int index;
  std::latch *go;
  const std::atomic<bool> *cancelled;
  std::exception_ptr error;
};

void *runPiece(void *p) {
  auto *piece = static_cast<Piece *>(p);
  piece->go->wait();
  if (piece->cancelled->load())
    return nullptr;
  try {
    (*piece->work)(piece->index);
  } catch (...) {
    piece->error = std::current_exception();
  }
  return nullptr;
}

} // namespace

std::vector<std::exception_ptr> onThreads(size_t stackBytes, int count,
                                          const std::function<void(int)> &work) {
  std::latch go(1);
  std::atomic<bool> cancelled = false;
  std::vector<Piece> pieces;
  for (int i = 0; i < count; ++i)
    pieces.push_back({&work, i, &go, &cancelled, nullptr});
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, stackBytes);
  std::vector<pthread_t> threads;
  int failed = 0;
  for (Piece &piece : pieces) {
    pthread_t thread;
    failed = pthread_create(&thread, &attributes, runPiece, &piece);
    if (failed)
      break;
    threads.push_back(thread);
  }
  pthread_attr_destroy(&attributes);
  cancelled = failed != 0;
  go.count_down();
  for (pthread_t thread : threads)
    pthread_join(thread, nullptr);
  if (failed && count == 1) {
    std::exception_ptr error;
    try {
      work(0); // no thread to be had: the ordinary stack
    } catch (...) {
      error = std::current_exception();
    }
    return {error};
  }
  if (failed)
    throw std::system_error(failed, std::generic_category(), "starting a thread");
  std::vector<std::exception_ptr> errors;
  for (const Piece &piece : pieces)
    errors.push_back(piece.error);
  return errors;
}

} // namespace foldc::rt
