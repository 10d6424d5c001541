package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-toolsearch/mcp-toolsearch/catalog"
	"github.com/mcp-toolsearch/mcp-toolsearch/proc"
	"github.com/mcp-toolsearch/mcp-toolsearch/redact"
)

// Approval: a call blocked by policy or by a missing approval says that
// it was blocked, and nothing runs the tool around the block.
//
// A call of a tool matched by [tools] require_approval runs only after a
// person said yes:
//
//   - The calling client declared the elicitation capability (MCP spec
//     2025-06-18, "Elicitation"): the proxy sends it an elicitation/create
//     request in form mode, on the same session and (for Streamable HTTP)
//     the same request stream as the call. The message names the tool id,
//     the upstream, the tool and the matching rule, and carries a bounded
//     summary of the arguments (approvalSummary). The requested schema has
//     one required boolean field, "approve". The call runs only when the
//     answer is action "accept" with approve = true; decline, cancel,
//     approve = false, an error or no answer within tools.approval_timeout
//     block it.
//   - The client did not declare elicitation, or the call comes from the
//     CLI (no client session): tools.approval_command decides (see
//     runApprovalCommand). Without an approval_command the call is blocked
//     (fail closed).
//
// A blocked call never reaches the upstream. Its answer is an isError result
// whose text says the call was blocked by approval and why, with
// _meta[MetaKeyBlocked] = "approval" (telemetry outcome "blocked_approval").

// Bounds of what approvals show and read.
const (
	// approvalSummaryMax is the most runes of the argument summary shown in
	// the elicitation message.
	approvalSummaryMax = 300
	// approvalValueMax is the most runes one argument value takes in it.
	approvalValueMax = 80
	// approvalStdoutMax is the most bytes of approval_command stdout read.
	approvalStdoutMax = 4096
	// approvalStderrMax is the most bytes of approval_command stderr logged.
	approvalStderrMax = 2048
)

// approvalSchema is the elicitation's requested schema: one required
// boolean. go-sdk v1.8.0 (ServerSession.Elicit) validates the client's
// content against it, and the MCP spec limits form schemas to flat
// primitive properties, which this is.
var approvalSchema = json.RawMessage(`{"type":"object","properties":{"approve":{"type":"boolean","title":"Approve this call","description":"true runs the call; false blocks it"}},"required":["approve"]}`)

// approve asks for approval of a call matched by tools.require_approval
// (rule names the matching entry, e.g. `tools.require_approval "*__delete_*"`).
// It returns (nil, nil) when the call may run; otherwise the blocked result
// to give the caller, and the upstream never sees the call.
func (p *Proxy) approve(ctx context.Context, s *session, e *catalog.Entry, args json.RawMessage, rule string) (*mcp.CallToolResult, error) {
	var reason string
	var ok bool
	if d, resumed := resumedDecision(ctx, e, args, rule); resumed { // resume.go: answered in the retry
		ok, reason = d.OK, d.Reason
		if ok {
			p.log.Info("call approved", "id", e.ID, "client", s.client, "by", reason+" (resumed)")
			return nil, nil
		}
		p.log.Warn("call blocked by approval", "id", e.ID, "client", s.client, "reason", reason)
		return blockedByApproval(e, rule, reason), nil
	}
	switch {
	case s.ss != nil && clientElicits(s.ss):
		var handedOff bool
		ok, reason, handedOff = p.elicitApproval(ctx, s, e, args, rule)
		if handedOff {
			return nil, errHandedOff
		}
	case len(p.conf().Tools.ApprovalCommand) > 0:
		ok, reason = p.runApprovalCommand(ctx, s, e, args, rule)
	case s.ss != nil:
		reason = "the client does not support elicitation and no tools.approval_command is configured"
	default:
		reason = "there is no client to ask and no tools.approval_command is configured"
	}
	if ok {
		p.log.Info("call approved", "id", e.ID, "client", s.client, "by", reason)
		return nil, nil
	}
	p.log.Warn("call blocked by approval", "id", e.ID, "client", s.client, "reason", reason)
	return blockedByApproval(e, rule, reason), nil
}

