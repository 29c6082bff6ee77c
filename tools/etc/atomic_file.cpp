#include "tools/etc/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "tools/etc/tool_error.h"

namespace etc::cli {
namespace {

namespace fs = std::filesystem;

// The one named temporary file that may exist at a time (only while it is
// written, or between linking and renaming it), so that SIGINT or SIGTERM
// can remove it: the handler may only use async-signal-safe calls, so the
// path sits in a fixed buffer.
char g_pending[4096];
std::atomic<bool> g_has_pending{false};

extern "C" void remove_pending_and_die(int sig) {
  if (g_has_pending.load()) ::unlink(g_pending);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_handlers_once() {
  static const bool installed = [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction action {};
      action.sa_handler = remove_pending_and_die;
      sigemptyset(&action.sa_mask);
      ::sigaction(sig, &action, nullptr);
    }
    return true;
  }();
  (void)installed;
}

void set_pending(const std::string& path) {
  if (path.size() >= sizeof(g_pending)) return;  // too long to track; the file is still removed on error
  std::memcpy(g_pending, path.c_str(), path.size() + 1);
  g_has_pending.store(true);
}

void clear_pending() { g_has_pending.store(false); }

void write_all(int fd, std::span<const uint8_t> bytes, const std::string& path) {
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      throw ToolError(path + ": write failed: " + std::strerror(n == 0 ? EIO : err));
    }
    written += static_cast<size_t>(n);
  }
}

std::string random_suffix() {
  static std::mt19937_64 rng{std::random_device{}()};
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

// Gives the unnamed file `fd` (O_TMPFILE) a temporary name beside `target`.
// Returns the name, or an empty string when the filesystem cannot.
std::string link_unnamed(int fd, const fs::path& dir, const fs::path& target) {
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::string name = (dir / ("." + target.filename().string() + "." + random_suffix())).string();
    set_pending(name);
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return name;
    clear_pending();
    if (errno != EEXIST) return {};
  }
  return {};
}

}  // namespace

void write_file_atomically(const std::string& path, const std::vector<uint8_t>& bytes) {
  const std::span<const uint8_t> whole(bytes.data(), bytes.size());
  write_file_atomically(path, std::span<const std::span<const uint8_t>>(&whole, 1));
}

void write_file_atomically(const std::string& path, std::span<const std::span<const uint8_t>> pieces) {
  const fs::path target(path);
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw ToolError(path + ": output folder '" + dir.string() + "' does not exist");
  install_handlers_once();
  std::string temp;
  // Preferred: an unnamed file (O_TMPFILE), so nothing is left behind even
  // if the process is killed while writing; it gets a name only to be
  // renamed over the target at once.
  int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  if (fd >= 0) {
    for (const auto& piece : pieces) write_all(fd, piece, path);
    temp = link_unnamed(fd, dir, target);
    if (temp.empty()) {
      ::close(fd);
      fd = -1;
    }
  }
  if (fd < 0) {
    // A filesystem without O_TMPFILE: a named temporary file, removed on
    // error and on SIGINT / SIGTERM / SIGHUP.
    std::string tmpl = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
    fd = ::mkstemp(tmpl.data());
    if (fd < 0) throw ToolError(path + ": cannot create output file: " + std::strerror(errno));
    set_pending(tmpl);
    temp = tmpl;
    try {
      for (const auto& piece : pieces) write_all(fd, piece, path);
    } catch (...) {
      ::unlink(temp.c_str());
      clear_pending();
      throw;
    }
    ::fchmod(fd, 0644);
  }
  if (::close(fd) != 0 || std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    clear_pending();
    throw ToolError(path + ": cannot write output: " + std::strerror(err));
  }
  clear_pending();
}

}  // namespace etc::cli
