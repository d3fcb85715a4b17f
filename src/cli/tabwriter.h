// Column alignment exactly as Go's text/tabwriter aligns kubectl's output
// (left aligned, space padded, no flags). Text is cut into cells at '\t';
// the text after a line's last tab is not part of a column. A column's width
// is that of its widest cell plus `padding` (at least `min_width`), computed
// over each block of consecutive lines that have a cell in that column.
//
// kubectl get uses {min_width 6, padding 3}; kubectl describe {0, 2}.
// With `remember_widths` (kubectl's watch output: liggitt/tabwriter's
// RememberWidths), a column keeps the widest width it has had across
// flushes, so that rows printed one by one line up with those before.
// Not thread-safe; a value type.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace podflow::cli {

class TabWriter {
 public:
  TabWriter(int min_width, int padding, bool remember_widths = false)
      : min_width_(min_width), padding_(padding), remember_widths_(remember_widths) {}

  // Appends text; lines end at '\n'.
  void Write(std::string_view text);
  // Formats every complete line written so far into the output: the next
  // lines start new column blocks (Go's Flush). A pending partial line is
  // terminated first.
  void Flush();
  // Flushes, then returns everything formatted.
  std::string String();
  // Flushes, then returns what was formatted since the last Take (and
  // forgets it).
  std::string Take();

 private:
  void Format(size_t line0, size_t line1, std::vector<int>& widths);
  void WriteLines(size_t line0, size_t line1, const std::vector<int>& widths);

  const int min_width_;
  const int padding_;
  const bool remember_widths_;
  std::vector<int> max_widths_;  // per column, with remember_widths_
  std::vector<std::vector<std::string>> lines_;  // cells of complete lines
  std::string partial_;                          // the line being written
  std::string out_;
};

// The number of characters (UTF-8 code points) in `s`: a cell's width.
int DisplayWidth(std::string_view s);

}  // namespace podflow::cli
