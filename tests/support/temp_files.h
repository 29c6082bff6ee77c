#pragma once
// Files tests write go to a folder of the test process's own under the
// system temp folder ("etc_tests_<pid>"), removed when the process exits:
// two test runs at once (a sanitizer build's beside the release build's)
// never write each other's files, and nothing is left behind.

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace etc::testing {

inline const std::filesystem::path& test_temp_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() : path(std::filesystem::temp_directory_path() / ("etc_tests_" + std::to_string(::getpid()))) {
      std::filesystem::create_directories(path);
    }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Dir dir;
  return dir.path;
}

// The path of `name` in that folder.
inline std::string test_temp_path(const std::string& name) { return (test_temp_dir() / name).string(); }

}  // namespace etc::testing
