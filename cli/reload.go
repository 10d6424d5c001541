package cli

// Reload of a serving proxy: triggers and the re-read of
// the config file. Triggers: SIGHUP (Unix; reload_unix.go) and, with
// [server] watch_config = true, any change of the config file (fsnotify on
// its folder, so editors that replace the file by renaming are seen; events
// within 300 ms make one reload). An invalid file is refused with the same
// file:line problems as at start and the running config stays; see
// proxy/reload.go for what a valid one changes.

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
	"github.com/mcp-toolsearch/mcp-toolsearch/proxy"
)

// watchReload starts the reload triggers of a serving proxy; the returned
// func stops them. hup receives the reload signals (reloadSignals; the
// caller registered it with signal.Notify before the proxy started, so a
// signal sent during the start is kept, and stops it).
func (c *common) watchReload(ctx context.Context, p *proxy.Proxy, log *slog.Logger, hup chan os.Signal) func() {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	trigger := make(chan string, 1)
	fire := func(why string) {
		select {
		case trigger <- why:
		default: // one is pending already
		}
	}
	if hup != nil && len(reloadSignals()) > 0 {
		ch := hup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case s := <-ch:
					fire("signal " + s.String())
				}
			}
		}()
	}
	if p.Config().Server.WatchConfig {
		if w, err := fsnotify.NewWatcher(); err != nil {
			log.Error("server.watch_config: cannot watch the config file", "err", err)
		} else if err := w.Add(filepath.Dir(c.config)); err != nil {
			log.Error("server.watch_config: cannot watch the config file's folder", "err", err)
			w.Close()
		} else {
			base := filepath.Base(c.config)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer w.Close()
				var debounce *time.Timer
				for {
					select {
					case <-ctx.Done():
						if debounce != nil {
							debounce.Stop()
						}
						return
					case ev, ok := <-w.Events:
						if !ok {
							return
						}
						if filepath.Base(ev.Name) != base || ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Rename) == 0 {
							continue
						}
						if debounce != nil {
							debounce.Stop()
						}
						debounce = time.AfterFunc(300*time.Millisecond, func() { fire("config file changed") })
					case err, ok := <-w.Errors:
						if !ok {
							return
						}
						log.Warn("server.watch_config: watcher error", "err", err)
					}
				}
			}()
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case why := <-trigger:
				c.reload(ctx, p, log, why)
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}

// reload re-reads the config file and applies it to p, or logs why not.
func (c *common) reload(ctx context.Context, p *proxy.Proxy, log *slog.Logger, why string) {
	start := time.Now()
	next, err := config.Load(c.config)
	if err != nil {
		log.Error("reload refused: invalid config; the running config stays", "trigger", why, "problems", err.Error())
		p.AuditReload(false, "invalid config ("+why+"): "+err.Error()) // refused reloads are audit lines too
		return
	}
	if err := c.overrideMode(next); err != nil {
		log.Error("reload refused", "err", err)
		p.AuditReload(false, "("+why+"): "+err.Error())
		return
	}
	if c.serverOverrides != nil {
		c.serverOverrides(next)
	}
	for _, w := range next.AllWarnings() {
		log.Warn(w)
	}
	// The logger hides the secrets of both configs: the new one's from
	// now on (new upstreams start), the old one's while its upstreams stop.
	prev := c.redact.Load()
	both := func(s string) string { return next.Redact((*prev)(s)) }
	c.redact.Store(&both)
	rep, err := p.Reload(ctx, next)
	if err != nil {
		c.redact.Store(prev)
		log.Error("reload refused; the running config stays", "trigger", why, "err", err)
		return
	}
	cur := func(s string) string { return next.Redact(s) }
	time.AfterFunc(time.Minute, func() { c.redact.CompareAndSwap(&both, &cur) })
	log.Info("config reloaded", "trigger", why, "added", strings.Join(rep.Added, ","), "removed", strings.Join(rep.Removed, ","),
		"restarted", strings.Join(rep.Changed, ","), "policy_changed", rep.Policy, "mode", rep.Mode, "ms", time.Since(start).Milliseconds())
	if len(rep.NeedsRestart) > 0 {
		log.Warn("reload: these changes need a restart and were not applied", "keys", strings.Join(rep.NeedsRestart, ", "))
	}
}

// reopenLogsOn reopens the proxy's log files (proxy.ReopenLogs) on each
// signal from ch (reopenSignals), until the returned func is called.
func reopenLogsOn(ctx context.Context, p *proxy.Proxy, log *slog.Logger, ch chan os.Signal) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-ch:
				if err := p.ReopenLogs(); err != nil {
					log.Error("log files: reopen failed", "signal", s.String(), "err", err)
				} else {
					log.Info("log files reopened", "signal", s.String())
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}