// approvalTimeout is tools.approval_timeout (config default 60s; the same
// default when a Config was built without defaults).
func (p *Proxy) approvalTimeout() time.Duration {
	if d := p.conf().Tools.ApprovalTimeout.Duration; d > 0 {
		return d
	}
	return 60 * time.Second
}

// blockedByApproval is the result of a call that approval blocked.
func blockedByApproval(e *catalog.Entry, rule, reason string) *mcp.CallToolResult {
	text := fmt.Sprintf("call to %s was blocked by approval (%s): %s. The upstream %q did not receive it.", e.ID, rule, reason, e.Upstream)
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: text}},
		Meta:    mcp.Meta{MetaKeyBlocked: "approval"},
	}
}

// clientElicits reports whether the client declared the elicitation
// capability in initialize (form mode, or no mode: the MCP spec's
// backward-compatible reading of an empty object).
func clientElicits(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return false
	}
	el := ip.Capabilities.Elicitation
	return el.Form != nil || el.URL == nil
}

// elicitApproval asks the calling client's person. ok is true only for
// accept with approve = true; reason says what happened, for the result
// text and the log. handedOff: the question went to a 2026-07-28 client in
// a resumable requestState (resume.go), and the call ends here.
func (p *Proxy) elicitApproval(ctx context.Context, s *session, e *catalog.Entry, args json.RawMessage, rule string) (ok bool, reason string, handedOff bool) {
	timeout := p.approvalTimeout()
	msg := fmt.Sprintf("Approve this tool call?\nTool: %s (upstream %q, tool %q), required by %s.\nArguments: %s",
		e.ID, e.Upstream, e.Name, rule, approvalSummary(args))
	q := &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: approvalSchema}
	if p.handOffApproval(ctx, s, e, args, rule, q) {
		return false, "", true
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var res *mcp.ElicitResult
	r, err := askClient(ctx, s, q) // exchange.go
	if err == nil {
		res = r.(*mcp.ElicitResult)
	}
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return false, fmt.Sprintf("no answer to the approval request within tools.approval_timeout (%s)", timeout), false
	case err != nil:
		return false, "the approval request failed: " + bounded(err.Error(), 300), false
	case res == nil:
		return false, "the approval request got no answer", false
	}
	ok, reason = approvalAnswer(res)
	return ok, reason, false
}

// approvalAnswer reads the person's answer to the approval question.
func approvalAnswer(res *mcp.ElicitResult) (ok bool, reason string) {
	switch res.Action {
	case "accept":
		if v, _ := res.Content["approve"].(bool); v {
			return true, "the person accepted"
		}
		return false, "the person answered approve = false"
	case "decline":
		return false, "the person declined"
	case "cancel":
		return false, "the person cancelled"
	}
	return false, fmt.Sprintf("the approval answer had the unknown action %q", bounded(res.Action, 40))
}

// ApprovalRequest is the JSON document tools.approval_command receives on
// stdin: the call to approve. Arguments are the call's full arguments as
// the upstream would receive them.
type ApprovalRequest struct {
	ID        string          `json:"id"`       // catalog id, e.g. "mcp:github:delete_repo"
	Upstream  string          `json:"upstream"` // upstream name from the config
	Tool      string          `json:"tool"`     // the upstream's original tool name
	Exposed   string          `json:"exposed"`  // exposed name, e.g. "github__delete_repo"
	Client    string          `json:"client"`   // clientInfo.name ("" for the CLI)
	Endpoint  string          `json:"endpoint"` // [endpoints.NAME] ("" = main)
	Rule      string          `json:"rule"`     // the require_approval entry that matched
	Arguments json.RawMessage `json:"arguments"`
}

