/*
 * bw24.h - the stable C ABI of the bw24 LLM inference engine.
 *
 * This header is the contract: anything not declared here is not part of the API.
 * It is C99 and includes only <stddef.h> and <stdint.h>.
 *
 * Threads. A bw24_model may be used from any number of threads at once. A bw24_session must not
 * be used by two threads at the same time (it may move between threads). bw24_session_cancel()
 * and bw24_set_log_callback() may be called from any thread at any time.
 *
 * Errors. Every call that can fail returns a bw24_status: BW24_OK (0) or one of the pinned
 * BW24_ERR_* codes below, which are never renumbered. Constructors take an optional caller-owned
 * bw24_errbuf that receives the code and a message naming the problem; session calls leave their
 * message in bw24_session_errmsg(). Nothing aborts, exits or throws across this boundary.
 *
 * Structs. Params structs are passed by const pointer, start with `uint32_t struct_size`, contain
 * fixed-width fields only and only grow at the end. Fill them with the matching *_default()
 * function, which takes the caller's sizeof. The library reads only the bytes inside struct_size.
 *
 * Minimal use (see examples/simple.c):
 *     bw24_model* m; bw24_session* s; bw24_errbuf e;
 *     bw24_model_open("model.gguf", NULL, &m, &e);
 *     bw24_session_create(m, NULL, &s, &e);
 *     bw24_session_prefill(s, prompt, n_prompt, 0);
 *     bw24_session_decode(s, NULL, out, 64, &n_out, NULL);
 *     bw24_session_destroy(s); bw24_model_close(m);
 */
#ifndef BW24_H
#define BW24_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#  if defined(BW24_BUILDING_LIBRARY)
#    define BW24_API __declspec(dllexport)
#  else
#    define BW24_API __declspec(dllimport)
#  endif
#else
#  define BW24_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================ */
/* Versions and capabilities                                                                      */
/* ============================================================================================ */

#define BW24_VERSION_MAJOR 0
#define BW24_VERSION_MINOR 1
#define BW24_VERSION_PATCH 0
/** MAJOR*10000 + MINOR*100 + PATCH. */
#define BW24_VERSION_NUMBER (BW24_VERSION_MAJOR * 10000 + BW24_VERSION_MINOR * 100 + BW24_VERSION_PATCH)
/** Equals the SONAME major of libbw24.so (libbw24.so.0). */
#define BW24_ABI_VERSION 0

/** Runtime version number (compare with BW24_VERSION_NUMBER). Thread-safe. @since 0.1 */
BW24_API uint32_t bw24_version_number(void);
/** Runtime version, e.g. "0.1.0". Static string. Thread-safe. @since 0.1 */
BW24_API const char* bw24_version_string(void);
/** One line: version, git SHA, compiler, CUDA version and compiled SM list. Static string.
 *  @since 0.1 */
BW24_API const char* bw24_build_info(void);

#define BW24_CAP_CPU         (1u << 0) /* the CPU reference backend (always present)          */
#define BW24_CAP_CUDA_BUILD  (1u << 1) /* the library was built with the CUDA backend         */
#define BW24_CAP_CUDA_DEVICE (1u << 2) /* ... and at least one CUDA device is usable now      */
/** Bitmask of BW24_CAP_*. Thread-safe. @since 0.1 */
BW24_API uint64_t bw24_capabilities(void);

/* ============================================================================================ */
/* Status codes (pinned: never renumbered; retired codes stay as placeholders)                    */
/* ============================================================================================ */

typedef int32_t bw24_status;
#define BW24_OK                       0
#define BW24_ERR_INVALID_ARGUMENT     1  /* NULL pointer, negative count, bad flag or value      */
#define BW24_ERR_STRUCT_SIZE          2  /* struct_size too small, or unknown non-zero tail      */
#define BW24_ERR_IO                   3  /* file cannot be opened, mapped or read                */
#define BW24_ERR_FORMAT               4  /* corrupt, truncated or inconsistent file              */
#define BW24_ERR_UNSUPPORTED          5  /* unknown architecture, dtype, quant type or option    */
#define BW24_ERR_MODEL                6  /* missing tensor, wrong shape, bad hyper-parameter     */
#define BW24_ERR_OUT_OF_MEMORY        7  /* host or device allocation failed                     */
#define BW24_ERR_TOKEN_OUT_OF_RANGE   8  /* a token id < 0 or >= n_vocab                         */
#define BW24_ERR_CONTEXT_FULL         9  /* the session's context has no room left               */
#define BW24_ERR_BUFFER_TOO_SMALL    10  /* caller buffer too small; *n_out holds the size needed */
#define BW24_ERR_CANCELLED           11  /* bw24_session_cancel() stopped the call               */
#define BW24_ERR_ABORTED             12  /* the load-progress callback returned non-zero         */
#define BW24_ERR_NOT_FOUND           13  /* metadata key or index does not exist                 */
#define BW24_ERR_DEVICE              14  /* CUDA device missing or failing                       */
#define BW24_ERR_STATE               15  /* call not valid in the session's current state        */
#define BW24_ERR_INTERNAL            16  /* a bug in bw24: please report it                      */

