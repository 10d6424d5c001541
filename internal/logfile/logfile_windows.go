package logfile

import (
	"os"

	"golang.org/x/sys/windows"
)

// openAppend is os.OpenFile(path, O_APPEND|O_CREATE|O_WRONLY or O_RDWR)
// with FILE_SHARE_DELETE added to the share mode, so the open file can be
// renamed or deleted (log rotation). FILE_APPEND_DATA without
// GENERIC_WRITE makes every write land at the end, as O_APPEND does.
func openAppend(path string, readable bool) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	access := uint32(windows.FILE_APPEND_DATA | windows.SYNCHRONIZE)
	if readable {
		access |= windows.GENERIC_READ
	}
	h, err := windows.CreateFile(p, access,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_ALWAYS, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}
