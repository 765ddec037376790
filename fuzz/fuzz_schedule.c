/* Fuzz target: the schedule reader (events and the file's claims) on the tiny gpu+cpu
 * instance, then the simulator on whatever the reader accepted: every event list the
 * reader returns must be safe to replay. */
#include "fuzz_util.h"
#include "xengine/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xe_err err = {{0}};
    xe_instance *in = xe_fuzz_tiny_instance("gpu+cpu");
    const char *path = xe_fuzz_file(data, size, ".json");
    xe_schedule s;
    xe_schedule_claims claims;
    xe_schedule_init(&s);
    if (xe_io_read_schedule_claims(path, in, &s, &claims, &err) != XE_OK) {
        if (!err.msg[0] || strchr(err.msg, '\n')) abort();
        if (s.len != 0) abort(); /* a failed read appends nothing */
    } else {
        xe_sim_result r;
        int rc = xe_sim_run(in, &s, &r, &err);
        if ((rc == XE_OK) != (r.bad_event < 0)) abort();
    }
    xe_schedule_clear(&s);
    xe_instance_free(in);
    return 0;
}
