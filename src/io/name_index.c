/* xengine io — sorted name -> index lookup (node and device names in files). */
#include "json_util.h"

#include <stdlib.h>
#include <string.h>

static int cmp_entry(const void *a, const void *b)
{
    const struct xe_name_entry *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

void xe_name_index_free(xe_name_index *idx)
{
    if (!idx) return;
    for (int i = 0; i < idx->n; i++) free(idx->e[i].key);
    free(idx->e);
    idx->e = NULL;
    idx->n = 0;
}

int xe_name_index_build(xe_name_index *idx, const char *const *keys, int n,
                        const char *path, const char *kind, xe_err *err)
{
    idx->e = NULL;
    idx->n = 0;
    if (n <= 0) return XE_OK;
    idx->e = calloc((size_t)n, sizeof *idx->e);
    if (!idx->e) return xe_err_set(err, XE_ENOMEM, "%s: out of memory", path);
    for (int i = 0; i < n; i++) {
        idx->e[i].key = strdup(keys[i]);
        idx->e[i].idx = i;
        if (!idx->e[i].key) {
            idx->n = i;
            xe_name_index_free(idx);
            return xe_err_set(err, XE_ENOMEM, "%s: out of memory", path);
        }
    }
    idx->n = n;
    qsort(idx->e, (size_t)n, sizeof *idx->e, cmp_entry);
    for (int i = 1; i < n; i++) {
        if (strcmp(idx->e[i - 1].key, idx->e[i].key) == 0) {
            int rc = xe_err_set(err, XE_EINVAL, "%s: duplicate %s name '%s' (%ss %d and %d)",
                                path, kind, idx->e[i].key, kind, idx->e[i - 1].idx,
                                idx->e[i].idx);
            xe_name_index_free(idx);
            return rc;
        }
    }
    return XE_OK;
}

int xe_name_index_find(const xe_name_index *idx, const char *key)
{
    int lo = 0, hi = idx->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(key, idx->e[mid].key);
        if (c == 0) return idx->e[mid].idx;
        if (c < 0) hi = mid - 1;
        else lo = mid + 1;
    }
    return -1;
}
