#pragma once
// torchinfo's tables compared with recorder's (peers_test.cpp, tests/zoo/zoo_test.cpp): recorder
// follows torchinfo's current source (third_party/torchinfo, run live beside PyPI's 1.8.0 by
// peers.py), and differs from 1.8.0 where the source does (peers_test.cpp's file comment says
// why), and nothing else.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tables {

inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// A torchinfo table in its three parts.
struct Table {
  std::vector<std::string> rows;    ///< from the top rule to the rule above "Total params"
  std::vector<std::string> params;  ///< "Total params: ...", trainable, non-trainable
  /// The footer's numbers in plain units (mult-adds, bytes), each with half its printed step:
  /// "Total mult-adds (M): 0.17" is 170,000 +- 5,000.
  std::map<std::string, std::pair<double, double>> footer;
};

/// The multiplier of a printed unit: "k", "MB", "Units.MEGABYTES" (torchinfo 1.8.0 on Python
/// 3.11 and later), "" (none).
inline double unit(const std::string& u) {
  if (u.empty()) return 1;
  const std::string name = u.rfind("Units.", 0) == 0 ? u.substr(6) : u;
  if (name == "k" || name == "kB" || name == "KILOBYTES") return 1e3;
  if (name == "M" || name == "MB" || name == "MEGABYTES") return 1e6;
  if (name == "G" || name == "GB" || name == "GIGABYTES") return 1e9;
  if (name == "T" || name == "TB" || name == "TERABYTES") return 1e12;
  BOOST_FAIL("unknown unit '" << u << "'");
  return 0;
}

inline Table parse(const std::string& text) {
  Table t;
  const std::vector<std::string> all = lines(text);
  std::size_t i = 0;
  for (; i < all.size() && all[i].rfind("Total params:", 0) != 0; ++i) t.rows.push_back(all[i]);
  for (; i < all.size() && all[i].find("params:") != std::string::npos; ++i)
    t.params.push_back(all[i]);
  for (; i < all.size(); ++i) {
    const std::string& l = all[i];
    const auto colon = l.rfind(": ");
    if (colon == std::string::npos || l.front() == '=') continue;
    std::string key = l.substr(0, colon), u;
    if (const auto open = key.find(" ("); open != std::string::npos) {
      u = key.substr(open + 2, key.size() - open - 3);
      key = key.substr(0, open);
    }
    std::string number = l.substr(colon + 2);
    std::erase(number, ',');
    const auto dot = number.find('.');
    const double step =
        dot == std::string::npos ? 1 : std::pow(10.0, -double(number.size() - dot - 1));
    t.footer[key] = {std::stod(number) * unit(u), step / 2 * unit(u)};
  }
  return t;
}

/// "1,026,000" -> 1026000.
inline std::uint64_t count(std::string cell) {
  std::erase(cell, ',');
  while (!cell.empty() && cell.back() == ' ') cell.pop_back();
  return cell.empty() || cell == "--" ? 0 : std::stoull(cell);
}

/// "Total params: 1,234" -> 1234.
inline std::uint64_t total_of(const std::string& line) {
  return count(line.substr(line.rfind(": ") + 2));
}

/// The byte offset in `row` of display column `column` (code points: the tree's box-drawing
/// characters take 3 bytes each, one column).
inline std::size_t byte_of(const std::string& row, std::size_t column) {
  std::size_t at = 0;
  for (std::size_t seen = 0; at < row.size(); ++at) {
    if ((static_cast<unsigned char>(row[at]) & 0xC0u) == 0x80u) continue;  // a continuation byte
    if (seen++ == column) return at;
  }
  return row.size();
}

/// How a model's tables may differ from torchinfo 1.8.0's beyond the Linear rows' mult-adds.
struct Allowed {
  /// Parameters held by two modules at once: torchinfo 1.8.0 counts them once per module in
  /// its totals, recorder once, as `sum(p.numel() for p in model.parameters())` does.
  int shared = 0;
  /// Classes of the modules the model calls with keyword arguments only, in a `.pt2` program:
  /// torchinfo's forward hooks see no arguments and print `--` as their input shape, recorder
  /// the tensors passed (a program keeps no call sites; a TorchScript file's `--` is torchinfo's).
  std::vector<std::string> keyword_called{};

