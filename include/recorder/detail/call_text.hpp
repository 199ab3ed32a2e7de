#pragma once
/// Reading a call in a model's Python source (`self.attn(query=x, key=x, value=x)`), torch-free:
/// TorchScript keeps each node's source text, and a call that passes no argument by position is
/// one torchinfo's forward hooks see without arguments (their `inputs` are positional only).

#include <cstddef>
#include <string_view>

namespace recorder::detail {

/// True when `argument` (one argument of a call, trimmed) is passed by keyword: `key=x`,
/// `**kwargs`; not `x`, `x == y`, `*args`.
inline bool is_keyword_argument(std::string_view argument) {
  if (argument.starts_with("**")) return true;
  std::size_t i = 0;
  const auto name_char = [](char c, bool first) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (!first && c >= '0' && c <= '9');
  };
  while (i < argument.size() && name_char(argument[i], i == 0)) ++i;
  if (i == 0) return false;
  while (i < argument.size() && (argument[i] == ' ' || argument[i] == '\t' || argument[i] == '\n'))
    ++i;
  return i + 1 < argument.size() && argument[i] == '=' && argument[i + 1] != '=';
}

/// True when `arguments`, the source text right after a call's callee (`self.block` in
/// `self.block(x=x, mask=m)`: TorchScript's range of a call covers the callee only), opens an
/// argument list that passes no argument by position: `(x=x, mask=m)`, `(\n    x=h)`, `()`.
/// False when it does not start with a balanced argument list: then nothing is known.
inline bool passes_no_positional_argument(std::string_view arguments) {
  const auto open = arguments.find_first_not_of(" \t\r\n");
  if (open == std::string_view::npos || arguments[open] != '(') return false;
  // Split at the commas outside brackets and strings, up to the list's closing parenthesis.
  std::size_t start = open + 1;
  int depth = 0;
  char quote = 0;
  for (std::size_t i = open + 1; i < arguments.size(); ++i) {
    const char c = arguments[i];
    if (quote != 0) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if ((c == ',' && depth == 0) || c == ')' || c == ']' || c == '}') {
      if (c != ',' && c != ')') return false;  // unbalanced
      std::string_view a = arguments.substr(start, i - start);
      const auto first = a.find_first_not_of(" \t\r\n");
      if (first != std::string_view::npos) {
        a.remove_prefix(first);
        if (!is_keyword_argument(a)) return false;
      }
      if (c == ')') return true;
      start = i + 1;
    }
  }
  return false;  // the list never closes
}

}  // namespace recorder::detail