/** Static text for a status code ("unknown status" for codes not listed). Thread-safe.
 *  @since 0.1 */
BW24_API const char* bw24_status_string(bw24_status status);

/** Caller-owned error buffer for constructors. On failure `code` is the returned status and
 *  `msg` a NUL-terminated message naming the problem; on success code = 0 and msg = "". */
typedef struct bw24_errbuf {
    int32_t code;
    char msg[512];
} bw24_errbuf;

/* ============================================================================================ */
/* Logging                                                                                        */
/* ============================================================================================ */

#define BW24_LOG_ERROR 0
#define BW24_LOG_WARN  1
#define BW24_LOG_INFO  2
#define BW24_LOG_DEBUG 3
/** level: BW24_LOG_*; msg: one line without trailing newline, valid only during the call. */
typedef void (*bw24_log_fn)(int32_t level, const char* msg, void* user);
/** Route library log lines to fn (called on whatever thread logs; do not call into bw24 from it
 *  except bw24_set_log_callback). fn = NULL restores the default: ERROR and WARN to stderr.
 *  Thread-safe, any thread. @since 0.1 */
BW24_API void bw24_set_log_callback(bw24_log_fn fn, void* user);

/* ============================================================================================ */
/* Models                                                                                         */
/* ============================================================================================ */

typedef struct bw24_model bw24_model;     /* immutable weights; thread-shareable; refcounted  */
typedef struct bw24_session bw24_session; /* KV cache, sampler, logits; one thread at a time  */

/** Load-progress callback: fraction in [0,1], called on the loading thread. Return non-zero to
 *  abort the load (bw24_model_open then returns BW24_ERR_ABORTED). */
typedef int32_t (*bw24_progress_fn)(float fraction, void* user);

typedef struct bw24_model_params {
    uint32_t struct_size;       /* sizeof(bw24_model_params) as the caller compiled it        */
    uint32_t flags;             /* BW24_MODEL_*                                                */
    int32_t device;             /* -1 = CPU reference backend; >= 0 = CUDA device ordinal      */
    int32_t n_threads;          /* CPU threads; 0 = all hardware threads                       */
    uint64_t vram_budget_bytes; /* 0 = no limit beyond the device's free memory                */
    bw24_progress_fn progress;  /* nullable                                                    */
    void* progress_user;
    const char* options;        /* nullable; "key=value;key=value" (docs/abi.md lists keys)    */
} bw24_model_params;

#define BW24_MODEL_VOCAB_ONLY (1u << 0) /* load metadata and tokenizer only (no weights, no sessions) */

/** Fill *p with defaults for its first struct_size bytes (device -1, all threads).
 *  Returns BW24_ERR_INVALID_ARGUMENT for NULL, BW24_ERR_STRUCT_SIZE if struct_size < 4. @since 0.1 */
BW24_API bw24_status bw24_model_params_default(bw24_model_params* p, uint32_t struct_size);

/** Open a model: a .gguf file, or a Hugging Face model directory (config.json + *.safetensors,
 *  sharded or not). params may be NULL (defaults). On success *out holds one reference, which
 *  bw24_model_close() drops. err may be NULL. Thread-safe. @since 0.1 */
BW24_API bw24_status bw24_model_open(const char* path, const bw24_model_params* params,
                                     bw24_model** out, bw24_errbuf* err);

/** Drop the caller's reference. The model is freed when the last session using it is
 *  destroyed too, so sessions stay valid after this call. NULL is a no-op. @since 0.1 */
BW24_API void bw24_model_close(bw24_model* model);

