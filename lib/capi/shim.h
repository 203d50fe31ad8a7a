// What every export does (docs/abi.md): validate pointers and struct_size, convert params, call
// the engine inside try/catch, map the absl::Status to a pinned code plus a message.
#pragma once

#include <cstring>
#include <new>
#include <string>

#include "bw24.h"
#include "lib/core/status.h"
#include "lib/engine/model.h"
#include "lib/engine/session.h"

struct bw24_model {
  std::shared_ptr<const bw24::engine::Model> model;
};

struct bw24_session {
  std::unique_ptr<bw24::engine::Session> session;
  std::string errmsg;
};

namespace bw24::capi {

// Largest struct_size we accept: far beyond any struct, small enough to rule out garbage.
constexpr uint32_t kMaxStructSize = 4096;

inline void fill_errbuf(bw24_errbuf* err, int32_t code, std::string_view msg) {
  if (!err) return;
  err->code = code;
  size_t n = std::min(msg.size(), sizeof(err->msg) - 1);
  std::memcpy(err->msg, msg.data(), n);
  err->msg[n] = '\0';
}

// Copy a caller's params struct into `out` (already holding defaults): only the bytes inside the
// caller's struct_size are read; a larger caller struct must have an all-zero unknown tail.
template <typename T>
absl::Status read_params(const T* in, T* out, const char* what) {
  if (!in) return absl::OkStatus();
  uint32_t size;
  std::memcpy(&size, in, sizeof size);
  if (size < sizeof(uint32_t) || size > kMaxStructSize)
    return error(Code::kStructSize, "{}.struct_size is {} (this library's is {})", what, size, sizeof(T));
  const auto* bytes = reinterpret_cast<const unsigned char*>(in);
  for (uint32_t i = sizeof(T); i < size; ++i)
    if (bytes[i] != 0)
      return error(Code::kStructSize, "{} is {} bytes with non-zero fields past this library's {} "
                   "bytes: the caller is newer than libbw24", what, size, sizeof(T));
  std::memcpy(out, in, std::min<size_t>(size, sizeof(T)));
  out->struct_size = sizeof(T);
  return absl::OkStatus();
}

// Fill the first struct_size bytes of the caller's *p from a full struct of this library's size
// (defaults, or an output such as bw24_model_info); the rest of a larger caller struct is zeroed.
template <typename T>
bw24_status write_struct(T* p, uint32_t struct_size, const T& defaults) {
  if (!p) return BW24_ERR_INVALID_ARGUMENT;
  if (struct_size < sizeof(uint32_t) || struct_size > kMaxStructSize) return BW24_ERR_STRUCT_SIZE;
  std::memset(p, 0, struct_size);
  std::memcpy(p, &defaults, std::min<size_t>(struct_size, sizeof(T)));
  p->struct_size = struct_size;
  return BW24_OK;
}

// Copy s into buf as a NUL-terminated string: *n_out = length, cap must be >= length + 1.
inline bw24_status copy_out(const std::string& s, char* buf, size_t cap, size_t* n_out) {
  if (n_out) *n_out = s.size();
  if (!buf && cap != 0) return BW24_ERR_INVALID_ARGUMENT;
  if (cap < s.size() + 1) return BW24_ERR_BUFFER_TOO_SMALL;
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  return BW24_OK;
}

// Run f (returning absl::Status) with every exception turned into a status.
template <typename F>
absl::Status guarded(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return make_status(Code::kOutOfMemory, "out of host memory");
  } catch (const std::exception& e) {
    return error(Code::kInternal, "internal error: {}", e.what());
  } catch (...) {
    return make_status(Code::kInternal, "internal error: unknown exception");
  }
}

inline bw24_status to_code(const absl::Status& s) { return static_cast<bw24_status>(code_of(s)); }

// For constructors: status -> code + errbuf.
inline bw24_status finish(const absl::Status& s, bw24_errbuf* err) {
  bw24_status code = to_code(s);
  fill_errbuf(err, code, s.ok() ? std::string() : message_of(s));
  return code;
}

// For session calls: status -> code + the session's message.
inline bw24_status finish(const absl::Status& s, bw24_session* sess) {
  try {
    sess->errmsg = s.ok() ? std::string() : message_of(s);
  } catch (...) {
  }
  return to_code(s);
}

}  // namespace bw24::capi
