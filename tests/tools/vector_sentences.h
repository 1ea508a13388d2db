// tests/tools/vector_sentences.h
//
// VectorSentences: a vector of lines as SentencePiece's trainer reads sentences, for tests that train a
// model with SentencePiece itself (independently of rung-data's own line iterator). The vector must
// outlive it.
#pragma once

#include <string>
#include <vector>

#include <sentencepiece_trainer.h>

namespace rung::data_tool {

class VectorSentences : public sentencepiece::SentenceIterator {
 public:
  explicit VectorSentences(const std::vector<std::string>& lines) : lines_(lines) {}
  bool done() const override { return at_ >= lines_.size(); }
  void Next() override { ++at_; }
  const std::string& value() const override { return lines_[at_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>& lines_;
  size_t at_ = 0;
};

}  // namespace rung::data_tool
