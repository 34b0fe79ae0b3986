// JSON Lines input for generated readers: one example per line, and errors
// as `FILE:LINE: path.to.field: what was expected`.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace foldc::rt {

/// A bad line of data. what() is `FILE:LINE: path: message`.
class DataError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Where a JSON value sits: the file, the line, and the path of fields and
/// indexes from the example's root (`expr.left.value`, `words[3]`).
///
/// A path is a link to its parent plus one step, so going a level deeper
/// costs the same at any depth (reading a tree 10^5 levels deep is linear);
/// the text is built only when something fails. A path must not outlive its
/// parent (readers pass them down the call stack).
class JsonPath {
public:
  JsonPath(const std::string &file, long line) : file_(&file), line_(line) {}
  JsonPath field(const std::string &name) const;
  JsonPath index(size_t i) const;
  /// Throws a DataError at this path.
  [[noreturn]] void fail(const std::string &expected) const;
  std::string path() const;
  long line() const { return line_; }

private:
  const std::string *file_;
  long line_;
  const JsonPath *parent_ = nullptr;
  std::string field_; ///< the step from the parent: a field, or empty for an index
  size_t index_ = 0;
};

/// Parses the JSON text of the value at `at` (a line, a request body). A NUL
/// byte or a syntax error fails with its column; a number too large for a
/// double fails at its field.
nlohmann::json parseJson(const std::string &text, const JsonPath &at);

/// Reads the common JSON shapes, failing with the path on a mismatch.
int64_t readInt(const nlohmann::json &value, const JsonPath &at);
double readFloat(const nlohmann::json &value, const JsonPath &at);
bool readBool(const nlohmann::json &value, const JsonPath &at);
std::string readString(const nlohmann::json &value, const JsonPath &at);
/// The array at `at`, or a failure.
const nlohmann::json &readArray(const nlohmann::json &value, const JsonPath &at);
/// Whether records may hold fields their data type does not declare (they are
/// then ignored). Off by default: a misspelt field is more often a mistake
/// than intent. A setting of the process, like the thread count: a driver
/// sets it once, from --allow-unknown-fields, before reading.
void setAllowUnknownFields(bool allow);

/// The object at `at` with `fields`: a missing field fails, and so does an
/// unknown one unless setAllowUnknownFields(true).
const nlohmann::json &readRecord(const nlohmann::json &value, const JsonPath &at,
                                 std::initializer_list<const char *> fields);
/// A union value: an object with one key, the variant (or the bare string of
/// a variant without fields). Returns the variant name; `payload` is its object.
std::string readVariant(const nlohmann::json &value, const JsonPath &at,
                        const nlohmann::json *&payload);

/// A list: every element read by `readElement(json, path)`.
template <typename T, typename ReadElement>
std::vector<T> readList(const nlohmann::json &value, const JsonPath &at, ReadElement readElement) {
  const nlohmann::json &array = readArray(value, at);
  std::vector<T> out;
  out.reserve(array.size());
  for (size_t i = 0; i < array.size(); ++i)
    out.push_back(readElement(array[i], at.index(i)));
  return out;
}

/// A tuple is an array of exactly `size` elements.
const nlohmann::json &readTupleArray(const nlohmann::json &value, const JsonPath &at, size_t size);

/// Calls `onLine(json, path)` for every non-empty line of `file`. Invalid JSON
/// and errors thrown by `onLine` become DataErrors with FILE:LINE.
void forEachJsonLine(const std::string &file,
                     const std::function<void(const nlohmann::json &, const JsonPath &)> &onLine);

} // namespace foldc::rt
