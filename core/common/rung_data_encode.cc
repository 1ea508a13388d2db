#include "core/common/rung_data_encode.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/common/executable_folder.h"
#include "core/common/file_bytes.h"
#include "core/common/subprocess.h"
#include "core/common/temporary_folder.h"

namespace rung {

Status RunRungDataEncode(const std::vector<std::string>& arguments, const std::string& what) {
  SubprocessOptions encode;
  encode.argv = {(std::filesystem::path(ExecutableFolder()) / "rung-data").string(), "encode"};
  encode.argv.insert(encode.argv.end(), arguments.begin(), arguments.end());
  encode.stdout_to = Redirect::Pipe();
  encode.stderr_to = Redirect::Pipe();
  StatusOr<SubprocessResult> result = Subprocess::Run(encode);
  if (!result.ok()) {
    return Status(result.status().code(), what + ": cannot run " + encode.argv[0] + " (rung-data, which encodes text with a "
                                          "model's tokenizer; `make build` builds it): " + result.status().message());
  }
  if (result->exit.code == 0 && result->exit.signal == 0) return Status::Ok();
  // rung-data's error lines, without its progress lines ("encode: 40% ...").
  std::string message;
  const std::string& text = result->stderr_text;
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    if (!line.empty() && line.rfind("encode: ", 0) != 0) message += (message.empty() ? "" : "\n") + line;
    begin = end + 1;
  }
  const std::string why = what + ": " + message;
  if (result->exit.code == 2) return Status::InvalidArgument(why);
  if (result->exit.code == 4) return Status::DataLoss(why);
  return Status::Internal(why);
}

StatusOr<std::vector<std::vector<int32_t>>> EncodeTextsWithRungData(const std::string& tokenizer,
                                                                    const std::vector<std::string>& texts,
                                                                    bool special_tokens, const std::string& what) {
  std::vector<std::vector<int32_t>> ids(texts.size());
  std::vector<size_t> encoded;  // the texts sent, by index: rung-data has no empty documents
  for (size_t i = 0; i < texts.size(); ++i) {
    if (!texts[i].empty()) encoded.push_back(i);
  }
  if (encoded.empty()) return ids;
  RUNG_ASSIGN_OR_RETURN(TemporaryFolder folder, TemporaryFolder::Make("rung-encode"));
  const std::string input = folder.File("texts.jsonl"), output = folder.File("ids.jsonl");
  {
    std::ofstream out(input, std::ios::binary);
    for (size_t i : encoded) out << nlohmann::json{{"text", texts[i]}}.dump() << '\n';
    if (!out.good()) return Status::Internal(what + ": cannot write " + input);
  }
  std::vector<std::string> arguments = {"--tokenizer", tokenizer, "--input", input, "--text-field", "text",
                                        "--format", "jsonl", "--out", output, "--threads", "1"};
  if (!special_tokens) arguments.push_back("--no-special-tokens");
  RUNG_RETURN_IF_ERROR(RunRungDataEncode(arguments, what));
  std::string lines;
  RUNG_RETURN_IF_ERROR(ReadFileBytes(output, "rung-data encode's output", &lines));
  std::istringstream stream(lines);
  std::string line;
  size_t next = 0;
  while (std::getline(stream, line)) {
    const nlohmann::json parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_array() || next >= encoded.size()) return Status::Internal(what + ": rung-data wrote an unexpected line");
    ids[encoded[next++]] = parsed.get<std::vector<int32_t>>();
  }
  if (next != encoded.size()) {
    return Status::Internal(what + ": rung-data encoded " + std::to_string(next) + " of " +
                            std::to_string(encoded.size()) + " texts");
  }
  return ids;
}

}  // namespace rung
