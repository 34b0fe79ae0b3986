// The one diagnostics engine every phase reports user errors through.
#pragma once

#include "frontend/SourceManager.h"

#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace foldc {

enum class Severity { Error, Warning, Note };

/// How a type is spelled in messages when it could not be known because of
/// an error already reported: a later error that quotes it follows from
/// that one, and is not printed.
inline constexpr std::string_view kErrorTypeSpelling = "<error>";

class DiagnosticEngine;

/// A diagnostic being built with `<<`; it is printed when it goes out of scope.
class InFlightDiagnostic {
public:
  InFlightDiagnostic(DiagnosticEngine &engine, Severity severity, SourceRange range);
  InFlightDiagnostic(InFlightDiagnostic &&other) noexcept;
  InFlightDiagnostic(const InFlightDiagnostic &) = delete;
  ~InFlightDiagnostic();

  template <typename T> InFlightDiagnostic &operator<<(const T &value) {
    message_ << value;
    return *this;
  }

private:
  DiagnosticEngine *engine_;
  Severity severity_;
  SourceRange range_;
  std::ostringstream message_;
};

/// Prints clang-style diagnostics: `FILE:LINE:COL: error: message`, the
/// source line, and a caret with `~` under the rest of the range. Stops
/// printing after `maxErrors` errors (notes follow their error). An error
/// quoting kErrorTypeSpelling after an earlier error is a cascade: dropped
/// with its notes.
class DiagnosticEngine {
public:
  DiagnosticEngine(const SourceManager &sources, std::ostream &out, unsigned maxErrors = 20);

  InFlightDiagnostic error(SourceRange range) { return {*this, Severity::Error, range}; }
  InFlightDiagnostic warning(SourceRange range) { return {*this, Severity::Warning, range}; }
  /// A note attaches to the last error or warning; it is dropped with it.
  InFlightDiagnostic note(SourceRange range) { return {*this, Severity::Note, range}; }

  unsigned errorCount() const { return errorCount_; }
  bool hasErrors() const { return errorCount_ != 0; }

private:
  friend class InFlightDiagnostic;
  friend class DiagnosticContext;
  /// Where the code being checked comes from: a note for every error and
  /// warning while it is innermost (empty: none).
  struct Context {
    SourceRange range;
    std::string note;
  };
  std::vector<Context> contexts_;
  void emit(Severity severity, SourceRange range, const std::string &message);
  void printSnippet(SourceRange range);

  const SourceManager &sources_;
  std::ostream &out_;
  unsigned maxErrors_;
  unsigned errorCount_ = 0;
  bool suppressingNotes_ = false;
};

/// While alive, each error and warning gets a note at `range` saying
/// `note` (where the code being checked was made: `in instance 'fwd' of
/// layer 'cell', made here`), unless a context made later is alive; an empty
/// `note` stands for code that needs none.
class DiagnosticContext {
public:
  DiagnosticContext(DiagnosticEngine &engine, SourceRange range, std::string note)
      : engine_(engine) {
    engine_.contexts_.push_back({range, std::move(note)});
  }
  ~DiagnosticContext() { engine_.contexts_.pop_back(); }
  DiagnosticContext(const DiagnosticContext &) = delete;
  DiagnosticContext &operator=(const DiagnosticContext &) = delete;

private:
  DiagnosticEngine &engine_;
};

/// `a, b and c`: a list as a message says it.
inline std::string listedWithAnd(const std::vector<std::string> &items) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i)
    text += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return text;
}

} // namespace foldc
