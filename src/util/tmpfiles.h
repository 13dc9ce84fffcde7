/* tmpfiles.h: temporary output files that never outlive the process
 * (internal).
 *
 * Outputs are written as DIR/.NAME.tmp.PID and renamed into place once
 * complete.  A temporary path registered here is unlinked if SIGINT, SIGTERM
 * or SIGHUP ends the process before it is forgotten; a file left by SIGKILL
 * (which nothing can catch) is removed by the next rs__tmp_sweep_stale of its
 * folder.  A registered folder (a private temporary folder, such as the
 * one holding eval's corpus built from text inputs) is removed with rmdir
 * after every registered file is unlinked, so its files must be registered
 * too.  Registration is for the main thread (outputs are created and
 * committed there); the handler only uses async-signal-safe calls. */
#ifndef RAGSWEEP_TMPFILES_H
#define RAGSWEEP_TMPFILES_H

#include "internal.h"

/* Registers path (copied) for removal on a fatal signal and, on the first
 * call, installs the handler for the signals whose disposition is still the
 * default (an ignored SIGHUP under nohup stays ignored, a host's own handler
 * stays in place).  Returns a handle for rs__tmp_forget, or -1 when every
 * slot is taken or memory is short (the file is then only not protected). */
int rs__tmp_register(const char *path);
/* Stops protecting the path of handle h (after a rename or unlink); accepts -1. */
void rs__tmp_forget(int h);
/* Removes dir's stale temporary files: names ".NAME.tmp.PID" whose PID is
 * not a live process (kill(PID, 0) fails with ESRCH) and not this one.
 * Returns how many were removed; errors (an unreadable folder) are ignored,
 * since a leftover is untidy but never wrong. */
size_t rs__tmp_sweep_stale(const char *dir);
/* The same for the temporary files of one output, ".name.tmp.PID", only:
 * for a file written into a folder that ragsweep does not own (an HDF5
 * corpus beside other files), where a stranger's ".x.tmp.12" is left alone. */
size_t rs__tmp_sweep_stale_of(const char *dir, const char *name);

/* Writes data[0..len) to path through ".NAME.tmp.PID" in the same folder
 * (registered meanwhile; the file's own stale temporaries swept first) and
 * renames it into place, so a reader never sees half a file.  RS_USAGE
 * when path names a folder ("what" names the file's kind in the message:
 * "ragsweep.prom", "report.html"), RS_IO naming path and the cause. */
rs_code rs__write_file_atomic(const char *path, const char *data, size_t len, const char *what, rs_error *err);

#endif
