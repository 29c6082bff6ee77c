#include "runtime/core/log.h"

#include <cstdio>

namespace etc {
namespace {

// The default: an application that installs no sink hears of warnings and
// errors only.
void stderr_sink(LogLevel level, const char* message) {
  if (level < LogLevel::Warning) return;
  static const char* const kNames[] = {"debug", "info", "warning", "error"};
  std::fprintf(stderr, "[etc %s] %s\n", kNames[static_cast<int>(level)], message);
}

LogSink g_sink = stderr_sink;

}  // namespace

void set_log_sink(LogSink sink) { g_sink = sink ? sink : stderr_sink; }

void log_message(LogLevel level, const char* format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  g_sink(level, buffer);
}

}  // namespace etc
