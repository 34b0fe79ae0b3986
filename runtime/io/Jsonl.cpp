// JSONL reading with located errors.
#include "runtime/io/Jsonl.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

namespace foldc::rt {

using nlohmann::json;

JsonPath JsonPath::field(const std::string &name) const {
  JsonPath p(*file_, line_);
  p.parent_ = this;
  p.field_ = name;
  return p;
}

JsonPath JsonPath::index(size_t i) const {
  JsonPath p(*file_, line_);
  p.parent_ = this;
  p.index_ = i;
  return p;
}

std::string JsonPath::path() const {
  std::vector<const JsonPath *> steps;
  for (const JsonPath *p = this; p->parent_; p = p->parent_)
    steps.push_back(p);
  std::string text;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    if (!(*it)->field_.empty())
      text += (text.empty() ? "" : ".") + (*it)->field_;
    else
      text += "[" + std::to_string((*it)->index_) + "]";
  }
  return text;
}

void JsonPath::fail(const std::string &expected) const {
  std::string at = path();
  throw DataError(*file_ + ":" + std::to_string(line_) + ": " + (at.empty() ? "example" : at) +
                  ": " + expected);
}

/// What was found instead: a scalar as written (shortened), a container by
/// its kind (dumping one nested 10^5 deep would recurse as deep).
static std::string found(const json &value) {
  if (value.is_array())
    return "found an array of " + std::to_string(value.size());
  if (value.is_object())
    return "found an object";
  std::string text = value.dump();
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return "found " + text;
}

int64_t readInt(const json &value, const JsonPath &at) {
  // nlohmann reads an integer beyond 64 bits as a double.
  if (double v = value.is_number_float() ? value.get<double>() : 0;
      std::abs(v) >= 0x1p63 && v == std::floor(v))
    at.fail("expected an integer that fits in 64 bits, found " + value.dump());
  if (!value.is_number_integer())
    at.fail("expected an integer, " + found(value));
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    at.fail("expected an integer that fits in 64 bits, found " + value.dump());
  return value.get<int64_t>();
}

double readFloat(const json &value, const JsonPath &at) {
  if (!value.is_number())
    at.fail("expected a number, " + found(value));
  double v = value.get<double>();
  // Values are f32 in every kernel: a larger one would be an infinity there.
  if (std::abs(v) > double(std::numeric_limits<float>::max()))
    at.fail("expected a number within the range of f32 (magnitude at most 3.4e38), found " +
            value.dump());
  return v;
}

bool readBool(const json &value, const JsonPath &at) {
  if (!value.is_boolean())
    at.fail("expected true or false, " + found(value));
  return value.get<bool>();
}

std::string readString(const json &value, const JsonPath &at) {
  if (!value.is_string())
    at.fail("expected a string, " + found(value));
  return value.get<std::string>();
}

const json &readArray(const json &value, const JsonPath &at) {
  if (!value.is_array())
    at.fail("expected an array, " + found(value));
  return value;
}

const json &readTupleArray(const json &value, const JsonPath &at, size_t size) {
  if (!value.is_array() || value.size() != size)
    at.fail("expected an array of " + std::to_string(size) + " elements, " + found(value));
  return value;
}

namespace {
std::atomic<bool> allowUnknownFields{false};
} // namespace

void setAllowUnknownFields(bool allow) { allowUnknownFields = allow; }

const json &readRecord(const json &value, const JsonPath &at,
                       std::initializer_list<const char *> fields) {
  if (!value.is_object())
    at.fail("expected an object, " + found(value));
  for (const char *f : fields)
    if (!value.contains(f))
      at.field(f).fail("missing field");
  if (allowUnknownFields)
    return value;
  for (const auto &[key, v] : value.items()) {
    bool known = false;
    for (const char *f : fields)
      known |= key == f;
    if (!known)
      at.field(key).fail("unknown field");
  }
  return value;
}