typedef struct bw24_model_info {
    uint32_t struct_size;  /* set by the caller before the call                                 */
    int32_t n_vocab;
    int32_t n_ctx_train;
    int32_t n_layer;
    int32_t n_embd;
    int32_t device;        /* -1 = CPU                                                          */
    uint64_t n_params;     /* number of weight elements                                         */
    uint64_t n_bytes;      /* bytes of weights as stored in the file                            */
    const char* arch;      /* e.g. "llama", "qwen3"; valid while the model is alive             */
    const char* name;      /* general.name or the file name; valid while the model is alive     */
    const char* quant;     /* the weights' quant mix as llama.cpp names it ("Q4_K_M", "Q8_0",
                              "BF16", ...): a GGUF's general.file_type, else the type holding most
                              of the matrices' bytes; valid while the model is alive             */
} bw24_model_info;

/** Fill *info (caller sets info->struct_size). Thread-safe. @since 0.1 */
BW24_API bw24_status bw24_model_get_info(const bw24_model* model, bw24_model_info* info);

/** Number of metadata entries (GGUF key/value pairs; for HF directories, config.json mapped to
 *  GGUF key names). Returns -1 for NULL. @since 0.1 */
BW24_API int32_t bw24_model_meta_count(const bw24_model* model);

/** Key of metadata entry i, copied NUL-terminated into buf. *n_out = its length in bytes
 *  (without the NUL); if cap < length + 1, returns BW24_ERR_BUFFER_TOO_SMALL and writes nothing.
 *  @since 0.1 */
BW24_API bw24_status bw24_model_meta_key(const bw24_model* model, int32_t i, char* buf,
                                         size_t cap, size_t* n_out);

/** Value of metadata `key` as text, NUL-terminated: numbers in decimal, booleans as true/false,
 *  strings verbatim, arrays as JSON. Same buffer rules as bw24_model_meta_key; unknown key ->
 *  BW24_ERR_NOT_FOUND. Thread-safe. @since 0.1 */
BW24_API bw24_status bw24_model_meta(const bw24_model* model, const char* key, char* buf,
                                     size_t cap, size_t* n_out);

/* ============================================================================================ */
/* Tokenizer (from the model's GGUF metadata or its tokenizer.json)                               */
/* All calls are thread-safe; BW24_ERR_UNSUPPORTED if the model carries no tokenizer.             */
/* ============================================================================================ */

#define BW24_TOKENIZE_ADD_SPECIAL   (1u << 0) /* add BOS/EOS as the model's metadata asks        */
#define BW24_TOKENIZE_PARSE_SPECIAL (1u << 1) /* control tokens written in the text ("<|im_end|>")
                                                 become their ids instead of plain text         */

/** Text (len bytes, any bytes: invalid UTF-8 is read as U+FFFD) -> token ids. *n_out = number of
 *  ids; if cap is too small, BW24_ERR_BUFFER_TOO_SMALL and *n_out = the number needed.
 *  @since 0.1 */
BW24_API bw24_status bw24_tokenize(const bw24_model* model, const char* text, size_t len,
                                   uint32_t flags, int32_t* tokens, int32_t cap, int32_t* n_out);

#define BW24_DETOKENIZE_RENDER_SPECIAL     (1u << 0) /* write control tokens' text            */
#define BW24_DETOKENIZE_KEEP_SPACE_PREFIX  (1u << 1) /* SentencePiece: keep the leading space */

/** Token ids -> text bytes, NUL-terminated. *n_out = length without the NUL; cap must be at least
 *  length + 1, else BW24_ERR_BUFFER_TOO_SMALL. Out-of-range ids: BW24_ERR_TOKEN_OUT_OF_RANGE.
 *  @since 0.1 */
BW24_API bw24_status bw24_detokenize(const bw24_model* model, const int32_t* tokens, int32_t n,
                                     uint32_t flags, char* buf, size_t cap, size_t* n_out);

/** The bytes of one token (may be an incomplete UTF-8 sequence: join pieces before printing).
 *  Same buffer rules as bw24_detokenize; flags: BW24_DETOKENIZE_RENDER_SPECIAL. @since 0.1 */
BW24_API bw24_status bw24_token_to_piece(const bw24_model* model, int32_t token, uint32_t flags,
                                         char* buf, size_t cap, size_t* n_out);

