/* Running gnuplot for `plot` and `sweep --plot` (src/cli/cli.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

const char *xe_cli_gnuplot_prog(void)
{
    const char *prog = getenv("XE_GNUPLOT");
    return prog && *prog ? prog : "gnuplot";
}

/* 1 when prog can be executed (searched in PATH when it has no slash). */
static int gnuplot_found(const char *prog)
{
    if (strchr(prog, '/')) return access(prog, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path) path = "/bin:/usr/bin"; /* execvp's search without PATH (glibc): found it where this said "not found" */
    while (*path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        char buf[4096];
        if (len == 0) snprintf(buf, sizeof buf, "./%s", prog);
        else snprintf(buf, sizeof buf, "%.*s/%s", (int)len, path, prog);
        struct stat st;
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0) return 1;
        if (!end) break;
        path = end + 1;
    }
    return 0;
}

const char *xe_cli_gnuplot_require(const char *what)
{
    const char *prog = xe_cli_gnuplot_prog();
    if (gnuplot_found(prog)) return prog;
    fprintf(stderr, "xengine: error: %s%sgnuplot not found (looked for '%s'%s); install it (Debian: gnuplot-nox) or "
                    "set XE_GNUPLOT\n",
            what ? what : "", what ? ": " : "", prog, strchr(prog, '/') ? "" : " in PATH");
    return NULL;
}

int xe_cli_gnuplot_run(const char *prog, const char *dir, const char *script, const char *out, const char *shown)
{
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        fprintf(stderr, "xengine: error: gnuplot: pipe: %s\n", strerror(errno));
        return XE_EXIT_INTERNAL;
    }
    char setout[512];
    if (out) snprintf(setout, sizeof setout, "outfile='%s'", out);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "xengine: error: gnuplot: fork: %s\n", strerror(errno));
        close(pipefd[0]);
        close(pipefd[1]);
        return XE_EXIT_INTERNAL;
    }
    if (pid == 0) {
        close(pipefd[0]);
        dup2(pipefd[1], STDOUT_FILENO);
        dup2(pipefd[1], STDERR_FILENO);
        close(pipefd[1]);
        if (dir && chdir(dir) != 0) _exit(126);
        if (out) execlp(prog, prog, "-e", setout, script, (char *)NULL);
        else execlp(prog, prog, script, (char *)NULL);
        fprintf(stderr, "cannot run '%s' (install gnuplot-nox or set XE_GNUPLOT)\n", prog);
        _exit(127);
    }
    close(pipefd[1]);
    char msg[4096];
    size_t got = 0;
    for (;;) {
        char chunk[1024];
        ssize_t k = read(pipefd[0], chunk, sizeof chunk);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        for (ssize_t j = 0; j < k && got + 1 < sizeof msg; j++) msg[got++] = chunk[j];
    }
    msg[got] = '\0';
    close(pipefd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "xengine: error: gnuplot: waitpid: %s\n", strerror(errno));
            return XE_EXIT_INTERNAL;
        }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return XE_EXIT_OK;
    /* gnuplot reports an error as a few lines; keep the one that names it */
    const char *line = "";
    char *save = NULL;
    for (char *l = strtok_r(msg, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        while (*l == ' ' || *l == '^') l++;
        if (*l) line = l;
        if (strstr(l, "rror")) break;
    }
    const char *d = shown ? "" : dir ? dir : "", *sep = !shown && dir ? "/" : "", *f = shown ? shown : script;
    if (WIFEXITED(status))
        fprintf(stderr, "xengine: error: %s%s%s: gnuplot (%s) exited with status %d%s%s\n", d, sep, f, prog,
                WEXITSTATUS(status), *line ? ": " : "", line);
    else
        fprintf(stderr, "xengine: error: %s%s%s: gnuplot (%s) was killed by signal %d\n", d, sep, f, prog,
                WTERMSIG(status));
    return XE_EXIT_INTERNAL;
}

int xe_cli_image_check(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    unsigned char head[8], tail[64];
    size_t nh = fread(head, 1, sizeof head, f);
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    size_t nt = 0;
    if (size > 0) {
        long from = size > (long)sizeof tail ? size - (long)sizeof tail : 0;
        if (fseek(f, from, SEEK_SET) == 0) nt = fread(tail, 1, (size_t)(size - from), f);
    }
    fclose(f);
    if (size <= 0 || nh == 0) return -1;
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static const unsigned char png_end[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
    if (nh == sizeof head && !memcmp(head, png_sig, sizeof png_sig)) /* PNG: its last chunk is IEND */
        return nt >= sizeof png_end && !memcmp(tail + nt - sizeof png_end, png_end, sizeof png_end) ? 1 : 0;
    while (nt > 0 && (tail[nt - 1] == '\n' || tail[nt - 1] == '\r' || tail[nt - 1] == ' ' || tail[nt - 1] == '\t'))
        nt--; /* SVG: its root element closed last */
    return nt >= 6 && !memcmp(tail + nt - 6, "</svg>", 6) ? 1 : 0;
}