// runApprovalCommand runs tools.approval_command (argv) with the call as an
// ApprovalRequest on stdin. The first word of its stdout, compared
// case-insensitively, decides: "allow" runs the call, "deny" blocks it.
// Anything else blocks it too: a start failure, a non-zero exit, another
// word, or no exit within tools.approval_timeout (its process group is then
// killed). At most approvalStderrMax bytes of its stderr are logged.
func (p *Proxy) runApprovalCommand(ctx context.Context, s *session, e *catalog.Entry, args json.RawMessage, rule string) (ok bool, reason string) {
	argv := p.conf().Tools.ApprovalCommand
	timeout := p.approvalTimeout()
	in, err := json.Marshal(ApprovalRequest{ID: e.ID, Upstream: e.Upstream, Tool: e.Name, Exposed: e.Exposed, Client: s.client, Endpoint: s.endpoint, Rule: rule, Arguments: args})
	if err != nil {
		return false, "encoding the approval request: " + err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Started by package proc: its own process group (job on Windows),
	// killed whole on timeout and when it exits, always reaped. It inherits
	// the proxy's environment.
	stdout := &capWriter{max: approvalStdoutMax}
	child, runErr := proc.Start(proc.Spec{
		Path: argv[0], Args: argv[1:],
		Stdin: bytes.NewReader(in), Stdout: stdout,
		StderrKeep: approvalStderrMax,
	})
	if runErr == nil {
		select {
		case <-child.Done():
		case <-ctx.Done():
			child.KillFor("tools.approval_timeout exceeded")
			<-child.Done()
		}
		runErr = child.Err()
		if se := strings.TrimSpace(child.Stderr()); se != "" {
			p.log.Info("approval_command stderr", "id", e.ID, "stderr", se)
		}
	}
	name := fmt.Sprintf("tools.approval_command %q", argv[0])
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return false, fmt.Sprintf("%s gave no answer within tools.approval_timeout (%s)", name, timeout)
	case runErr != nil:
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			return false, fmt.Sprintf("%s failed: %s", name, ee.ProcessState.String())
		}
		return false, fmt.Sprintf("%s could not run: %s", name, bounded(runErr.Error(), 300))
	}
	word := ""
	if f := strings.Fields(stdout.String()); len(f) > 0 {
		word = strings.ToLower(f[0])
	}
	switch word {
	case "allow":
		return true, name + " answered allow"
	case "deny":
		return false, name + " answered deny"
	case "":
		return false, name + " answered nothing (want allow or deny)"
	}
	return false, fmt.Sprintf("%s answered %q (want allow or deny)", name, bounded(word, 40))
}

// capWriter keeps the first max bytes written and discards the rest (the
// writer never fails, so a chatty program is not killed by a closed pipe).
type capWriter struct {
	max int
	b   bytes.Buffer
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.b.Len(); room > 0 {
		w.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (w *capWriter) String() string { return w.b.String() }

var _ io.Writer = (*capWriter)(nil)

// approvalSummary renders a call's arguments for the person approving it:
// "key: value, key: value" with keys sorted, each value compact JSON cut
// to approvalValueMax runes, the whole cut to approvalSummaryMax runes.
// Values of keys that look secret (redact.IsSecretKey), at any depth, are shown as
// "***". Arguments that are not a JSON object are shown as bounded JSON.
func approvalSummary(args json.RawMessage) string {
	var v any
	if len(bytes.TrimSpace(args)) == 0 || json.Unmarshal(args, &v) != nil {
		return bounded(string(args), approvalSummaryMax)
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return bounded(compactJSON(redact.Value(v, nil)), approvalSummaryMax)
	}
	if len(obj) == 0 {
		return "(none)"
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		val := "***"
		if !redact.IsSecretKey(k) {
			val = bounded(compactJSON(redact.Value(obj[k], nil)), approvalValueMax)
		}
		parts = append(parts, bounded(k, 40)+": "+val)
	}
	return bounded(strings.Join(parts, ", "), approvalSummaryMax)
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// bounded cuts s to at most n runes, ending with "…" when cut; invalid
// UTF-8 is replaced.
func bounded(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
