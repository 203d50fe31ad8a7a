#include "lib/core/log.h"

#include <cstdio>
#include <mutex>
#include <string>

namespace bw24 {
namespace {

struct Sink {
  LogSink fn = nullptr;
  void* user = nullptr;
};

std::mutex& sink_mutex() {
  static std::mutex m;
  return m;
}
Sink& sink() {
  static Sink s;
  return s;
}

}  // namespace

void set_log_sink(LogSink fn, void* user) {
  std::lock_guard<std::mutex> lock(sink_mutex());
  sink() = Sink{fn, user};
}

void log_line(LogLevel level, std::string_view msg) {
  Sink s;
  {
    std::lock_guard<std::mutex> lock(sink_mutex());
    s = sink();
  }
  std::string line(msg);
  if (s.fn) {
    s.fn(static_cast<int>(level), line.c_str(), s.user);
  } else if (level <= LogLevel::kWarn) {
    std::fprintf(stderr, "bw24: %s: %s\n", level == LogLevel::kError ? "error" : "warning",
                 line.c_str());
  }
}

}  // namespace bw24
