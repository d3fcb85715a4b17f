#include "cli/tabwriter.h"

#include <utility>

namespace podflow::cli {

int DisplayWidth(std::string_view s) {
  int n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

void TabWriter::Write(std::string_view text) {
  for (char c : text) {
    if (c != '\n') {
      partial_.push_back(c);
      continue;
    }
    std::vector<std::string> cells;
    size_t start = 0;
    for (size_t i = 0; i <= partial_.size(); ++i) {
      if (i == partial_.size() || partial_[i] == '\t') {
        cells.push_back(partial_.substr(start, i - start));
        start = i + 1;
      }
    }
    lines_.push_back(std::move(cells));
    partial_.clear();
  }
}

// Go's tabwriter.format: the lines [line0, line1) that have a cell in column
// widths.size() form blocks; each block fixes that column's width and is
// formatted recursively for the columns to its right.
void TabWriter::Format(size_t line0, size_t line1, std::vector<int>& widths) {
  const size_t column = widths.size();
  for (size_t self = line0; self < line1; ++self) {
    if (column + 1 >= lines_[self].size()) continue;
    WriteLines(line0, self, widths);
    line0 = self;
    int width = min_width_;
    for (; self < line1; ++self) {
      if (column + 1 >= lines_[self].size()) break;
      width = std::max(width, DisplayWidth(lines_[self][column]) + padding_);
    }
    if (remember_widths_) {
      if (max_widths_.size() <= column) max_widths_.resize(column + 1, 0);
      width = std::max(width, max_widths_[column]);
      max_widths_[column] = width;
    }
    widths.push_back(width);
    Format(line0, self, widths);
    widths.pop_back();
    line0 = self;
    if (self == line1) break;
  }
  WriteLines(line0, line1, widths);
}

void TabWriter::WriteLines(size_t line0, size_t line1, const std::vector<int>& widths) {
  for (size_t i = line0; i < line1; ++i) {
    const std::vector<std::string>& cells = lines_[i];
    for (size_t j = 0; j < cells.size(); ++j) {
      out_ += cells[j];
      if (j < widths.size()) out_.append(widths[j] - DisplayWidth(cells[j]), ' ');
    }
    out_.push_back('\n');
  }
}

void TabWriter::Flush() {
  if (!partial_.empty()) Write("\n");
  std::vector<int> widths;
  Format(0, lines_.size(), widths);
  lines_.clear();
}

std::string TabWriter::String() {
  Flush();
  return out_;
}

std::string TabWriter::Take() {
  Flush();
  return std::exchange(out_, std::string());
}

}  // namespace podflow::cli
