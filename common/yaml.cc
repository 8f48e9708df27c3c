#include "common/yaml.h"

#include <cstddef>
#include <sstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/exceptions.h"
#include "yaml-cpp/mark.h"
#include "yaml-cpp/parser.h"

namespace ms {
namespace {

YAML::Mark MarkAt(absl::string_view text, size_t pos) {
  YAML::Mark mark;
  mark.pos = static_cast<int>(pos);
  for (size_t i = 0; i < pos; ++i) {
    if (text[i] == '\n') {
      ++mark.line;
      mark.column = 0;
    } else {
      ++mark.column;
    }
  }
  return mark;
}

// YAML 1.2 allows, of the C0 controls, only tab, LF and CR; nor DEL.
void RejectControlCharacters(absl::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
      throw YAML::ParserException(
          MarkAt(text, i),
          absl::StrFormat("control character 0x%02x is not allowed in YAML",
                          c));
    }
  }
}

// Sees only where each document starts.
class DocumentStarts final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { start = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  YAML::Mark start;
};

// Walks the documents of `text` once without building them. A document
// that consumes nothing leaves the parser where it was, so the next one
// starts at the same token, and so on forever: that is the point at which
// YAML::LoadAll would never return. Throws there instead.
void RejectDocumentsThatNeverEnd(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts probe;
  int previous = -1;
  while (parser.HandleNextDocument(probe)) {
    if (probe.start.pos == previous) {
      size_t pos = static_cast<size_t>(previous);
      throw YAML::ParserException(
          probe.start,
          pos < text.size() && absl::ascii_isgraph(text[pos])
              ? absl::StrFormat("unexpected '%c'", text[pos])
              : std::string("unexpected token"));
    }
    previous = probe.start.pos;
  }
}

}  // namespace

std::vector<YAML::Node> LoadAllYaml(absl::string_view text) {
  RejectControlCharacters(text);
  std::string copy(text);
  RejectDocumentsThatNeverEnd(copy);
  return YAML::LoadAll(copy);
}

YAML::Node LoadYaml(absl::string_view text) {
  std::vector<YAML::Node> docs = LoadAllYaml(text);
  return docs.empty() ? YAML::Node() : docs.front();
}

}  // namespace ms
