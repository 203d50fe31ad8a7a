// Library logging: one sink (a bw24_log_fn or stderr), swapped under a mutex and called outside
// it, so any thread may log or change the sink (include/bw24.h: bw24_set_log_callback).
#pragma once

#include <string_view>
#include <utility>

#include "fmt/format.h"

namespace bw24 {

enum class LogLevel : int { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

using LogSink = void (*)(int level, const char* msg, void* user);
void set_log_sink(LogSink fn, void* user);
void log_line(LogLevel level, std::string_view msg);

template <typename... Args>
void log(LogLevel level, fmt::format_string<Args...> f, Args&&... args) {
  log_line(level, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace bw24
