package proxy

import "errors"

// ReopenLogs opens the files the proxy appends to again — the session log
// ([telemetry] session_log) and the audit log ([audit] file) — so that
// logrotate's default `create` (rename, then a new file) works: records go
// to the file now at each path. The audit file's new chain starts with a
// "rotate" line continuing the previous file's (audit.Writer.Reopen). The
// CLI calls it on SIGUSR1 (Unix); the server log is stderr and is not a
// file of the proxy's. Errors name the file; a file that cannot be reopened
// keeps being written where it was.
func (p *Proxy) ReopenLogs() error {
	var errs []error
	if err := p.rec.Reopen(); err != nil {
		errs = append(errs, err)
	}
	if p.idn != nil {
		if err := p.idn.audit.Reopen(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
