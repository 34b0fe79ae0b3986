// JSONL helpers: values read, and errors as FILE:LINE: path: expected.
#include "runtime/io/Jsonl.h"

#include "TempDirTest.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace foldc::rt {
namespace {

struct Leaf {
  int64_t word, label;
};

/// A reader like the generated ones: {"words": [{"word": 1, "label": 2}, ...]}.
std::vector<std::vector<Leaf>> readFile(const std::string &file) {
  std::vector<std::vector<Leaf>> out;
  forEachJsonLine(file, [&](const nlohmann::json &v, const JsonPath &at) {
    const auto &rec = readRecord(v, at, {"words"});
    const auto &words = readArray(rec["words"], at.field("words"));
    std::vector<Leaf> leaves;
    for (size_t i = 0; i < words.size(); ++i) {
      JsonPath w = at.field("words").index(i);
      const auto &leaf = readRecord(words[i], w, {"word", "label"});
      leaves.push_back(
          {readInt(leaf["word"], w.field("word")), readInt(leaf["label"], w.field("label"))});
    }
    out.push_back(leaves);
  });
  return out;
}

class Jsonl : public test::TempDirTest {
protected:
  std::string file(const std::string &name) const { return path(name); }

  std::string errorFor(const std::string &contents) const {
    std::string path = file("foldc-jsonl-test.jsonl");
    std::ofstream(path) << contents;
    try {
      readFile(path);
    } catch (const DataError &e) {
      std::string message = e.what();
      return message.substr(message.find("foldc-jsonl-test.jsonl"));
    }
    return "";
  }
};

TEST_F(Jsonl, ReadsValidLinesAndSkipsBlankOnes) {
  std::string path = file("foldc-jsonl-ok.jsonl");
  std::ofstream(path) << "{\"words\": [{\"word\": 3, \"label\": 1}]}\n\n{\"words\": []}\n";
  auto examples = readFile(path);
  ASSERT_EQ(examples.size(), 2u);
  EXPECT_EQ(examples[0][0].word, 3);
  EXPECT_TRUE(examples[1].empty());
}

TEST_F(Jsonl, InvalidJson) {
  EXPECT_EQ(errorFor("{\"words\": []}\n{\"words\": [\n"),
            "foldc-jsonl-test.jsonl:2: example: invalid JSON at column 12: syntax error while "
            "parsing value - unexpected end of input; expected '[', '{', or a literal");
}

TEST_F(Jsonl, NumberOutOfRangeNamesItsField) {
  EXPECT_EQ(errorFor("{\"words\": [{\"word\": 3, \"label\": 1}, {\"word\": 4, \"label\": "
                     "-1e999}]}\n"),
            "foldc-jsonl-test.jsonl:1: words[1].label: number out of range: -1e999 does not fit "
            "in a 64-bit float");
}

TEST_F(Jsonl, SyntaxErrorNamesItsColumn) {
  EXPECT_EQ(errorFor("{\"words\": [{\"word\": tru}]}\n"),
            "foldc-jsonl-test.jsonl:1: example: invalid JSON at column 24: syntax error while "
            "parsing value - invalid literal; last read: '\"word\": tru}'");
}

TEST_F(Jsonl, BytesThatAreNotTextAreQuotedAsHex) {
  EXPECT_EQ(errorFor("{\"wo\x9e\": 1}\n"),
            "foldc-jsonl-test.jsonl:1: example: invalid JSON at column 5: syntax error while "
            "parsing object key - invalid string: ill-formed UTF-8 byte; last read: "
            "'\"wo\\x9e'; expected string literal");
}

TEST_F(Jsonl, MissingField) {
  EXPECT_EQ(errorFor("{\"words\": [{\"word\": 3}]}\n"),
            "foldc-jsonl-test.jsonl:1: words[0].label: missing field");
}

TEST_F(Jsonl, UnknownField) {
  EXPECT_EQ(errorFor("{\"words\": [], \"extra\": 1}\n"),
            "foldc-jsonl-test.jsonl:1: extra: unknown field");
}

TEST_F(Jsonl, WrongTypeDeepInside) {
  EXPECT_EQ(errorFor("{\"words\": []}\n{\"words\": [{\"word\": 1, \"label\": 0}, {\"word\": \"x\", "
                     "\"label\": 0}]}\n"),
            "foldc-jsonl-test.jsonl:2: words[1].word: expected an integer, found \"x\"");
}

TEST_F(Jsonl, IntegersBeyond64BitsAreErrorsNotWrapped) {
  EXPECT_EQ(errorFor("{\"words\": [{\"word\": 18446744073709551615, \"label\": 0}]}\n"),
            "foldc-jsonl-test.jsonl:1: words[0].word: expected an integer that fits in 64 bits, "
            "found 18446744073709551615");
}

TEST_F(Jsonl, FloatsBeyondF32RangeAreErrorsNotInfinities) {
  std::string source = "f";
  JsonPath at(source, 3);
  EXPECT_FLOAT_EQ(float(readFloat(nlohmann::json(3.4e38), at)), 3.4e38f);
  try {
    readFloat(nlohmann::json(-1e39), at);
    FAIL() << "-1e39 was read";
  } catch (const DataError &e) {
    EXPECT_STREQ(e.what(), "f:3: example: expected a number within the range of f32 "
                           "(magnitude at most 3.4e38), found -1e+39");
  }
}

TEST_F(Jsonl, ANulByteIsAnErrorNotTheEndOfTheLine) {
  EXPECT_EQ(errorFor(std::string("{\"words\": []}\n{\"words\": []}\0{\"x\": 1}\n", 37)),
            "foldc-jsonl-test.jsonl:2: example: a NUL byte at column 14 (not a text line)");
}

TEST_F(Jsonl, Variants) {
  std::string source = "f";
  JsonPath at(source, 1);
  const nlohmann::json *payload = nullptr;
  nlohmann::json leaf = nlohmann::json::parse(R"({"Leaf": {"word": 1}})");
  EXPECT_EQ(readVariant(leaf, at, payload), "Leaf");
  EXPECT_EQ((*payload)["word"], 1);
  EXPECT_EQ(readVariant(nlohmann::json("Nil"), at, payload), "Nil");
  EXPECT_THROW(readVariant(nlohmann::json::parse(R"({"A": 1, "B": 2})"), at, payload), DataError);
  EXPECT_DOUBLE_EQ(readFloat(nlohmann::json(2), at), 2.0);
  EXPECT_THROW(readBool(nlohmann::json(1), at), DataError);
  EXPECT_EQ(readString(nlohmann::json("s"), at), "s");
}

} // namespace
} // namespace foldc::rt
