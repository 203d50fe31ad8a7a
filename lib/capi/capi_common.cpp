// Exports that need no handle: versions, capabilities, status text, logging.
#include <string>

#include "lib/capi/shim.h"
#include "lib/core/log.h"

using namespace bw24;

extern "C" {

uint32_t bw24_version_number(void) { return BW24_VERSION_NUMBER; }

const char* bw24_version_string(void) { return "0.1.0"; }

const char* bw24_build_info(void) {
  static const std::string info = [] {
    std::string s = "bw24 0.1.0 (git " BW24_GIT_SHA ", ";
#if defined(__clang__)
    s += "clang " __clang_version__;
#elif defined(__GNUC__)
    s += "gcc " __VERSION__;
#endif
    s += ", ";
    s += engine::cuda_build_info();
    s += ")";
    return s;
  }();
  return info.c_str();
}

uint64_t bw24_capabilities(void) {
  uint64_t caps = BW24_CAP_CPU;
#ifdef BW24_WITH_CUDA
  caps |= BW24_CAP_CUDA_BUILD;
  if (engine::cuda_device_count() > 0) caps |= BW24_CAP_CUDA_DEVICE;
#endif
  return caps;
}

const char* bw24_status_string(bw24_status status) {
  switch (status) {
    case BW24_OK: return "ok";
    case BW24_ERR_INVALID_ARGUMENT: return "invalid argument";
    case BW24_ERR_STRUCT_SIZE: return "wrong struct_size";
    case BW24_ERR_IO: return "I/O error";
    case BW24_ERR_FORMAT: return "corrupt or truncated file";
    case BW24_ERR_UNSUPPORTED: return "not supported";
    case BW24_ERR_MODEL: return "invalid model";
    case BW24_ERR_OUT_OF_MEMORY: return "out of memory";
    case BW24_ERR_TOKEN_OUT_OF_RANGE: return "token id out of range";
    case BW24_ERR_CONTEXT_FULL: return "context full";
    case BW24_ERR_BUFFER_TOO_SMALL: return "buffer too small";
    case BW24_ERR_CANCELLED: return "cancelled";
    case BW24_ERR_ABORTED: return "aborted by callback";
    case BW24_ERR_NOT_FOUND: return "not found";
    case BW24_ERR_DEVICE: return "device error";
    case BW24_ERR_STATE: return "invalid state";
    case BW24_ERR_INTERNAL: return "internal error";
    default: return "unknown status";
  }
}

void bw24_set_log_callback(bw24_log_fn fn, void* user) {
  set_log_sink(reinterpret_cast<LogSink>(fn), user);
}

}  // extern "C"
