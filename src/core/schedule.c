/* Growable event list. */
#include "xengine/schedule.h"

#include <stdlib.h>

void xe_schedule_init(xe_schedule *s)
{
    s->ev = NULL;
    s->len = s->cap = 0;
}

void xe_schedule_clear(xe_schedule *s)
{
    free(s->ev);
    xe_schedule_init(s);
}

int xe_schedule_push(xe_schedule *s, xe_event_kind kind, int node, int dev, int dst)
{
    if (s->len == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        xe_event *p = realloc(s->ev, (size_t)cap * sizeof *p);
        if (!p) return XE_ENOMEM;
        s->ev = p;
        s->cap = cap;
    }
    s->ev[s->len++] = (xe_event){kind, node, dev, dst};
    return XE_OK;
}

int xe_schedule_append(xe_schedule *s, const xe_schedule *src)
{
    int len0 = s->len;
    for (int k = 0; k < src->len; k++)
        if (xe_schedule_push(s, src->ev[k].kind, src->ev[k].node, src->ev[k].dev, src->ev[k].dst)) {
            s->len = len0;
            return XE_ENOMEM;
        }
    return XE_OK;
}
