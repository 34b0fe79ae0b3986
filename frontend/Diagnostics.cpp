// Formatting and counting of user diagnostics.
#include "frontend/Diagnostics.h"

namespace foldc {

InFlightDiagnostic::InFlightDiagnostic(DiagnosticEngine &engine, Severity severity,
                                       SourceRange range)
    : engine_(&engine), severity_(severity), range_(range) {}

InFlightDiagnostic::InFlightDiagnostic(InFlightDiagnostic &&other) noexcept
    : engine_(other.engine_), severity_(other.severity_), range_(other.range_),
      message_(std::move(other.message_)) {
  other.engine_ = nullptr;
}

InFlightDiagnostic::~InFlightDiagnostic() {
  if (engine_)
    engine_->emit(severity_, range_, message_.str());
}

DiagnosticEngine::DiagnosticEngine(const SourceManager &sources, std::ostream &out,
                                   unsigned maxErrors)
    : sources_(sources), out_(out), maxErrors_(maxErrors) {}

static const char *severityName(Severity severity) {
  switch (severity) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "error";
}

void DiagnosticEngine::emit(Severity severity, SourceRange range, const std::string &message) {
  if (severity == Severity::Note) {
    if (suppressingNotes_)
      return;
  } else {
    suppressingNotes_ = false;
  }
  if (severity != Severity::Note && errorCount_ > 0 &&
      message.find(kErrorTypeSpelling) != std::string::npos) {
    suppressingNotes_ = true; // a cascade of an error already reported
    return;
  }
  if (severity == Severity::Error) {
    ++errorCount_;
    if (errorCount_ > maxErrors_) {
      suppressingNotes_ = true;
      if (errorCount_ == maxErrors_ + 1)
        out_ << "fatal error: too many errors emitted (" << maxErrors_ << "), stopping now\n";
      return;
    }
  }
  if (range.isValid()) {
    const SourceFile &file = sources_.file(range.begin.file);
    out_ << file.name() << ':' << range.begin.line << ':' << range.begin.column << ": ";
  }
  out_ << severityName(severity) << ": " << message << '\n';
  if (range.isValid())
    printSnippet(range);
  if (severity != Severity::Note && !contexts_.empty() && !contexts_.back().note.empty())
    emit(Severity::Note, contexts_.back().range, contexts_.back().note);
}

/// Counts the code points of a UTF-8 string (continuation bytes are 10xxxxxx).
static size_t codePointCount(std::string_view text) {
  size_t count = 0;
  for (unsigned char c : text)
    count += (c & 0xC0) != 0x80;
  return count;
}

void DiagnosticEngine::printSnippet(SourceRange range) {
  std::string_view line = sources_.file(range.begin.file).line(range.begin.line);
  out_ << line << '\n';
  // Walk the line code point by code point so the caret lands under the
  // right character; tabs are echoed so the alignment survives them.
  std::string marker;
  size_t column = 1;
  size_t lineWidth = codePointCount(line);
  size_t endColumn = range.end.line == range.begin.line ? range.end.column : lineWidth + 1;
  if (endColumn <= range.begin.column)
    endColumn = range.begin.column + 1;
  for (size_t i = 0; i < line.size() && column < range.begin.column; ++i) {
    unsigned char c = line[i];
    if ((c & 0xC0) == 0x80)
      continue;
    marker += c == '\t' ? '\t' : ' ';
    ++column;
  }
  while (column < range.begin.column) { // caret past the end of the line (EOF)
    marker += ' ';
    ++column;
  }
  marker += '^';
  for (++column; column < endColumn && column <= lineWidth; ++column)
    marker += '~';
  out_ << marker << '\n';
}

} // namespace foldc
