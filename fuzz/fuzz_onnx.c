/* Fuzz target: the ONNX reader (protobuf decoding, attribute reading, shape inference)
 * through its memory-buffer entry point xe_onnx_read_buffer, with the file's batch and
 * with batch 2. An error message must be one line (error.h); XE_FUZZ_ONELINE=0 skips
 * that check, to look for memory errors only while a known multi-line message is open
 * (docs/fuzzing.md, "Findings"). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int64_t batches[2] = {0, 2};
    const char *ol = getenv("XE_FUZZ_ONELINE");
    int oneline = !(ol && !strcmp(ol, "0"));
    for (int k = 0; k < 2; k++) {
        xe_err err = {{0}};
        xe_net *net = NULL;
        int rc = xe_onnx_read_buffer(data, size, "fuzz.onnx", batches[k], &net, &err);
        if (rc != XE_OK) {
            if (net) abort();                                   /* on error *out is NULL */
            if (!err.msg[0]) abort();                           /* a message, always */
            if (oneline && strchr(err.msg, '\n')) abort();     /* on one line */
        } else {
            if (!net) abort();
            xe_net_free(net);
        }
    }
    return 0;
}
