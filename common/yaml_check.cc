#include "common/yaml_check.h"

#include <cstddef>

#include "absl/strings/str_format.h"

namespace ms {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

bool IsForbiddenControl(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return (u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7f;
}

}  // namespace

std::optional<YamlTrap> FindYamlTrap(absl::string_view text) {
  bool at_document_start = true;
  int line_number = 0;
  for (size_t start = 0; start <= text.size(); ++line_number) {
    size_t end = text.find('\n', start);
    if (end == absl::string_view::npos) end = text.size();
    absl::string_view line = text.substr(start, end - start);
    start = end + 1;
    for (size_t i = 0; i < line.size(); ++i) {
      if (IsForbiddenControl(line[i])) {
        return YamlTrap{line_number + 1, static_cast<int>(i + 1),
                        absl::StrFormat("control character 0x%02x is not "
                                        "allowed in YAML",
                                        static_cast<unsigned char>(line[i]))};
      }
    }
    size_t i = 0;
    // A document start marker at column 0 begins a new document; its line
    // may hold the first node.
    if (line.substr(0, 3) == "---" &&
        (line.size() == 3 || IsBlank(line[3]))) {
      at_document_start = true;
      i = 3;
    }
    if (!at_document_start) continue;
    while (i < line.size()) {
      while (i < line.size() && IsBlank(line[i])) ++i;
      if (i == line.size() || line[i] == '#') break;
      if (i == 0 && (line[0] == '%' || line.substr(0, 3) == "...")) break;
      if (line[i] == '!' || line[i] == '&') {
        // A tag or an anchor: up to a blank or a flow indicator.
        while (i < line.size() && !IsBlank(line[i]) && line[i] != ',') ++i;
        continue;
      }
      if (line[i] == ',') {
        return YamlTrap{line_number + 1, static_cast<int>(i + 1),
                        "a ',' cannot start a YAML document"};
      }
      at_document_start = false;
      break;
    }
  }
  return std::nullopt;
}

}  // namespace ms