  /// True when `row` is one of a module of a class of `keyword_called` (labelled with its name).
  bool keyword_row(const std::string& row) const {
    for (const std::string& c : keyword_called)
      if (row.find(c + " (") != std::string::npos) return true;
    return false;
  }
  /// torchinfo's source's hooks turn off `nn.TransformerEncoderLayer`'s fast path under PyTorch
  /// 1.13 (1.8.0's do not): its table shows the layer's submodules, where 1.8.0 and recorder (a
  /// scripted file takes the fast path) show the layer. Then only the parameter totals and
  /// `Params size` are compared with the source's; the rows are 1.8.0's.
  bool source_unfolds_encoder_layers = false;
  /// The file was saved, and answered, by a PyTorch of the other major version than the libtorch
  /// under test (the zoo's torchvision models, saved by Debian's 1.13, traced by libtorch 2.x):
  /// torchinfo's `Input size` counts the storage header of its PyTorch (56 bytes under 1.x, 64
  /// from 2.0), recorder the one of the libtorch in use, so each input's size is 8 bytes apart.
  bool other_pytorch = false;
};

/// peers.py's answer to a summary request split in two: PyPI's torchinfo 1.8.0's table, and the
/// current source's (empty when the answer has none, which `compare_tables` refuses).
inline std::pair<std::string, std::string> split_answer(const std::string& text) {
  const std::string mark = "--- torchinfo's current source (third_party/torchinfo)\n";
  const auto at = text.find(mark);
  if (at == std::string::npos) return {text, {}};
  return {text.substr(0, at), text.substr(at + mark.size())};
}

/// The lines of `text`'s footer from "Input size" on, without its rules.
inline std::vector<std::string> footer_lines(const std::string& text) {
  std::vector<std::string> out;
  bool after = false;
  for (const std::string& l : lines(text)) {
    if (l.rfind("Input size", 0) == 0) after = true;
    if (after && l.front() != '=') out.push_back(l);
  }
  return out;
}

/// The slack of a footer size between recorder's table and torchinfo's run under `allowed`'s
/// other PyTorch: 8 bytes for each of up to 4 inputs.
inline double header_slack(const tables::Allowed& allowed) {
  return allowed.other_pytorch ? 8.0 * 4 : 0.0;
}

/// Checks table `a` (recorder's) against torchinfo's current source's, `source`: every row, the
/// parameter totals and the footer byte for byte, but the input shape of a row of class
/// a class of `allowed.keyword_called` (see `compare_tables`) and, for `allowed.other_pytorch`, the input's
/// size (and so the total size): within 8 bytes for each of up to 4 inputs and what both print.
inline void compare_with_source(const std::string& model, const std::string& what,
                                const std::string& a_text, const std::string& source,
                                const Allowed& allowed) {
  const bool unfolds = allowed.source_unfolds_encoder_layers;
  const Table a = parse(a_text), b = parse(source);
  BOOST_TEST_CONTEXT(model << " (" << what << ", torchinfo's source)") {
    if (unfolds) {
      BOOST_TEST(a.params == b.params, boost::test_tools::per_element());
      const auto params_size = [](const std::string& text) {
        for (const std::string& l : footer_lines(text))
          if (l.rfind("Params size", 0) == 0) return l;
        return std::string();
      };
      BOOST_TEST(params_size(a_text) == params_size(source));
      return;
    }
    BOOST_TEST_REQUIRE(a.rows.size() == b.rows.size(), "recorder:\n"
                                                           << a_text << "torchinfo's source:\n"
                                                           << source);
    for (std::size_t i = 0; i < a.rows.size(); ++i) {
      if (allowed.keyword_row(a.rows[i]) && b.rows[i].find("--") != std::string::npos)
        continue;  // checked against 1.8.0's, which prints the same `--`
      BOOST_TEST(a.rows[i] == b.rows[i]);
    }
    BOOST_TEST(a.params == b.params, boost::test_tools::per_element());
    const std::vector<std::string> fa = footer_lines(a_text), fb = footer_lines(source);
    BOOST_TEST_REQUIRE(fa.size() == fb.size());
    for (std::size_t i = 0; i < fa.size(); ++i) {
      if (fa[i] == fb[i]) continue;
      const bool sized = fa[i].rfind("Input size", 0) == 0 || fa[i].rfind("Estimated", 0) == 0;
      BOOST_TEST((sized && allowed.other_pytorch), fa[i] << " | " << fb[i]);
      std::string key = fa[i].substr(0, fa[i].rfind(": "));
      key = key.substr(0, key.find(" ("));
      const auto x = a.footer.at(key), y = b.footer.at(key);
      BOOST_TEST(std::abs(x.first - y.first) <= x.second + y.second + header_slack(allowed),
                 fa[i] << " | " << fb[i]);
    }
  }
}

