/* Compiled as C99 with -Wall -Wextra -pedantic -Werror: the public header must be plain C. */
#include "bw24.h"

int bw24_c99_probe(void);
int bw24_c99_probe(void) {
    bw24_model_params mp;
    bw24_session_params sp;
    bw24_sampling samp;
    bw24_model_info info;
    bw24_errbuf err;
    bw24_model_params_default(&mp, (uint32_t)sizeof mp);
    bw24_session_params_default(&sp, (uint32_t)sizeof sp);
    bw24_sampling_default(&samp, (uint32_t)sizeof samp);
    info.struct_size = (uint32_t)sizeof info;
    err.code = 0;
    return (int)(sizeof mp + sizeof sp + sizeof samp + sizeof info + sizeof err.msg) + err.code;
}
