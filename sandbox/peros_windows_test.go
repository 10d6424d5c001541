package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// killedFromOutside is how a worker ended by os.Process.Kill is described:
// on Windows that is TerminateProcess with exit code 1, which nothing tells
// apart from the worker's own exit(1).
const killedFromOutside = "exited with status 1 without a result"

// underWine reports whether this Windows binary runs under Wine (its ntdll
// exports wine_get_version), for the few limits Wine does not enforce.
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// openDescriptors counts this process's open handles (Windows has no
// /dev/fd; under Wine that path is the Linux table of the Wine process).
// Wine 8 does not implement GetProcessHandleCount: an error there.
func openDescriptors() (int, error) {
	var n uint32
	r, _, err := windows.NewLazySystemDLL("kernel32.dll").NewProc("GetProcessHandleCount").Call(uintptr(windows.CurrentProcess()), uintptr(unsafe.Pointer(&n)))
	if r == 0 || n == 0 {
		return 0, fmt.Errorf("GetProcessHandleCount: %d handles, %v", n, err)
	}
	return int(n), nil
}
