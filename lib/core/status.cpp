#include "lib/core/status.h"

#include "absl/strings/cord.h"

namespace bw24 {
namespace {

constexpr std::string_view kPayloadUrl = "bw24.code";

absl::StatusCode absl_code(Code code) {
  switch (code) {
    case Code::kOk: return absl::StatusCode::kOk;
    case Code::kInvalidArgument:
    case Code::kStructSize:
    case Code::kTokenOutOfRange: return absl::StatusCode::kInvalidArgument;
    case Code::kIo: return absl::StatusCode::kUnavailable;
    case Code::kFormat: return absl::StatusCode::kDataLoss;
    case Code::kUnsupported: return absl::StatusCode::kUnimplemented;
    case Code::kModel: return absl::StatusCode::kFailedPrecondition;
    case Code::kOutOfMemory:
    case Code::kContextFull:
    case Code::kBufferTooSmall: return absl::StatusCode::kResourceExhausted;
    case Code::kCancelled:
    case Code::kAborted: return absl::StatusCode::kCancelled;
    case Code::kNotFound: return absl::StatusCode::kNotFound;
    case Code::kDevice: return absl::StatusCode::kUnavailable;
    case Code::kState: return absl::StatusCode::kFailedPrecondition;
    case Code::kInternal: return absl::StatusCode::kInternal;
  }
  return absl::StatusCode::kUnknown;
}

}  // namespace

absl::Status make_status(Code code, std::string_view message) {
  if (code == Code::kOk) return absl::OkStatus();
  absl::Status s(absl_code(code), std::string(message));
  s.SetPayload(absl::string_view(kPayloadUrl.data(), kPayloadUrl.size()), absl::Cord(std::to_string(static_cast<int32_t>(code))));
  return s;
}

std::string message_of(const absl::Status& status) {
  return std::string(status.message().data(), status.message().size());
}

absl::Status with_context(const absl::Status& status, std::string_view context) {
  if (status.ok()) return status;
  return make_status(code_of(status), std::string(context) + ": " + message_of(status));
}

Code code_of(const absl::Status& status) {
  if (status.ok()) return Code::kOk;
  if (auto p = status.GetPayload(absl::string_view(kPayloadUrl.data(), kPayloadUrl.size()))) {
    int v = std::stoi(std::string(*p));
    if (v > 0 && v <= static_cast<int>(Code::kInternal)) return static_cast<Code>(v);
  }
  // A status that did not come from make_status(): map absl's code as well as we can.
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument: return Code::kInvalidArgument;
    case absl::StatusCode::kNotFound: return Code::kNotFound;
    case absl::StatusCode::kResourceExhausted: return Code::kOutOfMemory;
    case absl::StatusCode::kCancelled: return Code::kCancelled;
    case absl::StatusCode::kUnimplemented: return Code::kUnsupported;
    case absl::StatusCode::kDataLoss: return Code::kFormat;
    default: return Code::kInternal;
  }
}

}  // namespace bw24
