/* simple.c - the smallest complete bw24 program, in C99 using only bw24.h.
 * Also the C99 compile test of the header (built with -std=c99 -Wall -Wextra -pedantic -Werror).
 *   usage: bw24-simple MODEL [TOKEN_ID ...]   (prompt ids, default: 1 = BOS) */
#include <stdio.h>
#include <stdlib.h>

#include "bw24.h"

int main(int argc, char** argv) {
    bw24_errbuf err;
    bw24_model* model = NULL;
    bw24_session* session = NULL;
    int32_t prompt[64];
    int32_t n_prompt = 0;
    int32_t out[32];
    int32_t n_out = 0, stop = 0, i;
    bw24_status st;

    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL [TOKEN_ID ...]\n", argv[0]);
        return 2;
    }
    for (i = 2; i < argc && n_prompt < 64; ++i) prompt[n_prompt++] = (int32_t)atoi(argv[i]);
    if (n_prompt == 0) prompt[n_prompt++] = 1;

    st = bw24_model_open(argv[1], NULL, &model, &err);
    if (st != BW24_OK) {
        fprintf(stderr, "open failed: %s (%s)\n", err.msg, bw24_status_string(st));
        return 1;
    }
    st = bw24_session_create(model, NULL, &session, &err);
    bw24_model_close(model); /* the session keeps the model alive */
    if (st != BW24_OK) {
        fprintf(stderr, "session failed: %s\n", err.msg);
        return 1;
    }
    st = bw24_session_prefill(session, prompt, n_prompt, 0);
    if (st == BW24_OK) st = bw24_session_decode(session, NULL, out, 32, &n_out, &stop);
    if (st != BW24_OK) {
        fprintf(stderr, "generation failed: %s\n", bw24_session_errmsg(session));
        bw24_session_destroy(session);
        return 1;
    }
    for (i = 0; i < n_out; ++i) printf("%d%s", (int)out[i], i + 1 < n_out ? "," : "\n");
    bw24_session_destroy(session);
    return 0;
}