std::string readVariant(const json &value, const JsonPath &at, const json *&payload) {
  static const json empty = json::object();
  if (value.is_string()) {
    payload = &empty;
    return value.get<std::string>();
  }
  if (!value.is_object() || value.size() != 1)
    at.fail("expected an object with one key, the variant, " + found(value));
  payload = &value.begin().value();
  return value.begin().key();
}

namespace {

/// `text` with bytes outside printable ASCII written as \xHH: the message
/// quotes what was read, which may be any bytes (not UTF-8, control
/// characters), and goes on into JSON answers and Python strings.
std::string printable(const std::string &text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

/// Follows a failed parse again through nlohmann's SAX events to learn where
/// it failed: the path of fields and indexes open at the error, and the error.
/// Run only after a parse failed, so reading valid data costs nothing more.
class ErrorLocator {
public:
  using string_t = json::string_t;

  bool null() { return valueEnded(); }
  bool boolean(bool) { return valueEnded(); }
  bool number_integer(json::number_integer_t) { return valueEnded(); }
  bool number_unsigned(json::number_unsigned_t) { return valueEnded(); }
  bool number_float(json::number_float_t, const string_t &) { return valueEnded(); }
  bool string(string_t &) { return valueEnded(); }
  bool binary(json::binary_t &) { return valueEnded(); }
  bool start_object(size_t) { return open(false); }
  bool start_array(size_t) { return open(true); }
  bool key(string_t &name) {
    steps_.back().field = name;
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  template <class Exception>
  bool parse_error(size_t column, const std::string &token, const Exception &error) {
    errorId_ = error.id;
    column_ = column;
    token_ = token;
    message_ = error.what();
    return false;
  }

  /// Fails at the error's field (a number out of range) or column (the rest).
  [[noreturn]] void fail(const JsonPath &at) const {
    if (errorId_ != kNumberOverflow) {
      size_t reason = message_.find("syntax error");
      at.fail("invalid JSON at column " + std::to_string(column_) + ": " +
              printable(reason == std::string::npos ? message_ : message_.substr(reason)));
    }
    std::vector<JsonPath> path{at}; // each links to the one before: no reallocation
    path.reserve(steps_.size() + 1);
    for (const Step &step : steps_)
      path.push_back(step.array ? path.back().index(step.index) : path.back().field(step.field));
    path.back().fail("number out of range: " + token_ + " does not fit in a 64-bit float");
  }

private:
  static constexpr int kNumberOverflow = 406; ///< nlohmann's out_of_range.406
  struct Step {
    bool array;
    std::string field; ///< objects: the field being read
    size_t index = 0;  ///< arrays: the element being read
  };

  bool open(bool array) {
    steps_.push_back({array, {}, 0});
    return true;
  }
  bool close() {
    steps_.pop_back();
    return valueEnded();
  }
  bool valueEnded() {
    if (!steps_.empty() && steps_.back().array)
      ++steps_.back().index;
    return true;
  }

  std::vector<Step> steps_;
  int errorId_ = 0;
  size_t column_ = 0;
  std::string token_, message_;
};

} // namespace

json parseJson(const std::string &text, const JsonPath &at) {
  if (size_t nul = text.find('\0'); nul != std::string::npos)
    at.fail("a NUL byte at column " + std::to_string(nul + 1) + " (not a text line)");
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!value.is_discarded())
    return value;
  ErrorLocator locator;
  json::sax_parse(text, &locator);
  locator.fail(at);
}

void forEachJsonLine(const std::string &file,
                     const std::function<void(const json &, const JsonPath &)> &onLine) {
  if (std::filesystem::is_directory(file))
    throw DataError(file + ": is a directory, not a JSON Lines file");
  std::ifstream in(file);
  if (!in)
    throw DataError(file + ": cannot open for reading");
  std::string line;
  for (long number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    JsonPath at(file, number);
    onLine(parseJson(line, at), at);
  }
}

} // namespace foldc::rt
