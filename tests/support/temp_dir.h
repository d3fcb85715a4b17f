// A fresh directory under $TMPDIR for one test, removed with everything in
// it on exit.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

namespace podflow::testing {

class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "podflow-log") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    char* made = mkdtemp(tmpl.data());
    REQUIRE(made != nullptr);
    path_ = made;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::filesystem::path dir() const { return path_; }

 private:
  std::string path_;
};

}  // namespace podflow::testing
