#pragma once
// One logging macro with a compile-time minimum level and a replaceable sink.
// The runtime logs through ETC_LOG; the CLI installs a sink that filters by
// its -v / -q level (tools/etc/cli_setup.cpp).

#include <cstdarg>

namespace etc {

enum class LogLevel { Debug = 0, Info = 1, Warning = 2, Error = 3 };

using LogSink = void (*)(LogLevel level, const char* message);

// Replaces the sink (default: warnings and errors to stderr; a null sink
// restores it). Not thread-safe against concurrent logging.
void set_log_sink(LogSink sink);
void log_message(LogLevel level, const char* format, ...) __attribute__((format(printf, 2, 3)));

}  // namespace etc

#ifndef ETC_MIN_LOG_LEVEL
#define ETC_MIN_LOG_LEVEL 0
#endif

#define ETC_LOG(level, ...)                                            \
  do {                                                                 \
    if (static_cast<int>(::etc::LogLevel::level) >= ETC_MIN_LOG_LEVEL) \
      ::etc::log_message(::etc::LogLevel::level, __VA_ARGS__);         \
  } while (0)
