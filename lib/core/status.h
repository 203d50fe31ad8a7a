// Status helpers: every fallible internal function returns absl::Status / absl::StatusOr<T>
// carrying one of the pinned bw24 codes (include/bw24.h) as a payload, so lib/capi can map it
// back without guessing from absl's coarser code space.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"

namespace bw24 {

// Mirrors BW24_ERR_* in include/bw24.h (tests/abi checks they agree).
enum class Code : int32_t {
  kOk = 0,
  kInvalidArgument = 1,
  kStructSize = 2,
  kIo = 3,
  kFormat = 4,
  kUnsupported = 5,
  kModel = 6,
  kOutOfMemory = 7,
  kTokenOutOfRange = 8,
  kContextFull = 9,
  kBufferTooSmall = 10,
  kCancelled = 11,
  kAborted = 12,
  kNotFound = 13,
  kDevice = 14,
  kState = 15,
  kInternal = 16,
};

absl::Status make_status(Code code, std::string_view message);
Code code_of(const absl::Status& status);
// Debian's Abseil has its own string_view type; this gives the message as a std::string.
std::string message_of(const absl::Status& status);
// Same code, message prefixed with "context: ".
absl::Status with_context(const absl::Status& status, std::string_view context);

// error(Code::kFormat, "tensor '{}' ends past the file", name)
template <typename... Args>
absl::Status error(Code code, fmt::format_string<Args...> f, Args&&... args) {
  return make_status(code, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace bw24

#define BW24_CONCAT_INNER(a, b) a##b
#define BW24_CONCAT(a, b) BW24_CONCAT_INNER(a, b)

#define BW24_RETURN_IF_ERROR(expr)                   \
  do {                                               \
    ::absl::Status bw24_status_tmp_ = (expr);        \
    if (!bw24_status_tmp_.ok()) return bw24_status_tmp_; \
  } while (0)

#define BW24_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()

#define BW24_ASSIGN_OR_RETURN(lhs, expr) \
  BW24_ASSIGN_OR_RETURN_IMPL(BW24_CONCAT(bw24_statusor_, __LINE__), lhs, expr)
