// Package logfile opens the proxy's append-only logs (the audit log, the
// telemetry session log) so that log rotation can rename them while they
// are open, on every OS.
//
// On Unix that is os.OpenFile. On Windows os.OpenFile shares a file for
// reading and writing but not for deletion (FILE_SHARE_DELETE is missing,
// golang/go#32088), so renaming the open log fails with "Sharing
// violation" (ERROR_SHARING_VIOLATION) and a rotator (or `Reopen` after a
// rename) cannot work; there the file is opened with CreateFile and
// FILE_SHARE_READ|FILE_SHARE_WRITE|FILE_SHARE_DELETE.
package logfile

import "os"

// OpenAppend opens path for appending, creating it with mode 0600 (Unix;
// Windows has no such mode) when missing. With readable the file can also
// be read (the audit log reads its last line). Errors are *os.PathError
// naming path.
func OpenAppend(path string, readable bool) (*os.File, error) { return openAppend(path, readable) }
