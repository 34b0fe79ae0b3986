// Safetensors round trips, every malformed-file case, and safe saving.
#include "runtime/io/Safetensors.h"

#include "TempDirTest.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace foldc::rt {
namespace {

namespace fs = std::filesystem;

class Safetensors : public test::TempDirTest {
protected:
  /// Writes a file with `header` as its JSON and `dataBytes` zero bytes of data.
  std::string writeRaw(const std::string &header, size_t dataBytes, uint64_t declaredLength = 0) {
    std::string file = path("raw.safetensors");
    std::ofstream out(file, std::ios::binary);
    uint64_t n = declaredLength ? declaredLength : header.size();
    for (int i = 0; i < 8; ++i)
      out.put(char((n >> (8 * i)) & 0xff));
    out << header << std::string(dataBytes, '\0');
    return file;
  }

  static ParamStore model() {
    ParamStore p;
    p.add("W", {2, 3}, {InitKind::Uniform, -1, 1});
    p.add("cell.b", {3}, {InitKind::Ones});
    p.initialize(5);
    return p;
  }

  /// The message of the SafetensorsError that `f` throws ("" if none).
  template <typename F> static std::string errorOf(F f) {
    try {
      f();
    } catch (const SafetensorsError &e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(Safetensors, RoundTripKeepsNamesShapesAndValues) {
  ParamStore saved = model();
  saveParams(saved, path("p.safetensors"));
  ParamStore loaded;
  loaded.add("W", {2, 3}, {});
  loaded.add("cell.b", {3}, {});
  loadParams(loaded, path("p.safetensors"));
  EXPECT_EQ(loaded.at(0).value, saved.at(0).value);
  EXPECT_EQ(loaded.at(1).value, saved.at(1).value);
  auto tensors = readSafetensors(path("p.safetensors"));
  EXPECT_EQ(tensors.at("W").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_FALSE(fs::exists(path("p.safetensors.tmp")));
}

TEST_F(Safetensors, ShortFile) {
  std::string file = path("short");
  std::ofstream(file) << "abc";
  EXPECT_NE(errorOf([&] { readSafetensors(file); }).find("shorter than the 8-byte header"),
            std::string::npos);
}

TEST_F(Safetensors, HeaderLengthPastTheEnd) {
  std::string file = writeRaw("{}", 0, 1000);
  EXPECT_NE(errorOf([&] { readSafetensors(file); }).find("header length 1000 exceeds"),
            std::string::npos);
}

TEST_F(Safetensors, BadJson) {
  std::string file = writeRaw("{\"W\": [", 0);
  EXPECT_NE(errorOf([&] { readSafetensors(file); }).find("not valid JSON"), std::string::npos);
}

TEST_F(Safetensors, WrongDtypeNamesTheTensor) {
  std::string file =
      writeRaw(R"({"W": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}})", 4);
  EXPECT_NE(errorOf([&] { readSafetensors(file); }).find("tensor 'W': dtype F16, expected F32"),
            std::string::npos);
}

TEST_F(Safetensors, ShapeDisagreesWithOffsets) {
  std::string file =
      writeRaw(R"({"W": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 16]}})", 16);
  EXPECT_NE(errorOf([&] {
              readSafetensors(file);
            }).find("tensor 'W': data_offsets [0, 16] do not hold shape [2, 3] of F32 (24 bytes)"),
            std::string::npos);
}

TEST_F(Safetensors, OverlappingOffsets) {
  std::string file = writeRaw(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                 "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                              12);
  EXPECT_NE(errorOf([&] {
              readSafetensors(file);
            }).find("tensor 'b': data_offsets begin at 4, expected 8"),
            std::string::npos);
}

TEST_F(Safetensors, OffsetsPastTheData) {
  std::string file =
      writeRaw(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", 8);
  EXPECT_NE(errorOf([&] {
              readSafetensors(file);
            }).find("tensor 'a': data_offsets end at 16 past the data (8 bytes)"),
            std::string::npos);
}

TEST_F(Safetensors, MissingExtraAndMisshapenTensorsAreAllReported) {
  ParamStore saved = model();
  saveParams(saved, path("p.safetensors"));
  ParamStore other;
  other.add("W", {3, 2}, {});
  other.add("bias", {3}, {});
  std::string message = errorOf([&] { loadParams(other, path("p.safetensors")); });
  EXPECT_NE(message.find("tensor 'W' has shape [2, 3], expected [3, 2]"), std::string::npos)
      << message;
  EXPECT_NE(message.find("missing tensor 'bias' [3]"), std::string::npos) << message;
  EXPECT_NE(message.find("unexpected tensor 'cell.b' [3]"), std::string::npos) << message;
  EXPECT_EQ(other.at(0).value, std::vector<float>(6, 0.0f)) << "nothing is loaded on error";
}

TEST_F(Safetensors, InitFromSetsTheParametersTheFileHoldsAndListsTheRest) {
  ParamStore saved;
  saved.add("W", {2, 3}, {InitKind::Constant, 7});
  saved.add("other.b", {2}, {InitKind::Ones});
  saved.initialize(0);
  saveParams(saved, path("part.safetensors"));
  ParamStore target = model();
  std::vector<float> bias = target.at(1).value;
  PartialLoad load = initFromTensors(target, path("part.safetensors"));
  EXPECT_EQ(load.loaded, std::vector<std::string>{"W"});
  EXPECT_EQ(load.kept, std::vector<std::string>{"cell.b"});
  EXPECT_EQ(load.ignored, std::vector<std::string>{"other.b"});
  EXPECT_EQ(target.at(0).value, std::vector<float>(6, 7.0f));
  EXPECT_EQ(target.at(1).value, bias) << "a parameter the file lacks keeps its initial value";
}

TEST_F(Safetensors, InitFromRefusesAnotherShapeAndLoadsNothing) {
  ParamStore saved;
  saved.add("W", {3, 2}, {InitKind::Constant, 7});
  saved.add("cell.b", {3}, {InitKind::Constant, 2});
  saved.initialize(0);
  saveParams(saved, path("bad.safetensors"));
  ParamStore target = model();
  std::vector<float> bias = target.at(1).value;
  std::string message = errorOf([&] { initFromTensors(target, path("bad.safetensors")); });
  EXPECT_NE(message.find("tensor 'W' has shape [3, 2], the model's is [2, 3]"), std::string::npos)
      << message;
  EXPECT_EQ(target.at(1).value, bias) << "cell.b fits, but nothing is loaded on error";
}

TEST_F(Safetensors, FailedSaveLeavesThePreviousFileIntact) {
  ParamStore first = model();
  std::string file = path("p.safetensors");
  saveParams(first, file);
  std::ifstream in(file, std::ios::binary);
  std::string before((std::istreambuf_iterator<char>(in)), {});
  fs::create_directory(file + ".tmp"); // the temporary file cannot be created
  ParamStore second = model();
  second.at(0).value.assign(6, 9.0f);
  EXPECT_THROW(saveParams(second, file), SafetensorsError);
  std::ifstream again(file, std::ios::binary);
  std::string after((std::istreambuf_iterator<char>(again)), {});
  EXPECT_EQ(before, after);
}

TEST_F(Safetensors, NonFiniteValuesAreNeitherSavedNorLoaded) {
  std::string file = path("p.safetensors");
  saveParams(model(), file);
  ParamStore diverged = model();
  diverged.at(1).value[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(
      errorOf([&] { saveParams(diverged, file); }),
      file + ": tensor 'cell.b' holds NaN at element 2: not saved, the previous file is unchanged");
  EXPECT_EQ(readSafetensors(file).at("cell.b").values, model().at(1).value);
  // A file written by something else: the bytes of W's element 4 made -inf.
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  float minusInfinity = -std::numeric_limits<float>::infinity();
  size_t dataStart = bytes.size() - (6 + 3) * 4; // W [2, 3] then cell.b [3]
  std::memcpy(bytes.data() + dataStart + 4 * 4, &minusInfinity, 4);
  std::ofstream(file, std::ios::binary) << bytes;
  ParamStore loaded = model();
  EXPECT_EQ(errorOf([&] { loadParams(loaded, file); }),
            file + ": tensor 'W' holds an infinity at element 4 (a diverged training run?)");
}

TEST_F(Safetensors, ShapesWhoseSizeOverflowsAreRejected) {
  std::string header =
      R"({"W":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}})";
  EXPECT_NE(errorOf([&] {
              readSafetensors(writeRaw(header, 0));
            }).find("tensor 'W': shape [4611686018427387904, 4] is too large"),
            std::string::npos);
}

TEST_F(Safetensors, SavingThroughASymlinkReplacesItsTargetAndKeepsTheLink) {
  std::string target = path("real.safetensors"), link = path("link.safetensors");
  saveParams(model(), target);
  fs::create_symlink("real.safetensors", link); // relative, as `ln -s` makes them
  ParamStore second = model();
  second.at(0).value.assign(6, 2.0f);
  saveParams(second, link);
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(readSafetensors(target).at("W").values, std::vector<float>(6, 2.0f));
  EXPECT_FALSE(fs::exists(target + ".tmp"));
  EXPECT_FALSE(fs::exists(link + ".tmp"));
}

TEST_F(Safetensors, SavingToADeviceWritesToItInsteadOfReplacingIt) {
  saveParams(model(), "/dev/null");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_FALSE(fs::exists("/dev/null.tmp"));
}

TEST_F(Safetensors, ATemporaryFileLeftByAKilledSaveIsReplacedAndRemoved) {
  std::string file = path("p.safetensors");
  std::ofstream(file + ".tmp") << "half a checkpoint";
  saveParams(model(), file);
  EXPECT_FALSE(fs::exists(file + ".tmp"));
  EXPECT_EQ(readSafetensors(file).at("W").values, model().at(0).value);
}

TEST_F(Safetensors, UnreadableFile) {
  EXPECT_NE(errorOf([&] { readSafetensors(path("missing")); }).find("cannot open"),
            std::string::npos);
}

} // namespace
} // namespace foldc::rt