#define BW24_SPECIAL_ADD_BOS (1u << 0)
#define BW24_SPECIAL_ADD_EOS (1u << 1)
typedef struct bw24_special_tokens {
    uint32_t struct_size;  /* set by the caller                                                  */
    uint32_t flags;        /* BW24_SPECIAL_*: what BW24_TOKENIZE_ADD_SPECIAL adds                */
    int32_t bos, eos, eot, unk, pad, sep;  /* -1 = none                                           */
} bw24_special_tokens;

/** Special token ids of the model's tokenizer. @since 0.1 */
BW24_API bw24_status bw24_model_special_tokens(const bw24_model* model, bw24_special_tokens* out);

/** 1 if token ends a generation (eos, eot, a chat format's turn end), 0 if not, -1 for NULL.
 *  @since 0.1 */
BW24_API int32_t bw24_token_is_eog(const bw24_model* model, int32_t token);

/* ============================================================================================ */
/* Chat templates                                                                                 */
/* ============================================================================================ */

typedef struct bw24_chat_message {
    const char* role;     /* "system", "user", "assistant", "tool", ...                          */
    const char* content;  /* UTF-8 text                                                          */
} bw24_chat_message;

#define BW24_CHAT_ADD_GENERATION_PROMPT (1u << 0) /* end with the assistant turn's opening     */

/** Render a conversation as the model's prompt text (NUL-terminated; *n_out = length without the
 *  NUL; cap must be at least length + 1, else BW24_ERR_BUFFER_TOO_SMALL).
 *  template_override: NULL = the model's chat template; else template text, or one of the
 *  built-in formats "chatml", "gemma", "phi3", "llama3". A model template outside the supported
 *  Jinja subset falls back to the built-in format its special tokens point to (logged as a
 *  warning); with no such format the call fails with BW24_ERR_UNSUPPORTED and err says why.
 *  err may be NULL. Thread-safe. @since 0.1 */
BW24_API bw24_status bw24_chat_render(const bw24_model* model, const bw24_chat_message* messages,
                                      int32_t n_messages, uint32_t flags,
                                      const char* template_override, char* buf, size_t cap,
                                      size_t* n_out, bw24_errbuf* err);

/** As bw24_chat_render, with the whole template context as a JSON object:
 *  {"messages": [{"role": ..., "content": ..., "tool_calls": [...]}, ...], "tools": [...],
 *   "enable_thinking": false, ...} (any extra keys become template variables). @since 0.1 */
BW24_API bw24_status bw24_chat_render_json(const bw24_model* model, const char* context_json,
                                           uint32_t flags, const char* template_override,
                                           char* buf, size_t cap, size_t* n_out, bw24_errbuf* err);

/* ============================================================================================ */
/* Sessions                                                                                       */
/* ============================================================================================ */

#define BW24_KV_AUTO        (-1) /* backend default: f32 on the CPU reference, f16 on CUDA      */
#define BW24_KV_F32           0
#define BW24_KV_F16           1
#define BW24_KV_BF16          2
#define BW24_KV_Q8_0          3
#define BW24_KV_Q4_0          4
#define BW24_KV_FP8_E4M3      5

typedef struct bw24_session_params {
    uint32_t struct_size;
    uint32_t flags;       /* reserved, must be 0                                                */
    int32_t n_ctx;        /* positions in the context; 0 = min(n_ctx_train, 4096)               */
    int32_t kv_type_k;    /* BW24_KV_*                                                           */
    int32_t kv_type_v;    /* BW24_KV_*                                                           */
    int32_t reserved0;    /* must be 0                                                           */
    uint64_t seed;        /* sampler RNG seed                                                    */
} bw24_session_params;

/** Fill defaults (n_ctx 0, KV auto, seed 0x5eed). @since 0.1 */
BW24_API bw24_status bw24_session_params_default(bw24_session_params* p, uint32_t struct_size);

/** Create a session on model (takes its own reference on the model). params may be NULL.
 *  Thread-safe with respect to the model. @since 0.1 */
BW24_API bw24_status bw24_session_create(bw24_model* model, const bw24_session_params* params,
                                         bw24_session** out, bw24_errbuf* err);

/** Destroy a session and drop its model reference. NULL is a no-op. @since 0.1 */
BW24_API void bw24_session_destroy(bw24_session* session);

#define BW24_PREFILL_ALL_LOGITS (1u << 0) /* keep the logits of every prompt position           */

