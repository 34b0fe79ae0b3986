// Pretrained vectors: mapping onto the vocabulary, and every malformed file.
#include "runtime/io/Vectors.h"

#include "TempDirTest.h"
#include "runtime/io/Jsonl.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace foldc::rt {
namespace {

class Vectors : public test::TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    store_.add("words.E", {4, 2}, {InitKind::Constant, 9}, /*sparseRows=*/true);
    store_.initialize(0);
    write("vocab.txt", "the\ncat\nsat\nmat\n");
  }
  Param &table() { return store_.at(0); }

  /// The DataError message of loading `vectors` with `vocab` ("" if none),
  /// checking that the table is untouched when there is one.
  std::string errorOf(const std::string &vectors, const std::string &vocab = "vocab.txt") {
    std::vector<float> before = table().value;
    try {
      loadVectors(table(), path(vectors), path(vocab));
    } catch (const DataError &e) {
      EXPECT_EQ(table().value, before) << "nothing is half-loaded";
      return e.what();
    }
    return "";
  }

  ParamStore store_;
};

TEST_F(Vectors, RowsOfFoundWordsAreSetTheOthersKept) {
  write("v.txt", "cat 1 2\ndog 3 4\nmat -0.5 1e-3\r\n");
  VectorsReport report = loadVectors(table(), path("v.txt"), path("vocab.txt"));
  EXPECT_EQ(report.vocabulary, 4u);
  EXPECT_EQ(report.found, 2u);
  EXPECT_EQ(table().value, (std::vector<float>{9, 9, 1, 2, 9, 9, -0.5f, 1e-3f}));
}

TEST_F(Vectors, Word2vecHeaderIsSkippedAndWordsMayHoldSpaces) {
  write("v.txt", "3 2\nthe 1 1\nat home 5 6\nsat 2 2\n");
  write("vocab2.txt", "the\nat home\nsat\n");
  VectorsReport report = loadVectors(table(), path("v.txt"), path("vocab2.txt"));
  EXPECT_EQ(report.found, 3u);
  EXPECT_EQ(table().value, (std::vector<float>{1, 1, 5, 6, 2, 2, 9, 9}));
}

TEST_F(Vectors, MalformedFilesAreLocatedErrors) {
  write("short.txt", "the 1 2\ncat 1\n");
  EXPECT_EQ(errorOf("short.txt"), path("short.txt") +
                                      ":2: expected a word and 2 numbers (the width of 'words.E'), "
                                      "found 'cat' and 1 number");
  write("wide.txt", "the 1 2 3\ncat 1 2 3\n");
  EXPECT_EQ(errorOf("wide.txt"), path("wide.txt") +
                                     ":1: expected a word and 2 numbers (the width of 'words.E'), "
                                     "found 'the' and 3 numbers");
  write("header.txt", "2 3\nthe 1 2 3\n");
  EXPECT_EQ(errorOf("header.txt"), path("header.txt") + ":1: word2vec header: vectors of 3 "
                                                        "numbers, but 'words.E' rows have 2");
  write("nan.txt", "the 1 2\ncat 1 x2\n");
  EXPECT_EQ(errorOf("nan.txt"), path("nan.txt") + ":2: number 2 of 'cat': expected a finite "
                                                  "number, found 'x2'");
  write("inf.txt", "the 1 inf\n");
  EXPECT_NE(errorOf("inf.txt").find(":1: number 2 of 'the'"), std::string::npos);
  write("big.txt", "the 1 1e99\n");
  EXPECT_NE(errorOf("big.txt").find(":1: number 2 of 'the': expected a finite number, found "
                                    "'1e99'"),
            std::string::npos);
  write("twice.txt", "cat 1 2\nthe 1 1\ncat 3 4\n");
  EXPECT_EQ(errorOf("twice.txt"), path("twice.txt") + ":3: the word 'cat' is also on line 1");
}

TEST_F(Vectors, MalformedVocabulariesAreLocatedErrors) {
  write("v.txt", "cat 1 2\n");
  write("twice.txt", "the\ncat\nthe\n");
  EXPECT_EQ(errorOf("v.txt", "twice.txt"),
            path("twice.txt") + ":3: the word 'the' is also on line 1");
  write("long.txt", "a\nb\nc\nd\ne\n");
  EXPECT_EQ(errorOf("v.txt", "long.txt"),
            path("long.txt") + ":5: word id 4 is beyond the 4 rows of 'words.E'");
  write("empty.txt", "a\n\nc\n");
  EXPECT_NE(errorOf("v.txt", "empty.txt").find(":2: an empty word"), std::string::npos);
  EXPECT_EQ(errorOf("v.txt", "missing.txt"), path("missing.txt") + ": cannot open for reading");
}

} // namespace
} // namespace foldc::rt
