// Coroutines for unfolding that waits on computed values. A generated
// unfolding function whose work depends on a computed value (an `if` on a
// tensor, a `loop`, a `beam`) is a coroutine returning Task<T>: it suspends
// where it reads a value the executor has not computed yet, and the agenda
// (Agenda.h) that owns it resumes it after the next batched run.
#pragma once

#include <coroutine>
#include <exception>
#include <optional>
#include <utility>

namespace foldc::rt {

class Agenda;

/// What every unfolding coroutine knows: the agenda that runs it and the
/// example (its index in the batch graph) whose instances it records. A
/// root gets them from the agenda that starts it; a coroutine it awaits
/// inherits them, so a coroutine's example is never implicit.
struct UnfoldingPromise {
  Agenda *agenda = nullptr;
  int example = -1;
};

/// A lazily started coroutine giving a T. Awaited by its caller (which
/// resumes when it finishes, by symmetric transfer: no stack grows with the
/// depth of nested calls) or started by the agenda as an example's root.
template <class T> class [[nodiscard]] Task {
public:
  struct promise_type : UnfoldingPromise {
    std::optional<T> value;
    std::exception_ptr error;
    std::coroutine_handle<> continuation; ///< the awaiting caller, if any

    Task get_return_object() { return Task(Handle::from_promise(*this)); }
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct Finish {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> self) noexcept {
        std::coroutine_handle<> next = self.promise().continuation;
        return next ? next : std::noop_coroutine();
      }
      void await_resume() noexcept {}
    };
    Finish final_suspend() noexcept { return {}; }
    template <class U> void return_value(U &&v) { value.emplace(std::forward<U>(v)); }
    void unhandled_exception() { error = std::current_exception(); }
  };
  using Handle = std::coroutine_handle<promise_type>;

  Task(Task &&other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  Task &operator=(Task &&other) noexcept {
    if (this != &other) {
      destroy();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  Task(const Task &) = delete;
  Task &operator=(const Task &) = delete;
  ~Task() { destroy(); }

  // Awaited by another coroutine: runs this one, as the caller's example,
  // then resumes the caller.
  bool await_ready() const noexcept { return false; }
  template <class CallerPromise>
  std::coroutine_handle<> await_suspend(std::coroutine_handle<CallerPromise> caller) noexcept {
    promise_type &p = handle_.promise();
    p.continuation = caller;
    static_cast<UnfoldingPromise &>(p) = caller.promise();
    return handle_;
  }
  T await_resume() { return take(); }

  /// As a root of `agenda`: unfolds example `example`; not started yet
  /// (the agenda resumes handle() as that example).
  void bind(Agenda &agenda, int example) {
    handle_.promise().agenda = &agenda;
    handle_.promise().example = example;
  }
  std::coroutine_handle<> handle() const { return handle_; }
  bool done() const { return handle_.done(); }
  /// The result of a finished task; rethrows what the coroutine threw.
  T take() {
    promise_type &p = handle_.promise();
    if (p.error)
      std::rethrow_exception(p.error);
    return std::move(*p.value);
  }
  /// What a finished task threw, or null.
  std::exception_ptr error() const { return handle_.promise().error; }

private:
  explicit Task(Handle handle) : handle_(handle) {}
  void destroy() {
    if (handle_)
      handle_.destroy();
  }
  Handle handle_;
};

} // namespace foldc::rt
