// Package policy is the deployment's access rules, as pure logic: which
// upstream tools a subject (client name and endpoint) may see and call, which
// need approval, and which upstreams' resources, resource templates, prompts
// and completions it may see and read (SPEC §6; seed tools-and-plugins.ja.txt,
// sections "許可リストと拒否リスト", "Tool プロファイル", "Tool グループ" and
// "プロバイダー固有の制限", mapped onto upstream MCP servers).
//
// It does no I/O and imports nothing of this project: `config` runs Validate
// to report problems with file and line, and `proxy` compiles the same Spec
// and asks a View for every decision. One glob dialect (Match) and one case
// rule (everything is case-insensitive: entries, group, profile, upstream
// names and by_client patterns) hold everywhere.
//
// # Entries
//
// Every list (allow, deny, also_allow, require_approval, a profile's allow
// and deny, a group's members) holds entries of four kinds:
//
//   - an exposed name ("github__create_issue") or a catalog id
//     ("mcp:github:create_issue"), matched literally;
//   - a glob: an entry containing '*' or '?' (see Match), matched against
//     the exposed name, the id and the base name ("github__*",
//     "*__delete_*", "mcp:github:*");
//   - "group:<upstream>": every tool of that upstream;
//   - "group:<name>": a group defined under [groups]; its members are
//     entries of the same kinds and may name other groups. A cycle is an
//     error.
//
// Matching looks at Tool.Exposed, Tool.Base (the exposed name before a clash
// or length suffix) and Tool.ID, so a rule written for "gh__delete_repo"
// keeps holding when a later clash renames that tool "gh__delete_repo_4d3cee".
// Entries of deny lists and require_approval also match Tool.Name, the
// tool's name on its upstream (it may be shared by several upstreams: a
// deny then keeps all of them away, which is safe; an allow entry never
// matches it, as it would open them all).
// Two [groups] or [profiles] keys that differ only in case, a group named
// like an upstream, and a profile named "full" or "minimal" are errors.
//
// # Layers
//
// The rules for one subject are a stack of layers, applied in this order:
//
//  1. "tools": the deployment's [tools] table;
//  2. "endpoints.NAME.tools": the HTTP endpoint the client came through, if any;
//  3. `tools.by_client."PATTERN"`: every by_client table whose key matches the
//     client's clientInfo.name (glob), from the least specific to the most
//     specific. Specificity: an exact key (no '*' or '?') beats any glob;
//     among globs a longer key beats a shorter one; equal lengths are ordered
//     by key. Because later layers override, the most specific matching key
//     wins for profile and allow.
//
// A layer's profile, if set, replaces the profile chosen so far; its allow
// list, if non-nil (even empty), replaces the allow list chosen so far; its
// deny and also_allow entries add to those of earlier layers.
//
// # Decision for one tool
//
//  1. If any deny entry of any layer matches, the tool is denied. Deny always
//     wins (seed: 拒否は常に許可より優先されます).
//  2. Else, if some layer set an allow list, the tool is allowed iff the
//     effective allow list or any also_allow entry matches it. The profile is
//     then not consulted, so direct-only tools must be allowed explicitly too.
//  3. Else the effective profile (default "full") is the base allow list:
//     "full" allows every tool; "minimal" allows only direct-only tools; a
//     [profiles.NAME] allows what its allow list matches minus what its own
//     deny list matches (that deny only trims the base: also_allow can add
//     such a tool back, unlike tools.deny). also_allow adds to the profile.
//
// A tool that is allowed and matches [tools] require_approval needs approval
// (Decision.NeedsApproval). Denied tools never need approval: they are hidden.
//
// # Resources, prompts and completions
//
// They are decided per upstream (View.Features): hidden when a deny entry
// covers the whole upstream, visible when any of its tools is allowed, and
// otherwise decided by the entries that cover the whole upstream.
//
// # Fail closed
//
// Check refuses a subject whose explicit allow list resolves to no callable
// tool (seed: フェイルクローズ), naming each allow/also_allow entry that
// matched nothing, and a subject with a literal deny entry that matches no
// tool (DenyMissError, naming the tools it may have meant; CheckPending
// makes that a warning while some upstream's tools are not known); for a
// subject that resolves, it returns warnings naming the entries that
// matched nothing. An unknown endpoint denies everything. Policy.Closed
// denies every tool and feature of the upstreams a caller closes (the
// proxy closes the one a DenyMiss names once it is serving).
//
// Decision.Rule strings have the form
//
//	allowed by tools.allow "github__*"
//	denied by tools.by_client."cursor*".deny "*__delete_*"
//	allowed by tools.allow "group:readonly" (via "github__get_*")
//	allowed by tools.profile "minimal" (direct-only tool)
//	allowed by profile "full" (default)
//	denied: not matched by endpoints.team-a.tools.allow
//
// so `mcp-toolsearch list` can print, for each tool, the rule that decided it.
package policy