/// Checks table `a` (recorder's) against `b` (torchinfo 1.8.0's): rows byte for byte, except the
/// Mult-Adds cell of a Linear row, which must be torchinfo's times the output's rows per element
/// of its first dimension, and the input shape of a row of a class of `allowed.keyword_called`, which
/// torchinfo prints as `--`; the parameter totals byte for byte (but `allowed.shared`
/// parameters, which torchinfo counts twice); the footer's numbers within what both print, the
/// mult-adds total apart by the Linear rows' difference: the rows' own when the table has a
/// Mult-Adds column, else `linear_difference`. Returns the rows' difference.
///
/// `answer` (peers.py's) holds the current source's table too: `a` is checked against it
/// (`compare_with_source`), and a row of `a` equal to the source's where 1.8.0's differs is the
/// source's rule (a tied module's `(recursive)`); the parameter and total sizes are then the
/// source's only (1.8.0 counts the leaf rows' parameters, 4 bytes each).
inline double compare_tables(const std::string& model, const Allowed& allowed,
                             const std::string& what, const std::string& a_text,
                             const std::string& answer, double linear_difference = 0) {
  const auto [b_text, source_text] = split_answer(answer);
  BOOST_TEST_REQUIRE(!source_text.empty(),
                     model << " (" << what << "): peers.py gave no table of torchinfo's source");
  compare_with_source(model, what, a_text, source_text, allowed);
  const Table a = parse(a_text), b = parse(b_text);
  const Table source = parse(allowed.source_unfolds_encoder_layers ? std::string() : source_text);
  BOOST_TEST_CONTEXT(model << " (" << what << ")") {
    BOOST_TEST_REQUIRE(a.rows.size() == b.rows.size(), "recorder:\n"
                                                           << a_text << "torchinfo:\n"
                                                           << b_text);
    const auto mult_adds = a.rows.size() > 1 ? a.rows[1].find("Mult-Adds") : std::string::npos;
    const auto input_shape = a.rows.size() > 1 ? a.rows[1].find("Input Shape") : std::string::npos;
    if (mult_adds != std::string::npos) linear_difference = 0;
    for (std::size_t i = 0; i < a.rows.size(); ++i) {
      if (a.rows[i] == b.rows[i]) continue;
      // The header is ASCII: its byte offsets are display columns.
      const auto at = [&](const std::string& row, std::size_t column) {
        return column == std::string::npos ? std::string::npos : byte_of(row, column);
      };
      if (i < source.rows.size() && a.rows[i] == source.rows[i]) {
        // The source's rule where 1.8.0's differs (a tied module's `(recursive)`, a Linear's
        // mult-adds): the mult-adds total differs by the rows' difference.
        if (mult_adds != std::string::npos)
          linear_difference += double(count(a.rows[i].substr(at(a.rows[i], mult_adds)))) -
                               double(count(b.rows[i].substr(at(b.rows[i], mult_adds))));
        continue;
      }
      if (input_shape != std::string::npos && allowed.keyword_row(a.rows[i]) &&
          b.rows[i].compare(at(b.rows[i], input_shape), 3, "-- ") == 0) {
        // torchinfo saw no arguments: the row is equal from the output shape on.
        const auto output_shape = a.rows[1].find("Output Shape");
        const auto in_a = at(a.rows[i], input_shape), in_b = at(b.rows[i], input_shape);
        BOOST_TEST(a.rows[i].substr(0, in_a) == b.rows[i].substr(0, in_b));
        BOOST_TEST(a.rows[i].compare(in_a, 1, "[") == 0, a.rows[i]);
        BOOST_TEST(a.rows[i].substr(at(a.rows[i], output_shape)) ==
                   b.rows[i].substr(at(b.rows[i], output_shape)));
        continue;
      }
      // Only a Linear's Mult-Adds cell may differ, by its output's rows per first dimension.
      BOOST_TEST_REQUIRE(mult_adds != std::string::npos, a.rows[i] << "\n" << b.rows[i]);
      BOOST_TEST(a.rows[i].find("Linear") != std::string::npos, a.rows[i]);
      const auto ma = at(a.rows[i], mult_adds), mb = at(b.rows[i], mult_adds);
      BOOST_TEST(a.rows[i].substr(0, ma) == b.rows[i].substr(0, mb));
      const std::uint64_t ours_cell = count(a.rows[i].substr(ma));
      const std::uint64_t theirs_cell = count(b.rows[i].substr(mb));
      // The output shape is the last "[...]" before the parameter count.
      const std::string head = a.rows[i].substr(0, ma);
      const auto close = head.rfind(']'), open = head.rfind('[', close);
      std::vector<std::uint64_t> shape;
      std::istringstream dims(head.substr(open + 1, close - open - 1));
      for (std::string d; std::getline(dims, d, ',');) shape.push_back(std::stoull(d));
      std::uint64_t rows_per_first = 1;
      for (std::size_t d = 1; d + 1 < shape.size(); ++d) rows_per_first *= shape[d];
      BOOST_TEST(ours_cell == theirs_cell * rows_per_first, a.rows[i] << "\n" << b.rows[i]);
      linear_difference += double(ours_cell) - double(theirs_cell);
    }
    if (allowed.shared == 0) {
      BOOST_TEST(a.params == b.params, boost::test_tools::per_element());
    } else {
      BOOST_TEST_REQUIRE(a.params.size() == b.params.size());
      for (std::size_t i = 0; i + 1 < a.params.size(); ++i)  // total and trainable
        BOOST_TEST(total_of(b.params[i]) == total_of(a.params[i]) + std::uint64_t(allowed.shared));
      BOOST_TEST(a.params.back() == b.params.back());  // non-trainable
    }
    BOOST_TEST(a.footer.size() == b.footer.size());
    for (const auto& [key, value] : a.footer) {
      BOOST_TEST_REQUIRE(b.footer.count(key) == 1u, key);
      if (key == "Params size" || key == "Estimated Total Size") continue;  // the source's, above
      const auto other = b.footer.find(key);
      const auto [x, x_step] = value;
      const auto [y, y_step] = other->second;
      // The Linear rows' difference is in the mult-adds total too.
      const double expected = key == "Total mult-adds" ? y + linear_difference : y;
      // The shared parameters' bytes, counted twice in torchinfo's params and total sizes.
      const double shared_bytes = 4.0 * allowed.shared;
      const double slack =
          key.find("ize") != std::string::npos ? shared_bytes + header_slack(allowed) : 0;
      BOOST_TEST(std::abs(x - expected) <= x_step + y_step + slack,
                 key << ": recorder " << x << ", torchinfo " << y);
    }
  }
  return linear_difference;
}

/// "wrote <file>: N nodes, M edges" (recorder draw) or "N nodes, M edges" (peers.py): {N, M}.
inline std::pair<int, int> counts(const std::string& out) {
  std::istringstream in(out.substr(out.rfind(": ") == std::string::npos ? 0 : out.rfind(": ") + 2));
  int nodes = 0, edges = 0;
  std::string word;
  in >> nodes >> word >> edges;
  return {nodes, edges};
}

}  // namespace tables
