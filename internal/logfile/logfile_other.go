//go:build !windows

package logfile

import "os"

func openAppend(path string, readable bool) (*os.File, error) {
	flag := os.O_WRONLY
	if readable {
		flag = os.O_RDWR
	}
	return os.OpenFile(path, flag|os.O_APPEND|os.O_CREATE, 0o600)
}