/** Append n_tokens tokens to the context and run them through the model. Afterwards the logits
 *  of the last position (or of every new position with BW24_PREFILL_ALL_LOGITS) are available
 *  from bw24_session_logits(). Errors: BW24_ERR_TOKEN_OUT_OF_RANGE (nothing appended),
 *  BW24_ERR_CONTEXT_FULL (position + n_tokens > n_ctx; nothing appended), BW24_ERR_CANCELLED
 *  (the session stays at its position before the call). @since 0.1 */
BW24_API bw24_status bw24_session_prefill(bw24_session* session, const int32_t* tokens,
                                          int32_t n_tokens, uint32_t flags);

/** Logits of the last prefill/decode: *out points to n_rows x n_vocab floats owned by the
 *  session, valid until the next call on it. Rows are positions (oldest first).
 *  BW24_ERR_STATE if there are none yet. @since 0.1 */
BW24_API bw24_status bw24_session_logits(bw24_session* session, const float** out,
                                         int32_t* n_rows, int32_t* n_vocab);

#define BW24_SEED_KEEP UINT64_MAX /* bw24_sampling.seed: keep the session's RNG stream       */
#define BW24_SAMPLE_IGNORE_EOG (1u << 0) /* do not stop at end-of-generation tokens           */

typedef struct bw24_sampling {
    uint32_t struct_size;
    uint32_t flags;            /* BW24_SAMPLE_*                                                */
    float temperature;         /* 0 = greedy (argmax; lowest id wins a tie)                    */
    int32_t top_k;             /* 0 = off                                                      */
    float top_p;               /* 1 = off                                                      */
    float min_p;               /* 0 = off                                                      */
    float repeat_penalty;      /* 1 = off                                                      */
    float presence_penalty;    /* 0 = off                                                      */
    float frequency_penalty;   /* 0 = off                                                      */
    int32_t penalty_last_n;    /* tokens of history the penalties see; -1 = whole context      */
    uint64_t seed;             /* BW24_SEED_KEEP, or reseed the session RNG with this value    */
} bw24_sampling;

/** Fill defaults: greedy, no penalties, penalty_last_n 64, seed BW24_SEED_KEEP. @since 0.1 */
BW24_API bw24_status bw24_sampling_default(bw24_sampling* p, uint32_t struct_size);

#define BW24_STOP_LENGTH       0 /* cap tokens were produced                                     */
#define BW24_STOP_EOG          1 /* an end-of-generation token was produced (it is in the output) */
#define BW24_STOP_CONTEXT_FULL 2 /* the context filled up                                        */

/** Pull up to cap tokens: each step samples from the current logits, writes the token to
 *  out[*n_out], and feeds it to the model. Stops after cap tokens, at an end-of-generation token
 *  (written to out but not fed to the model), or when the context is full (the last token is
 *  written but not fed). sampling may be NULL (greedy). stop_reason may be NULL.
 *  Needs logits (prefill first): BW24_ERR_STATE otherwise. BW24_ERR_CANCELLED: *n_out tokens
 *  were produced and committed before the cancel. BW24_ERR_CONTEXT_FULL if no room at entry.
 *  @since 0.1 */
BW24_API bw24_status bw24_session_decode(bw24_session* session, const bw24_sampling* sampling,
                                         int32_t* out, int32_t cap, int32_t* n_out,
                                         int32_t* stop_reason);

/** Keep the first n_keep positions of the context and drop the rest (0 <= n_keep <= position).
 *  The logits for the next token are recomputed on demand. Hybrid (recurrent) models recompute
 *  their state from the kept tokens, at the cost of one prefill. @since 0.1 */
BW24_API bw24_status bw24_session_rewind(bw24_session* session, int32_t n_keep);

/** Number of positions in the context (tokens prefilled or decoded and fed). -1 for NULL.
 *  @since 0.1 */
BW24_API int32_t bw24_session_position(const bw24_session* session);

/** Ask a running prefill/decode on this session to stop at the next layer or token boundary.
 *  Safe from any thread; a call with nothing running has no effect. NULL is a no-op. @since 0.1 */
BW24_API void bw24_session_cancel(bw24_session* session);

/** Message of the last failed call on session ("" after success). Owned by the session, valid
 *  until the next call on it. Never NULL (a static string for a NULL session). @since 0.1 */
BW24_API const char* bw24_session_errmsg(const bw24_session* session);

#ifdef __cplusplus
}
#endif
#endif /* BW24_H */
