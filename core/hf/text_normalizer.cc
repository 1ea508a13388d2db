#include "core/hf/text_normalizer.h"

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>

namespace rung::hf {
namespace {

Status Normalize(const void* normalizer, const std::string& text, std::string* out) {
  const auto* icu_normalizer = static_cast<const icu::Normalizer2*>(normalizer);
  UErrorCode error = U_ZERO_ERROR;
  if (icu_normalizer->isNormalizedUTF8(text, error) && U_SUCCESS(error)) {
    *out = text;
    return Status::Ok();
  }
  error = U_ZERO_ERROR;
  out->clear();
  icu::StringByteSink<std::string> sink(out, static_cast<int32_t>(text.size()));
  icu_normalizer->normalizeUTF8(0, text, sink, nullptr, error);
  if (U_FAILURE(error)) return Status::Internal(std::string("Unicode normalization failed: ") + u_errorName(error));
  return Status::Ok();
}

}  // namespace

StatusOr<TextNormalizer> TextNormalizer::Create(std::vector<NormalizerStep> steps) {
  TextNormalizer normalizer(std::move(steps));
  UErrorCode error = U_ZERO_ERROR;
  normalizer.nfc_ = icu::Normalizer2::getNFCInstance(error);
  if (U_SUCCESS(error)) normalizer.nfkc_ = icu::Normalizer2::getNFKCInstance(error);
  if (U_FAILURE(error)) return Status::Internal(std::string("ICU has no NFC/NFKC normalizer: ") + u_errorName(error));
  return normalizer;
}

Status TextNormalizer::Apply(std::string_view text, std::string* out, bool continues) const {
  out->assign(text);
  std::string next;
  for (const NormalizerStep& step : steps_) {
    switch (step.kind) {
      case NormalizerStep::Kind::kNfc:
      case NormalizerStep::Kind::kNfkc:
        RUNG_RETURN_IF_ERROR(Normalize(step.kind == NormalizerStep::Kind::kNfc ? nfc_ : nfkc_, *out, &next));
        out->swap(next);
        break;
      case NormalizerStep::Kind::kPrepend:
        if (!out->empty() && !continues) out->insert(0, step.prepend);
        break;
      case NormalizerStep::Kind::kReplace: {
        if (step.pattern.empty() || out->find(step.pattern) == std::string::npos) break;
        next.clear();
        size_t at = 0;
        for (size_t found = out->find(step.pattern); found != std::string::npos; found = out->find(step.pattern, at)) {
          next.append(*out, at, found - at);
          next.append(step.content);
          at = found + step.pattern.size();
        }
        next.append(*out, at, std::string::npos);
        out->swap(next);
        break;
      }
    }
  }
  return Status::Ok();
}

}  // namespace rung::hf
