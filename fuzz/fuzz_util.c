/* xengine fuzzing — temporary input files and the fixed tiny instance. */
#include "fuzz_util.h"

#include <fcntl.h>
#include <sys/stat.h>

static const char tiny_graph_json[] =
    "{\"format\": \"xengine-graph\", \"version\": 1, \"name\": \"tiny\", \"nodes\": ["
    "{\"name\": \"conv1\", \"op\": \"Conv\", \"mem\": 1000, \"param_mem\": 64, \"cost\": 2.5},"
    "{\"name\": \"relu1\", \"op\": \"Relu\", \"mem\": 1000, \"cost\": 0.5},"
    "{\"name\": \"loss\", \"op\": \"Loss\", \"mem\": 8, \"cost\": 1},"
    "{\"name\": \"relu1_grad\", \"op\": \"ReluGrad\", \"backward\": true, \"mem\": 1000, \"cost\": 0.75},"
    "{\"name\": \"conv1_grad\", \"op\": \"ConvGrad\", \"backward\": true, \"mem\": 1000, \"cost\": 5}],"
    "\"edges\": [[0, 1], [1, 2], [2, 3], [1, 3], [3, 4], [0, 4]]}";

static char tmp_path[4][64]; /* one per suffix slot; harness-only state (see the header) */

static void remove_tmp(void)
{
    for (int i = 0; i < 4; i++)
        if (tmp_path[i][0]) unlink(tmp_path[i]);
}

static int slot_of(const char *suffix)
{
    /* distinct files for the few roles a target needs at once */
    if (!strcmp(suffix, ".json")) return 0;
    if (!strcmp(suffix, ".onnx")) return 1;
    if (!strcmp(suffix, ".graph.json")) return 2;
    return 3;
}

const char *xe_fuzz_file(const uint8_t *data, size_t size, const char *suffix)
{
    int s = slot_of(suffix);
    if (!tmp_path[s][0]) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(tmp_path[s], sizeof tmp_path[s], "%s/xe_fuzz_%ld_%d%s", dir, (long)getpid(), s,
                 suffix);
        static int registered;
        if (!registered) {
            atexit(remove_tmp);
            registered = 1;
        }
    }
    int fd = open(tmp_path[s], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        perror(tmp_path[s]);
        abort();
    }
    size_t done = 0;
    while (done < size) {
        ssize_t k = write(fd, data + done, size - done);
        if (k <= 0) {
            perror(tmp_path[s]);
            abort();
        }
        done += (size_t)k;
    }
    close(fd);
    return tmp_path[s];
}

xe_graph *xe_fuzz_tiny_graph(void)
{
    xe_err err = {{0}};
    xe_graph *g = NULL;
    const char *p = xe_fuzz_file((const uint8_t *)tiny_graph_json, sizeof tiny_graph_json - 1,
                                 ".graph.json");
    if (xe_io_read_graph(p, &g, &err) != XE_OK) {
        fprintf(stderr, "fuzz fixture: %s\n", err.msg);
        abort();
    }
    return g;
}

xe_instance *xe_fuzz_tiny_instance(const char *preset)
{
    xe_err err = {{0}};
    xe_recipe r;
    xe_instance *in = NULL;
    xe_graph *g = xe_fuzz_tiny_graph();
    if (xe_recipe_preset(preset, 1.0, &r, &err) != XE_OK ||
        xe_instance_from_recipe(g, &r, &in, &err) != XE_OK) {
        fprintf(stderr, "fuzz fixture: %s\n", err.msg);
        abort();
    }
    return in;
}
