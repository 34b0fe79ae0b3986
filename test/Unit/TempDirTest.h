// A test case with a folder of its own for the files it writes.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace foldc::test {

/// Each case gets a fresh folder, named after the process and the case:
/// ctest runs the cases as separate processes in parallel, so a shared file
/// would be raced for. The folder is removed after the case.
class TempDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("foldc-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string &name) const { return (dir_ / name).string(); }
  /// Writes `text` to the file `name` of the folder; gives its path.
  std::string write(const std::string &name, const std::string &text) const {
    std::string file = path(name);
    std::ofstream(file) << text;
    return file;
  }

  std::filesystem::path dir_;
};

} // namespace foldc::test
