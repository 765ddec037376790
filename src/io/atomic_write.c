/* xengine io — the one way files are written: temp file in the same directory, fsync,
 * rename. A failed write never leaves a half-written PATH behind. */
#include "json_util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Best effort: makes the rename durable by syncing the directory that holds path. */
static void sync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir;
    if (!slash) {
        dir = strdup(".");
    } else {
        size_t n = slash == path ? 1 : (size_t)(slash - path);
        dir = malloc(n + 1);
        if (dir) {
            memcpy(dir, path, n);
            dir[n] = '\0';
        }
    }
    if (!dir) return;
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

int xe_io_check_writable(const char *path, xe_err *err)
{
    struct stat cur;
    if (!*path) return xe_err_set(err, XE_EIO, "an empty path cannot be written");
    /* rename() would replace a device, a symbolic link or a socket with a plain file */
    int exists = lstat(path, &cur) == 0;
    if (exists && !S_ISREG(cur.st_mode))
        return xe_err_set(err, XE_EIO, "%s: exists and is %s; refusing to replace it", path,
                          S_ISLNK(cur.st_mode) ? "a symbolic link (the schedule would replace the link, not its target)"
                          : S_ISDIR(cur.st_mode) ? "a directory" : "not a regular file");
    /* a write-protected file is not replaced (as `cp` or `>` would refuse it: the rename
     * alone would need only the directory's permission): no write bit at all, for
     * everybody, root included (root could write it, and did before 2026-12-01), or no
     * permission for this user */
    if (exists && !(cur.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)))
        return xe_err_set(err, XE_EIO, "%s: is write-protected (mode %04o); refusing to replace it", path,
                          (unsigned)(cur.st_mode & 07777));
    if (exists && access(path, W_OK) != 0)
        return xe_err_set(err, XE_EIO, "%s: cannot write: %s", path, strerror(errno));
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (access(dir, W_OK | X_OK) != 0)
        return xe_err_set(err, XE_EIO, "%s: cannot write into %s: %s", path, dir, strerror(errno));
    return XE_OK;
}

unsigned xe_io_output_mode(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (unsigned)(st.st_mode & 0777) : 0644u;
}

int xe_io_temp_path(const char *path, const char *tag, char *buf, size_t cap)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dirlen = (size_t)(base - path);
    /* a name of up to 255 bytes is legal; PATH.tag.XXXXXX may not be: then a short one
     * in the same directory (a new user's 245-byte name was refused before 2026-12-05) */
    size_t n = strlen(base) + strlen(tag) + 9 <= 255
                   ? (size_t)snprintf(buf, cap, "%s.%s.XXXXXX", path, tag)
                   : (size_t)snprintf(buf, cap, "%.*s.xengine.%s.XXXXXX", (int)dirlen, path, tag);
    return n < cap ? 0 : -1;
}

int xe_io_write_atomic(const char *path, const char *data, size_t len, xe_err *err)
{
    int rc = xe_io_check_writable(path, err);
    if (rc) return rc;
    size_t cap = strlen(path) + 32;
    char *tmp = malloc(cap);
    if (!tmp) return xe_err_set(err, XE_ENOMEM, "%s: out of memory", path);
    if (xe_io_temp_path(path, "tmp", tmp, cap)) { /* cannot happen: cap has room for either form */
        free(tmp);
        return xe_err_set(err, XE_EIO, "%s: path too long", path);
    }

    /* the usual ends of a process (Ctrl-C, kill, a closed terminal) wait until the
     * temporary is renamed or removed: delivered then, they cannot leave it behind (one
     * did before 2026-12-05). Blocked in this thread only: a signal that another thread
     * of the caller takes still ends the process there. */
    sigset_t block, saved;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGQUIT);
    int masked = pthread_sigmask(SIG_BLOCK, &block, &saved) == 0;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        if (masked) pthread_sigmask(SIG_SETMASK, &saved, NULL);
        return xe_err_set(err, XE_EIO, "%s: cannot create a temporary file: %s", path,
                          strerror(e));
    }
    mode_t mode = (mode_t)xe_io_output_mode(path); /* mkstemp's is 0600 */
    const char *what = "write";
    int e = 0;
    size_t done = 0;
    while (done < len) {
        ssize_t k = write(fd, data + done, len - done);
        if (k < 0) {
            if (errno == EINTR) continue;
            e = errno;
            break;
        }
        done += (size_t)k;
    }
    if (!e && fchmod(fd, mode) != 0) {
        e = errno;
        what = "chmod";
    }
    if (!e && fsync(fd) != 0) {
        e = errno;
        what = "fsync";
    }
    if (close(fd) != 0 && !e) {
        e = errno;
        what = "close";
    }
    if (!e && rename(tmp, path) != 0) {
        e = errno;
        what = "rename";
    }
    if (e) {
        unlink(tmp);
        free(tmp);
        if (masked) pthread_sigmask(SIG_SETMASK, &saved, NULL);
        return xe_err_set(err, XE_EIO, "%s: cannot write (%s): %s", path, what, strerror(e));
    }
    free(tmp);
    sync_parent_dir(path);
    if (masked) pthread_sigmask(SIG_SETMASK, &saved, NULL);
    return XE_OK;
}
