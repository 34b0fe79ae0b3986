// Reading and writing parameters as safetensors files (little-endian F32).
#pragma once

#include "runtime/engine/Params.h"

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace foldc::rt {

/// A malformed or mismatched file; the message names the file and tensor.
class SafetensorsError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct TensorData {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

/// A tensor to write: its name and where its shape and values live.
struct TensorView {
  std::string name;
  const std::vector<int64_t> *shape;
  const std::vector<float> *values;
};

/// Reads every tensor of a safetensors file, checking the header (length,
/// JSON, dtype F32, shapes against byte ranges, offsets in bounds, ordered and
/// not overlapping, covering the data exactly); and its string metadata
/// into `metadata` when given.
std::map<std::string, TensorData>
readSafetensors(const std::string &path, std::map<std::string, std::string> *metadata = nullptr);

/// Writes `tensors` (all finite) and `metadata` to `path` through
/// `path.tmp` and a rename, so a failed or interrupted save leaves the
/// previous file intact. A symbolic link is followed (the file it names is
/// replaced); a device or pipe is written to directly.
void saveTensors(const std::vector<TensorView> &tensors,
                 const std::map<std::string, std::string> &metadata, const std::string &path);

/// Every parameter of `params`, in declaration order, for saveTensors.
std::vector<TensorView> paramViews(const ParamStore &params);

/// saveTensors of every parameter (no metadata).
void saveParams(const ParamStore &params, const std::string &path);

/// Loads `path` into `params`: every parameter must be present with its
/// shape, and nothing else; all mismatches are reported together. A NaN or
/// infinite value is an error.
void loadParams(ParamStore &params, const std::string &path);

/// loadParams from tensors already read from `path` (named in messages).
void assignParams(ParamStore &params, std::map<std::string, TensorData> tensors,
                  const std::string &path);

/// What initFromTensors did: the parameters it set, those it left as they
/// were (the file lacks them), and the file's tensors the model lacks.
struct PartialLoad {
  std::vector<std::string> loaded, kept, ignored;
  /// (file's name, model's name): an ignored tensor that looks like a kept
  /// parameter saved under an older name (same shape and last name part).
  std::vector<std::pair<std::string, std::string>> renamed;
};

/// Sets the parameters of `params` that `path` holds (`train --init-from`):
/// a file with only some of them (another model's, part of a checkpoint)
/// warm-starts those. A tensor of a model parameter's name with another
/// shape, or a NaN or infinite value, is an error naming the tensor, and
/// nothing is set.
PartialLoad initFromTensors(ParamStore &params, const std::string &path);

} // namespace foldc::rt
