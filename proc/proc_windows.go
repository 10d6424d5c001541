package proc

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sysProc is the Windows part of a Process: its Job Object.
type sysProc struct{ job windows.Handle }

// sysProcAttr: created suspended (it joins its job before it runs a single
// instruction, so nothing it starts can escape), in a new process group
// (a Ctrl+C in the proxy's console does not reach it).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP}
}

func startCmd(cmd *exec.Cmd) error { return cmd.Start() }

var ntResumeProcess = windows.NewLazySystemDLL("ntdll.dll").NewProc("NtResumeProcess")

// afterStart creates the child's Job Object (kill on close, plus l), puts
// the suspended child in it and resumes it.
func (s *sysProc) afterStart(pid int, l Limits) error {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return fmt.Errorf("creating a job object: %w", err)
	}
	s.job = job
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	flags := uint32(windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE)
	if l.MemoryBytes > 0 {
		flags |= windows.JOB_OBJECT_LIMIT_PROCESS_MEMORY
		info.ProcessMemoryLimit = uintptr(l.MemoryBytes)
	}
	if l.CPUSeconds > 0 {
		flags |= windows.JOB_OBJECT_LIMIT_PROCESS_TIME
		info.BasicLimitInformation.PerProcessUserTimeLimit = int64(l.CPUSeconds) * 10_000_000 // 100 ns units
	}
	if l.Processes > 0 {
		flags |= windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS
		info.BasicLimitInformation.ActiveProcessLimit = uint32(l.Processes)
	}
	info.BasicLimitInformation.LimitFlags = flags
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		return fmt.Errorf("setting the job object's limits: %w", err)
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.PROCESS_SUSPEND_RESUME, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("opening the child process: %w", err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		return fmt.Errorf("assigning the child to its job object: %w", err)
	}
	if err := ntResumeProcess.Find(); err != nil {
		return fmt.Errorf("resuming the child: %w", err)
	}
	if st, _, _ := ntResumeProcess.Call(uintptr(h)); st != 0 {
		return fmt.Errorf("resuming the child: NtResumeProcess status %#x", st)
	}
	return nil
}

// killExitCode is the exit code of every process of a job the proxy
// terminates: 137, the code a shell gives a process killed by SIGKILL
// (128+9), so that it reads as a kill to operators and endedBy can tell it
// from an exit with status 1 (it used to be 1).
const killExitCode = 137

// kill terminates every process in the job.
func (s *sysProc) kill(int) {
	if s.job != 0 {
		_ = windows.TerminateJobObject(s.job, killExitCode)
	}
}

// endedBy tells whether the reaped state is the proxy's doing: the job
// terminated by a kill (exit code killExitCode). Windows has no stop
// request, so only "killed".
func endedBy(ps *os.ProcessState, a asked) (verb, how string, ok bool) {
	if !a.kill || ps.ExitCode() != killExitCode {
		return "", "", false
	}
	return "killed", fmt.Sprintf("its job was terminated (exit code %d)", killExitCode), true
}

// termNote: Windows sends no SIGTERM before the kill.
func termNote(time.Duration) string { return "" }

// terminate: Windows has no request-to-stop for a console-less child; Stop
// goes on to kill.
func (s *sysProc) terminate(int) bool { return false }

// awaitExit: the job, not a pid, names the tree, so killing it after the
// reap is safe; nothing to wait for here.
func (s *sysProc) awaitExit(int) bool { return false }

// release closes the job handle (kill-on-close ends whatever is left).
func (s *sysProc) release() {
	if s.job != 0 {
		_ = windows.CloseHandle(s.job)
		s.job = 0
	}
}
